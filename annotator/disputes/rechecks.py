"""Re-checking a settled pair whose grades went stale: the reviewer keeps or changes its final grade.

Its editors cannot re-grade a settled pair, so a reviewer re-reads it as it is now; the re-check
is refused when the page it was made on no longer shows the pair as it is (`recheck_token`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils.translation import gettext as _

from annotator.disputes.agreement import check_grade
from annotator.disputes.services import DisputeError, graded_pair
from annotator.models import (
    Candidate,
    CriteriaVersion,
    FinalGrade,
    FinalGradeRecheck,
    FinalSource,
    Grade,
    GradingSet,
    Membership,
    Permission,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class AlreadyRechecked(DisputeError):
    """Nothing left to re-check: another reviewer did it first (`recheck` says who and how)."""

    def __init__(self, recheck: FinalGradeRecheck | None) -> None:
        self.recheck = recheck
        if recheck is None:
            super().__init__(
                _("No grade of this pair is marked for re-checking: there is nothing to re-check.")
            )
            return
        super().__init__(
            _("Already re-checked by %(who)s: final grade %(grade)s.")
            % {"who": recheck.reviewer.get_username(), "grade": recheck.new_grade}
        )


class PairChangedSinceShown(DisputeError):
    """The re-check was made on a page that no longer shows the pair as it is (`recheck_token`)."""


def _check_recheck(candidate: Candidate, user: User) -> None:
    """Raise the reason `user` cannot re-check the final grade of `candidate` now, if any."""
    if not hasattr(candidate, "final_grade"):
        raise DisputeError(
            _(
                "This pair is not settled: its editors re-check their own grades while it is being graded or "
                "disputed."
            )
        )
    if not candidate.grading_set.is_open:
        raise DisputeError(_("This pair's grading set is frozen: its final grades can no longer change."))
    if not candidate.final_grade.stale_reason and not candidate.grades.filter(stale=True).exists():
        raise AlreadyRechecked(candidate.final_rechecks.select_related("reviewer").last())
    if graded_pair(candidate_id=candidate.pk, user=user):
        raise DisputeError(
            _("You graded this pair, so you cannot re-check its final grade: another reviewer must.")
        )


def final_recheck_refusal(*, candidate: Candidate, user: User) -> str:
    """Why `user` cannot re-check the final grade of `candidate` now ("" when they can): what
    `final_grade_recheck` would refuse, for the page to say before anyone types a note."""
    try:
        _check_recheck(candidate, user)
    except DisputeError as exc:
        return exc.message
    return ""


def recheck_token(candidate: Candidate) -> str:
    """What the re-check page showed, as a short digest: the service refuses a re-check made on a
    page that no longer matches (another document version, criteria, query text, final grade or
    set of stale grades), as the grading page refuses a grade for a document changed since read."""
    # Read afresh: the caller's instance may hold the query or document as loaded earlier.
    candidate = Candidate.objects.select_related("query", "document", "grading_set__project").get(
        pk=candidate.pk
    )
    final = FinalGrade.objects.get(candidate_id=candidate.pk)
    criteria = CriteriaVersion.objects.current_for(candidate.grading_set.project)
    stale = candidate.grades.filter(stale=True).order_by("pk").values_list("pk", "stale_reason")
    shown = [
        candidate.document.version,
        criteria.number,
        candidate.query.text,
        candidate.query.information_need,
        final.pk,
        final.grade,
        final.source,
        final.stale_reason,
        list(stale),
    ]
    return hashlib.sha256(json.dumps(shown, ensure_ascii=False).encode()).hexdigest()[:32]


def recheck_reason_codes(final: FinalGrade, stale_grades: Iterable[Grade]) -> list[str]:
    """Why a settled pair waits for a re-check: a copied final grade's own reasons first (it has no
    raw grades here), then its stale grades', each code once."""
    own = [code for code in final.stale_reason.split(",") if code]
    return list(dict.fromkeys([*own, *stale_reason_codes(stale_grades)]))


def stale_reason_codes(grades: Iterable[Grade]) -> list[str]:
    """The distinct StaleReason codes of `grades`, in first-seen order."""
    codes: dict[str, None] = {}
    for g in grades:
        for code in g.stale_reason.split(","):
            if code:
                codes.setdefault(code, None)
    return list(codes)


@transaction.atomic
def final_grade_recheck(
    *, candidate: Candidate, by: User, grade: int, note: str = "", seen: str
) -> FinalGradeRecheck:
    """A reviewer re-reads a settled pair whose grades are marked stale and keeps or changes its
    final grade, on the document, query and criteria as they are now.

    Its editors cannot re-grade a settled pair, so without this the pair's "to re-check" flags
    would stay forever. The final grade keeps its provenance when kept; a changed one becomes the
    reviewer's (adjudicated, with the required note). Either way the criteria version it stands on
    becomes the current one, the pair's stale flags are cleared (the raw grades keep the document
    and criteria versions they were given on), and a `FinalGradeRecheck` records the before and
    after. Freezing then records the document version the reviewer read.
    """
    GradingSet.objects.lock_shared(candidate.grading_set_id)
    candidate = (
        Candidate.objects.select_for_update(of=("self",))
        .select_related("grading_set__project", "query", "document")
        .get(pk=candidate.pk)
    )
    membership = Membership.objects.filter(project=candidate.grading_set.project, user=by).first()
    if membership is None or not membership.may(Permission.RECHECK_FINAL):
        raise DisputeError(_("Only a reviewer or an owner of the project can re-check a final grade."))
    _check_recheck(candidate, by)
    if seen != recheck_token(candidate):
        raise PairChangedSinceShown(
            _(
                "This pair changed since the page was shown (its document, query, criteria or final grade): "
                "read it again, then re-check."
            )
        )
    grade = check_grade(grade)
    note = note.strip()
    final = FinalGrade.objects.select_for_update().get(candidate=candidate)
    if grade != final.grade and not note:
        raise DisputeError(recheck_needs_note_message(final.grade, grade))
    stale = list(candidate.grades.filter(stale=True).order_by("pk"))
    criteria = CriteriaVersion.objects.current_for(candidate.grading_set.project)
    recheck = FinalGradeRecheck.objects.create(
        candidate=candidate,
        reviewer=by,
        reasons=",".join(recheck_reason_codes(final, stale)),
        old_grade=final.grade,
        old_source=final.source,
        old_decided_by=final.decided_by,
        old_note=final.note,
        old_criteria_version=final.criteria_version,
        old_decided_at=final.decided_at,
        new_grade=grade,
        note=note,
        document_version=candidate.document.current_version,
        criteria_version=criteria,
    )
    final.criteria_version, final.stale_reason = criteria, ""
    if grade != final.grade:
        final.grade, final.source, final.decided_by = grade, FinalSource.ADJUDICATED, by
        final.note, final.decided_at = note, recheck.created_at
    final.save(
        update_fields=[
            "grade",
            "source",
            "decided_by",
            "note",
            "criteria_version",
            "decided_at",
            "stale_reason",
        ]
    )
    # Not an edit of the raw grades (no history entry, as for `mark_stale`): they stay what their
    # editors gave, on the versions they read; the record of the re-check is `recheck`.
    Grade.objects.filter(pk__in=[g.pk for g in stale]).update(stale=False)
    return recheck


def recheck_needs_note_message(old: int, new: int) -> str:
    return _("Changing the final grade from %(old)s to %(new)s needs a note saying why.") % {
        "old": old,
        "new": new,
    }
