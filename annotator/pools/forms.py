"""Forms of the pools pages: freeze, start a new version, import a judgments file."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import Pool, Project
from annotator.pools.files import EXPORT_FORMATS, parse_grade_map
from annotator.pools.services import PoolImportError
from annotator.web.uploads import UploadForm, within_limit
from evaluation.formats.registry import detect_format, qrels_name


class FreezeForm(forms.Form):
    # No browser `required` bubble: it speaks the browser's language, not the app's. The server
    # refuses an unticked box with the message below, in the reader's language.
    use_required_attribute = False

    exclude_unsettled = forms.BooleanField(
        label=_("Leave out the pairs listed above (open disputes, no final grade) and record why"),
        required=False,
    )
    reason = forms.CharField(
        label=_("Reason for leaving them out"),
        required=False,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=_("Recorded in the version beside every excluded pair."),
    )
    # FreezePreview.blockers_key of the list the page showed (see pool_freeze).
    blockers_seen = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)
    confirm = forms.BooleanField(
        label=_("I understand that a frozen version can never be changed, only followed by a new version"),
        error_messages={"required": _("Tick the box to confirm: freezing cannot be undone.")},
        widget=forms.CheckboxInput(attrs={"aria-required": "true"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("exclude_unsettled") and not (data.get("reason") or "").strip():
            self.add_error(
                "reason", _("Say why these pairs are left out: the reason is recorded in the version.")
            )
        return data


class ContinueForm(forms.Form):
    use_required_attribute = False  # as on FreezeForm: the server's message, in the app's language

    name = forms.CharField(
        label=_("Name of the new grading set"),
        max_length=190,
        required=False,
        help_text=_("Leave empty for “pool name vN”."),
    )
    confirm = forms.BooleanField(
        label=_("Create the grading set with every pair and final grade of this version copied"),
        error_messages={"required": _("Tick the box to confirm.")},
        widget=forms.CheckboxInput(attrs={"aria-required": "true"}),
    )


class PoolImportForm(UploadForm):
    file = forms.FileField(
        label=_("Judgments file"),
        help_text=_("TREC qrels, CSV or JSONL, UTF-8; or a zip exported here (data file + manifest.json)."),
    )
    format = forms.ChoiceField(
        label=_("Format"),
        choices=[("auto", _("From the file name: .csv, .jsonl, anything else TREC qrels"))]
        + list(EXPORT_FORMATS.items()),
        initial="auto",
    )
    pool = forms.ModelChoiceField(
        label=_("Add as the next version of"),
        queryset=Pool.objects.none(),
        required=False,
        empty_label=_("A new pool (name it below)"),
    )
    pool_name = forms.CharField(label=_("New pool name"), max_length=200, required=False)
    grade_map = forms.CharField(
        label=_("Grade map"),
        required=False,
        max_length=200,
        help_text=_(
            "Only when the file has grades outside 0..3: e.g. “-1:0,4:3” turns -1 into 0 and 4 into 3."
        ),
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast("forms.ModelChoiceField[Pool]", self.fields["pool"]).queryset = Pool.objects.in_project(
            project
        ).order_by("name")

    def clean_file(self) -> Any:
        return within_limit("pools", self.cleaned_data["file"])

    def clean_grade_map(self) -> dict[int, int]:
        try:
            return parse_grade_map(self.cleaned_data.get("grade_map", ""))
        except PoolImportError as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        upload = data.get("file")
        if data.get("format") == "auto" and upload is not None:
            data["format"] = qrels_name(detect_format(upload.name, kind="qrels"))
        if (
            data.get("pool") is None
            and not (data.get("pool_name") or "").strip()
            and "pool" not in self.errors
        ):
            self.add_error("pool_name", _("Name the new pool, or choose an existing pool above."))
        elif data.get("pool") is not None and (data.get("pool_name") or "").strip():
            # Both: refused, not one silently dropped. Which one was meant is not ours to guess.
            self.add_error(
                "pool_name",
                _(
                    "A name is for a new pool, but %(pool)s is chosen above: clear the name, or choose “A "
                    "new pool”."
                )
                % {"pool": data["pool"].name},
            )
        return data
