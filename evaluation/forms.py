"""Forms of the runs and comparisons pages. Every choice list is scoped to the request's project."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from annotator.models import PoolVersion, Project
from annotator.projects.forms import DigitsIntegerField
from annotator.web.uploads import UploadForm, upload_bytes, within_limit
from evaluation import metrics
from evaluation.formats.registry import detect_format
from evaluation.metrics.policies import MAX_BREAKDOWN_K, MAX_SEED
from evaluation.models import (
    PASTED_FILE_NAME,
    Comparison,
    ExtraQueriesPolicy,
    Gain,
    MissingQueriesPolicy,
    Run,
    RunFormat,
    TiesPolicy,
    UnjudgedPolicy,
    ZeroIdcgPolicy,
)

MAX_K = MAX_BREAKDOWN_K  # every comparison's query page shows the breakdown, K rows per table


def count_of_queries(n: int) -> str:
    return ngettext("%(count)s query", "%(count)s queries", n) % {"count": n}


class PoolVersionChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: PoolVersion) -> str:
        counts = obj.counts or {}
        judgments = int(counts.get("judgments", 0))
        return _("%(pool)s v%(number)s · %(queries)s, %(judgments)s · SHA-256 %(hash)s…") % {
            "pool": obj.pool.name,
            "number": obj.number,
            "queries": count_of_queries(int(counts.get("queries", 0))),
            "judgments": ngettext("%(count)s judgment", "%(count)s judgments", judgments)
            % {"count": judgments},
            "hash": obj.sha256[:12],
        }


class RunChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Run) -> str:
        return _("%(name)s · %(file)s · %(queries)s") % {
            "name": obj.name,
            "file": obj.file_name,
            "queries": count_of_queries(obj.query_count),
        }


def pool_versions_of(project: Project) -> Any:
    return (
        PoolVersion.objects.filter(pool__project=project)
        .select_related("pool")
        .defer("canonical")
        .order_by("pool__name", "-number")
    )


def _policy_fields(form: forms.Form, *, with_scoring: bool) -> None:
    """The settings fields shared by the run check and the comparison, defaults = the contract's."""
    form.fields["k"] = DigitsIntegerField(
        label="K",
        min_value=1,
        max_value=MAX_K,
        initial=10,
        help_text=_("Positions scored: a positive whole number. IDCG still comes from the whole pool."),
    )
    if with_scoring:
        form.fields["gain"] = forms.ChoiceField(label=_("Gain"), choices=Gain.choices, initial=Gain.LINEAR)
    form.fields["unjudged"] = forms.ChoiceField(
        label=_("Unjudged IDs"), choices=UnjudgedPolicy.choices, initial=UnjudgedPolicy.ERROR
    )
    if with_scoring:
        form.fields["zero_idcg"] = forms.ChoiceField(
            label=_("Queries with zero IDCG"), choices=ZeroIdcgPolicy.choices, initial=ZeroIdcgPolicy.ZERO
        )
    form.fields["ties"] = forms.ChoiceField(
        label=_("Tied scores"),
        choices=TiesPolicy.choices,
        initial=TiesPolicy.ERROR,
        help_text=_("Only runs with scores can tie; ordered lists are ranked as given."),
    )
    form.fields["missing_queries"] = forms.ChoiceField(
        label=_("Pool queries missing from a run"),
        choices=MissingQueriesPolicy.choices,
        initial=MissingQueriesPolicy.ZERO,
    )
    form.fields["extra_queries"] = forms.ChoiceField(
        label=_("Run queries not in the pool"),
        choices=ExtraQueriesPolicy.choices,
        initial=ExtraQueriesPolicy.ERROR,
    )


