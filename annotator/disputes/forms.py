"""Forms of the dispute workflow: an editor's reason, an editor's revision, a reviewer's decision."""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from annotator.disputes.rechecks import recheck_needs_note_message
from annotator.disputes.services import override_needs_note_message
from annotator.models import GRADE_VALUES, REASON_MAX_LENGTH

GRADE_CHOICES: list[tuple[Any, Any]] = [(g, str(g)) for g in GRADE_VALUES]
# The criteria text of each level has this id on the dispute pages (_pair.html), plus "-<grade>".
CRITERIA_TEXT_ID = "pair-criteria"


class GradeRadioSelect(forms.RadioSelect):
    """Radios labelled 0-3, each described by its level's criteria text shown on the page.

    The visible label stays the bare grade; a screen reader then reads what the grade means
    instead of "0 1 2 3".
    """

    def create_option(
        self,
        name: str,
        value: Any,
        label: int | str,
        selected: bool,
        index: int,
        subindex: int | None = None,
        attrs: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if value not in ("", None):
            described = [option["attrs"].get("aria-describedby", ""), f"{CRITERIA_TEXT_ID}-{value}"]
            option["attrs"]["aria-describedby"] = " ".join(d for d in described if d)
        return option


def grade_field(label: Any, *, required: bool = True, help_text: Any = "") -> forms.TypedChoiceField:
    empty: list[tuple[Any, Any]] = [] if required else [("", _("(none)"))]
    return forms.TypedChoiceField(
        label=label,
        choices=empty + GRADE_CHOICES,
        coerce=int,
        empty_value=None,
        required=required,
        widget=GradeRadioSelect if required else forms.Select,
        help_text=help_text,
        error_messages={
            "required": _("Choose a grade from 0 to 3."),
            "invalid_choice": _("“%(value)s” is not a grade: choose 0, 1, 2 or 3."),
        },
    )


class ReasonForm(forms.Form):
    reason = forms.CharField(
        label=_("The basis of your grade"),
        widget=forms.Textarea(attrs={"rows": 4}),
        max_length=REASON_MAX_LENGTH,
        help_text=_(
            "Which condition of the criteria the document meets or misses, and why. The other editors see it "
            "only once every reason is in."
        ),
        error_messages={
            "required": _(
                "Write the basis of your grade: which condition the document meets or misses, and why."
            ),
        },
    )
    criteria_level = grade_field(
        _("Criteria level it rests on (optional)"),
        required=False,
        help_text=_("The level of the written criteria your reading matches."),
    )


class RevisionForm(forms.Form):
    """After the reveal: the grade as the editor now sees it. The original grade means "keep".

    Nothing is chosen in advance: the answer is given once and cannot be changed, so a click on
    the button alone must not record "kept"."""

    grade = grade_field(
        _("Your grade after reading the other reasons"),
        help_text=_("Choose your grade again to keep it, or another to change it. You answer once."),
    )
    note = forms.CharField(
        label=_("Why (optional)"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=REASON_MAX_LENGTH,
        required=False,
    )


class SettleForm(forms.Form):
    grade = grade_field(_("Final grade"))
    note = forms.CharField(
        label=_("Note"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=REASON_MAX_LENGTH,
        required=False,
        help_text=_("Required when the final grade differs from every editor's grade."),
    )

    def __init__(self, *args: Any, on_record: set[int], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.on_record = on_record

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        grade = data.get("grade")
        if (
            grade is not None
            and grade not in self.on_record
            and "note" not in self.errors  # refused for its length: not a missing note
            and not data.get("note", "").strip()
        ):
            self.add_error("note", override_needs_note_message(grade, self.on_record))
        return data


class RecheckForm(forms.Form):
    """A reviewer's re-check of a settled pair: the final grade on the current text.

    Nothing is chosen in advance, as on the revision form: a click on the button alone must not
    record "kept" for a pair nobody re-read."""

    grade = grade_field(
        _("Final grade on the current text"),
        help_text=_("Choose the current final grade to keep it, or another to change it."),
    )
    note = forms.CharField(
        label=_("Note"),
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=REASON_MAX_LENGTH,
        required=False,
        help_text=_("Required when you change the final grade; it is kept with the re-check."),
    )
    # What the page showed (rechecks.recheck_token): a re-check made on an outdated page
    # is refused, not recorded.
    # Not required: a missing or mangled value is refused by the service like an outdated one
    # (409, the pair as it is now), not with Django's "(Hidden field seen)" message.
    seen = forms.CharField(widget=forms.HiddenInput, required=False)

    def __init__(self, *args: Any, current: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.current = current

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        grade = data.get("grade")
        # A note refused for its length is not a missing note: one error, not both.
        if (
            grade is not None
            and grade != self.current
            and "note" not in self.errors
            and not data.get("note", "").strip()
        ):
            self.add_error("note", recheck_needs_note_message(self.current, grade))
        return data
