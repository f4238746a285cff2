"""Forms of the grading area: grades, grading sets and candidates (by hand or from run files)."""

from __future__ import annotations

import re
from typing import Any, cast

from django import forms
from django.core.files.uploadedfile import UploadedFile
from django.utils.text import capfirst
from django.utils.translation import gettext_lazy as _

from annotator.documents.models import by_external_id
from annotator.documents.readers import ID_MAX_LENGTH
from annotator.models import (
    GRADE_VALUES,
    REASON_MAX_LENGTH,
    Document,
    GradingSet,
    Project,
    Query,
)
from annotator.projects.forms import DigitsIntegerField
from annotator.web.uploads import UploadForm, within_limit
from evaluation.formats.registry import FORMATS, pooled_names
from evaluation.formats.values import escape_unprintable

GRADE_CHOICES = [(str(g), str(g)) for g in GRADE_VALUES]


class GradeForm(forms.Form):
    grade = forms.TypedChoiceField(
        label=_("Grade"),
        choices=GRADE_CHOICES,
        coerce=int,
        error_messages={
            "required": _("Choose a grade from 0 to 3."),
            "invalid_choice": _("“%(value)s” is not a grade: choose 0, 1, 2 or 3."),
        },
    )
    reason = forms.CharField(label=_("Reason"), required=False, max_length=REASON_MAX_LENGTH)
    # The document version the editor read; a newer version on the server refuses the save. The
    # page always sends it, so a post without one is refused rather than graded against whatever
    # text is current. Whether the version exists is for grade_submit to say.
    document_version = forms.IntegerField(
        widget=forms.HiddenInput,
        error_messages={
            "required": _(
                "The grade came without the version of the document it was given for. "
                "Reload the page and grade again."
            ),
            "invalid": _(
                "The document version sent with the grade is not a whole number. "
                "Reload the page and grade again."
            ),
        },
    )
    # The criteria version the page showed: a meaning change since refuses the save (grade_submit).
    # Optional, unlike the document version: without it the grade is taken under the current criteria.
    criteria_version = forms.IntegerField(
        widget=forms.HiddenInput,
        required=False,
        error_messages={
            "invalid": _(
                "The criteria version sent with the grade is not a whole number. "
                "Reload the page and grade again."
            ),
        },
    )
    # Query.fingerprint of the query text the page showed (queries keep no versions): a query
    # re-imported with another text since refuses the save (grade_submit). Optional like the
    # criteria version; a value of the wrong shape was not sent by this page.
    query_seen = forms.RegexField(
        regex=Query.FINGERPRINT_PATTERN,
        widget=forms.HiddenInput,
        required=False,
        error_messages={
            "invalid": _(
                "The query text sent with the grade is not recognisable. Reload the page and grade again."
            ),
        },
    )

    def clean_query_seen(self) -> str | None:
        return self.cleaned_data.get("query_seen") or None