class RunUploadForm(UploadForm):
    name = forms.CharField(label=_("Name"), max_length=200, help_text=_("The system, e.g. “bm25 baseline”."))
    notes = forms.CharField(label=_("Notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    format = forms.ChoiceField(
        label=_("Format"),
        choices=[
            ("auto", _("Detect (.csv → CSV, .jsonl → JSONL, pasted text → ordered IDs, else TREC)")),
            *RunFormat.choices,
        ],
        initial="auto",
    )
    file = forms.FileField(label=_("Run file"), required=False)
    text = forms.CharField(
        label=_("…or paste ordered IDs per query"),
        required=False,
        strip=False,
        widget=forms.Textarea(
            attrs={
                "rows": 5,
                "placeholder": "q1: doc-7, doc-2, doc-9\nq2: doc-4, doc-1",
                "spellcheck": "false",
            }
        ),
        help_text=_(
            "One query per line: the query ID, a colon, then document IDs in rank order, separated by commas."
        ),
    )
    check_against = PoolVersionChoiceField(
        label=_("Check against pool version"),
        queryset=PoolVersion.objects.none(),
        required=False,
        empty_label=_("Do not check now (a comparison checks it later)"),
        help_text=_(
            "Refuses the upload if the run breaks the policies below on this pool: duplicates, "
            "unjudged IDs, ties, missing or extra queries."
        ),
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.project = project
        versions = pool_versions_of(project)
        cast(PoolVersionChoiceField, self.fields["check_against"]).queryset = versions
        # The newest version is proposed only when the project has one pool: with several, a guess
        # checks a run against another pool's queries and refuses it for a choice nobody made.
        unasked = not self.is_bound and not self.initial.get("check_against")
        if unasked and versions.values("pool").distinct().count() == 1:
            latest = versions.order_by("-frozen_at", "-pk").first()
            self.fields["check_against"].initial = latest.pk if latest else None
        _policy_fields(self, with_scoring=False)

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if Run.objects.filter(project=self.project, name=name).exists():
            raise ValidationError(
                _("A run named “%(name)s” already exists in this project; choose another name."),
                params={"name": name},
            )
        return name

    def clean_file(self) -> Any:
        upload = self.cleaned_data.get("file")
        return upload if upload is None else within_limit("runs", upload)

    def clean(self) -> dict[str, Any]:
        # Form.clean() returns cleaned_data; the stubs allow None only for overriding subclasses.
        data = cast("dict[str, Any]", super().clean())
        has_file = data.get("file") is not None
        has_text = bool((data.get("text") or "").strip())
        if has_file and has_text:
            raise ValidationError(_("Upload a file or paste the rankings, not both."))
        if not has_file and not has_text and "file" not in self.errors:
            raise ValidationError(_("Choose a run file or paste the rankings."))
        return data

    def payload(self) -> tuple[str, bytes, str]:
        """(file name, bytes exactly as received, format)."""
        upload = self.cleaned_data.get("file")
        fmt = self.cleaned_data["format"]
        if upload is not None:
            data = upload_bytes(upload)
            name = upload.name or "run.txt"
            return name, data, detect_format(name, fmt, kind="run")
        text = self.cleaned_data["text"]
        return PASTED_FILE_NAME, text.encode("utf-8"), RunFormat.LISTS if fmt == "auto" else fmt

    def check(self) -> tuple[PoolVersion, metrics.Settings] | None:
        version = self.cleaned_data.get("check_against")
        if version is None:
            return None
        # This form has no gain, zero-IDCG or seed fields: those keep the contract's defaults.
        return version, metrics.Settings.from_mapping(self.cleaned_data)


class ComparisonForm(forms.Form):
    name = forms.CharField(
        label=_("Name"), max_length=200, required=False, help_text=_("Empty: “run A vs run B”.")
    )
    notes = forms.CharField(label=_("Notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    pool_version = PoolVersionChoiceField(label=_("Frozen pool version"), queryset=PoolVersion.objects.none())
    run_a = RunChoiceField(label=_("Run A (baseline)"), queryset=Run.objects.none())
    run_b = RunChoiceField(label=_("Run B (candidate)"), queryset=Run.objects.none())

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.project = project
        cast(PoolVersionChoiceField, self.fields["pool_version"]).queryset = pool_versions_of(project)
        runs = Run.objects.in_project(project).listing().order_by("name")
        cast(RunChoiceField, self.fields["run_a"]).queryset = runs
        cast(RunChoiceField, self.fields["run_b"]).queryset = runs
        _policy_fields(self, with_scoring=True)
        self.fields["seed"] = DigitsIntegerField(
            label=_("Random seed"),
            min_value=0,
            max_value=MAX_SEED,
            initial=0,
            help_text=_(
                "Drives the randomization test and the bootstrap: the same seed gives the same p and "
                "interval."
            ),
        )

    def clean(self) -> dict[str, Any]:
        # Form.clean() returns cleaned_data; the stubs allow None only for overriding subclasses.
        data = cast("dict[str, Any]", super().clean())
        run_a, run_b = data.get("run_a"), data.get("run_b")
        if run_a is not None and run_b is not None and run_a.pk == run_b.pk:
            self.add_error("run_b", _("Choose two different runs: a run compared with itself tells nothing."))
        return data

    def settings(self) -> metrics.Settings:
        return metrics.Settings.from_mapping(self.cleaned_data)


class WhatIfForm(forms.Form):
    """K and gain for the per-query breakdown: re-scores one query, never the saved comparison."""

    query = forms.CharField(label=_("Query ID"), max_length=255)
    k = DigitsIntegerField(label="K", min_value=1, max_value=MAX_K, required=False)
    gain = forms.ChoiceField(label=_("Gain"), choices=Gain.choices, required=False)

    def __init__(self, *args: Any, comparison: Comparison, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
        self.fields["k"].initial = comparison.k
        self.fields["gain"].initial = comparison.gain


class QueryTableForm(forms.Form):
    """Filters of the per-query table (GET). Invalid values fall back to the defaults."""

    search = forms.CharField(label=_("Query ID contains"), required=False, max_length=255)
    show = forms.ChoiceField(
        label=_("Show"),
        required=False,
        choices=[
            ("all", _("all queries")),
            ("regressions", _("regressions (B < A)")),
            ("improvements", _("improvements (B > A)")),
            ("ties", _("ties (B = A)")),
            ("excluded", _("excluded (zero IDCG)")),
        ],
    )
    sort = forms.ChoiceField(
        label=_("Order"),
        required=False,
        choices=[
            ("delta", _("largest regression first")),
            ("-delta", _("largest improvement first")),
            ("query", _("query ID")),
            ("a", _("NDCG of A, lowest first")),
            ("b", _("NDCG of B, lowest first")),
        ],
    )

    def values(self) -> dict[str, str]:
        if not self.is_valid():
            return {"search": "", "show": "all", "sort": "delta"}
        d = self.cleaned_data
        return {"search": d["search"].strip(), "show": d["show"] or "all", "sort": d["sort"] or "delta"}
