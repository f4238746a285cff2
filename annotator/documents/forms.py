"""Forms of the documents area: search, criteria and document/query imports."""

from __future__ import annotations

from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.models import CriteriaChange, CriteriaVersion
from annotator.web.uploads import UploadForm, UploadKind, within_limit
from evaluation.formats.registry import FORMATS

SEARCH_MAX_LENGTH = 200  # also the search box's maxlength (document and query lists)


class SearchForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=SEARCH_MAX_LENGTH)

    @classmethod
    def text(cls, data: Any) -> str:
        """The search text; a longer one is cut to the limit (the box's maxlength does the same
        while typing) rather than dropped, which listed every row as if nothing was asked."""
        form = cls({"q": str(data.get("q", ""))[:SEARCH_MAX_LENGTH]})
        return form.cleaned_data["q"] if form.is_valid() else ""


class CriteriaForm(forms.Form):
    level_3 = forms.CharField(label=_("Grade 3"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    level_2 = forms.CharField(label=_("Grade 2"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    level_1 = forms.CharField(label=_("Grade 1"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    level_0 = forms.CharField(label=_("Grade 0"), widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    change = forms.ChoiceField(
        label=_("Kind of change"),
        choices=[
            (CriteriaChange.MEANING.value, CriteriaChange.MEANING.label),
            (CriteriaChange.WORDING.value, CriteriaChange.WORDING.label),
        ],
        widget=forms.RadioSelect,
        error_messages={"required": _("Say whether this edit changes the meaning or only the wording.")},
    )
    note = forms.CharField(
        label=_("What changed and why"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=2000,
    )
    # The version the page showed and the edit starts from: publishing over a newer one would undo
    # it without a word (a stale tab). Required: a post without it would skip the check.
    based_on = forms.IntegerField(
        widget=forms.HiddenInput,
        min_value=1,
        error_messages={
            "required": _(
                "This form did not say which version it was edited from: reload the page, then publish."
            )
        },
    )

    def __init__(self, *args: Any, current: CriteriaVersion, **kwargs: Any) -> None:
        self.current = current
        kwargs.setdefault(
            "initial", {**{f"level_{n}": text for n, text in current.levels()}, "based_on": current.number}
        )
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, Any]:
        # Form.clean() returns cleaned_data; the stubs allow None only for overriding subclasses.
        data = cast("dict[str, Any]", super().clean())
        levels = self.levels()
        if levels and all(levels.get(n, "").strip() == text.strip() for n, text in self.current.levels()):
            raise forms.ValidationError(
                _("Nothing changed: edit at least one level's text before publishing.")
            )
        return data

    @staticmethod
    def merge(
        typed: dict[int, str], base: CriteriaVersion, latest: CriteriaVersion
    ) -> tuple[dict[int, str], list[int]]:
        """An edit typed on `base`, carried onto `latest` (published meanwhile): each level the
        owner left as `base` had it takes `latest`'s text; a level only they changed keeps theirs.
        Returns (the levels for the form, the levels both changed: the form keeps the owner's text
        there and the page shows `latest`'s beside it). So publishing again undoes nothing unseen."""
        before, now = dict(base.levels()), dict(latest.levels())
        merged, conflicts = {}, []
        for level, text in typed.items():
            if text.strip() == before[level].strip():
                merged[level] = now[level]
            else:
                merged[level] = text
                if now[level].strip() not in (before[level].strip(), text.strip()):
                    conflicts.append(level)
        return merged, conflicts

    def levels(self) -> dict[int, str]:
        return {
            n: self.cleaned_data.get(f"level_{n}", "").strip()
            for n in (3, 2, 1, 0)
            if f"level_{n}" in getattr(self, "cleaned_data", {})
        }


FORMAT_CHOICES = [("", _("From the file name (.csv, .jsonl or .ndjson)"))] + [
    (name, fmt.label) for name, fmt in FORMATS.items() if fmt.records
]


class ImportForm(UploadForm):
    """One file of documents or queries."""

    file = forms.FileField(label=_("File"), error_messages={"required": _("Choose a file to upload.")})
    format = forms.ChoiceField(label=_("Format"), choices=FORMAT_CHOICES, required=False)

    def __init__(self, *args: Any, kind: UploadKind, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind

    def clean_file(self) -> Any:
        return within_limit(self.kind, self.cleaned_data["file"])

    def clean_format(self) -> str:
        return self.cleaned_data.get("format") or ""