class GradingSetForm(forms.ModelForm):
    # Declared rather than generated, so that the bounds are validated here with a readable
    # message: setting min_value on a generated field changes only the widget, and 0 then reached
    # the database constraint, whose message is its internal name.
    required_grades = DigitsIntegerField(
        label=capfirst(GradingSet._meta.get_field("required_grades").verbose_name),
        help_text=GradingSet._meta.get_field("required_grades").help_text,
        min_value=1,
        max_value=10,
        initial=GradingSet._meta.get_field("required_grades").default,
    )

    class Meta:
        model = GradingSet
        fields = ["name", "description", "required_grades"]
        widgets = {"description": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        self.project = project
        super().__init__(*args, **kwargs)

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if GradingSet.objects.filter(project=self.project, name=name).exists():
            raise forms.ValidationError(
                _("This project already has a grading set called “%(name)s”.") % {"name": name}
            )
        return name

    def save(self, commit: bool = True) -> GradingSet:
        self.instance.project = self.project
        return super().save(commit=commit)


class CandidateAddForm(forms.Form):
    """Add documents to one query of a set by their external IDs (one per line or comma-separated)."""

    query_id = forms.CharField(label=_("Query ID"), max_length=ID_MAX_LENGTH)
    doc_ids = forms.CharField(
        label=_("Document IDs"),
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One per line, or separated by commas (，and 、 too)."),
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        self.project = project
        super().__init__(*args, **kwargs)

    def clean_query_id(self) -> Query:
        value = self.cleaned_data["query_id"].strip()
        query = Query.objects.filter(project=self.project, external_id=value).first()
        if query is None:
            # Escaped: an invisible character (a zero-width space pasted along) must show.
            raise forms.ValidationError(
                _("No query with ID “%(id)s” in this project.") % {"id": escape_unprintable(value)}
            )
        return query

    def clean_doc_ids(self) -> list[Document]:
        # Commas, full-width ones and the enumeration comma too, as in pasted runs ("d5，d6" is two IDs).
        raw = re.sub("[,，、]", "\n", self.cleaned_data["doc_ids"])
        ids = list(dict.fromkeys(part.strip() for part in raw.splitlines() if part.strip()))
        if not ids:
            raise forms.ValidationError(_("Give at least one document ID."))
        found = by_external_id(Document.objects.filter(project=self.project), ids)
        missing = [i for i in ids if i not in found]
        if missing:
            message = _("No document with these IDs in this project: %(ids)s.") % {
                "ids": ", ".join(map(escape_unprintable, missing[:20]))
            }
            if any(" " in i for i in missing):
                # An ID may hold spaces, so they cannot separate IDs; "A B C" typed as a list is read
                # as one ID, so the message says why.
                message += " " + _("Separate IDs with commas or line breaks: a space is part of an ID.")
            raise forms.ValidationError(message)
        return [found[i] for i in ids]


# Pooling reads run files; pasted lists are the comparison upload form's.
RUN_FORMAT_CHOICES = [("", _("From the file name (.csv, .jsonl; anything else is a TREC run)"))] + [
    (name, _(FORMATS[name].run_label)) for name in pooled_names()
]


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class CandidateImportForm(UploadForm):
    """Run files (or plain pair lists) whose top k per query become a set's candidates."""

    grading_set = forms.ModelChoiceField(
        label=_("Grading set"),
        queryset=GradingSet.objects.none(),
        error_messages={
            "required": _("Choose the grading set to add candidates to."),
            "invalid_choice": _(
                "Choose one of this project's open grading sets (closed sets take no new pairs)."
            ),
        },
    )
    # The form metaclass moves declared fields into base_fields, so this does not shadow BaseForm.files
    # (the stubs cannot know that).
    files = MultipleFileField(  # type: ignore[assignment]
        label=_("Run files"),
        error_messages={"required": _("Choose at least one file to upload.")},
        help_text=_("One or more runs, one per file."),
    )
    format = forms.ChoiceField(
        label=_("Format"),
        required=False,
        choices=RUN_FORMAT_CHOICES,
    )
    depth = DigitsIntegerField(
        label=_("Pool depth k"),
        required=False,
        min_value=1,
        max_value=10000,
        help_text=_(
            "Each run's top k per query joins the set (the union over runs). Leave empty to add every "
            "listed pair."
        ),
    )

    def __init__(self, *args: Any, project: Project, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        cast("forms.ModelChoiceField[GradingSet]", self.fields["grading_set"]).queryset = (
            GradingSet.objects.in_project(project).open().order_by("name")
        )

    def clean_files(self) -> list[UploadedFile]:
        return within_limit("candidates", self.cleaned_data["files"])

    def clean_format(self) -> str:
        value = self.cleaned_data.get("format") or ""
        if value and value not in dict(RUN_FORMAT_CHOICES):
            raise forms.ValidationError(_("Unknown format."))
        return value
