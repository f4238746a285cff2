"""From raw grades to one final grade per pair: unanimity, reasons, the reveal, revision, review.

Raw grades are never overwritten (agreement is computed on what editors gave blind): a revision
sits beside the original in its `DisputeStatement`. Every step locks the dispute row first, so
two people acting on one dispute are serialised; `FinalGrade` being one-to-one is the last guard.
Re-checking a settled pair is in rechecks.py, the timeline of a pair in timeline.py.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.disputes.agreement import check_grade
from annotator.models import (
    Candidate,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    DisputeStatus,
    FinalGrade,
    FinalSource,
    Grade,
    GradeHistory,
    GradingSet,
    Membership,
    Permission,
)
from annotator.web.text import enumeration

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class DisputeError(Exception):
    """A workflow rule refused the action. `message` is translated and shown to the person as is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AlreadySettled(DisputeError):
    """Someone else settled the pair first; `final_grade` says who, how and when."""

    def __init__(self, final_grade: FinalGrade | None) -> None:
        self.final_grade = final_grade
        if final_grade is None:
            super().__init__(_("This dispute is already settled."))
            return
        who = final_grade.decided_by.get_username() if final_grade.decided_by else _("the editors")
        super().__init__(
            _("Already settled by %(who)s: grade %(grade)s (%(source)s).")
            % {"who": who, "grade": final_grade.grade, "source": final_grade.get_source_display()}
        )


# No savepoint: nothing catches its errors inside the caller's transaction, which they roll back.
@transaction.atomic(savepoint=False)
def pair_settle_if_complete(*, candidate: Candidate) -> FinalGrade | Dispute | None:
    """Call after any grade of `candidate` is saved.

    Once the pair has its required number of grades from distinct editors, none of them waiting
    for a re-check: all equal -> a final grade with source `unanimous`; any difference -> a dispute
    (severity = max - min) waiting for every editor's reason. Does nothing while grades are
    missing or stale, or once settled/disputed: from
    then on the dispute decides, and the grading service refuses changes to the raw grades (a
    change of mind is a revision on the dispute page, after the reveal).
    """
    # of=self: lock only the pair, not the joined grading set (freezing a pool locks that one).
    candidate = (
        Candidate.objects.select_for_update(of=("self",))
        .select_related("grading_set", "final_grade", "dispute")
        .get(pk=candidate.pk)
    )
    if hasattr(candidate, "final_grade") or hasattr(candidate, "dispute"):
        return None
    # The pair's grade count is kept by the database in this transaction (grading/counters.py),
    # so a pair still short of grades, the usual case, needs no further read.
    if candidate.grade_count < candidate.grading_set.required_grades:
        return None
    grades = list(candidate.grades.select_related("criteria_version").order_by("pk"))
    if len(grades) < candidate.grading_set.required_grades:
        return None
    if any(g.stale for g in grades):
        # A grade awaiting its re-check was given on another text or criteria: comparing it with
        # the others would open a dispute (or agree) on different things. The pair waits, and the
        # re-check (a save like any other) calls this again.
        return None
    values = [g.grade for g in grades]
    if len(set(values)) == 1:
        criteria = max((g.criteria_version for g in grades), key=lambda c: c.number)
        return FinalGrade.objects.create(
            candidate=candidate, grade=values[0], source=FinalSource.UNANIMOUS, criteria_version=criteria
        )
    dispute = Dispute.objects.create(candidate=candidate, severity=max(values) - min(values))
    DisputeStatement.objects.bulk_create(
        [DisputeStatement(dispute=dispute, editor_id=g.editor_id, original_grade=g.grade) for g in grades]
    )
    return dispute


def criteria_of_grades(candidate_id: int) -> CriteriaVersion:
    """The criteria a decision on this pair rests on: the newest version among its editors' grades.

    Not the project's current version: criteria published while the dispute ran were not what the
    editors graded by (their grades are then flagged for re-check, and the decision says so).
    """
    grades = Grade.objects.filter(candidate_id=candidate_id).select_related("criteria_version")
    versions = [g.criteria_version for g in grades]
    if not versions:  # every grade withdrawn (its editor left): the project's criteria now
        candidate = Candidate.objects.select_related("grading_set__project").get(pk=candidate_id)
        return CriteriaVersion.objects.current_for(candidate.grading_set.project)
    return max(versions, key=lambda c: c.number)


def _lock(dispute: Dispute) -> Dispute:
    """The dispute, re-read under a row lock held to the end of the transaction.

    Only the dispute row is locked (`of=self`); its set's row is held shared first
    (`lock_shared`), so a freeze and a change to the dispute never overlap.
    """
    GradingSet.objects.lock_shared(dispute.candidate.grading_set_id)
    return (
        Dispute.objects.select_for_update(of=("self",))
        .select_related("candidate__grading_set__project")
        .get(pk=dispute.pk)
    )


def _statement(dispute: Dispute, editor: User) -> DisputeStatement:
    statement = dispute.statements.filter(editor=editor).first()
    if statement is None:
        raise DisputeError(_("You are not one of the editors of this dispute."))
    return statement


def closed_refusal(dispute: Dispute) -> str:
    """Why nobody can move `dispute` on any more, or "": its set was frozen without the pair.

    Its decision would go into no pool version (a new version copies only the frozen pairs), and
    the dispute would wait in queues forever; so it stays as it was, and the page says how to go on.
    """
    grading_set = dispute.candidate.grading_set
    if grading_set.is_open or dispute.status == DisputeStatus.SETTLED:
        return ""
    return _(
        "The grading set “%(set)s” was frozen without this pair, so this dispute stays as it is. To grade "
        "the pair again, add it to a new version of the set."
    ) % {"set": grading_set.name}


def reason_refusal(*, dispute: Dispute, editor: User) -> str:
    """Why `editor` cannot give a reason on `dispute` now, or "" when they can."""
    if not dispute.statements.filter(editor=editor).exists():
        return _("You are not one of the editors of this dispute.")
    if closed := closed_refusal(dispute):
        return closed
    if dispute.status == DisputeStatus.SETTLED:
        return _("This dispute is already settled.")
    if dispute.status != DisputeStatus.AWAITING_REASONS:
        if dispute.was_handed_over:
            return _("This dispute was sent to a reviewer: reasons can no longer be added or changed.")
        return _("Every reason is already in and the grades are revealed: reasons can no longer change.")
    return ""


def revision_refusal(*, dispute: Dispute, editor: User) -> str:
    """Why `editor` cannot revise on `dispute` now, or "" when they can."""
    statement = dispute.statements.filter(editor=editor).first()
    if statement is None:
        return _("You are not one of the editors of this dispute.")
    if closed := closed_refusal(dispute):
        return closed
    if dispute.status == DisputeStatus.SETTLED:
        return _("This dispute is already settled.")
    if dispute.status == DisputeStatus.AWAITING_REASONS:
        return _("Grades are revealed only when every editor has given a reason; you can revise after that.")
    if dispute.status != DisputeStatus.REVEALED:
        return _("This dispute is already with a reviewer: grades can no longer be revised.")
    if statement.has_responded:
        return _(
            "You already responded to the reveal (grade %(grade)s): a grade is revised at most once."
        ) % {"grade": statement.revised_grade}
    return ""


def _refuse_if_settled(dispute: Dispute) -> None:
    if dispute.status == DisputeStatus.SETTLED:
        raise AlreadySettled(
            FinalGrade.objects.select_related("decided_by").filter(candidate_id=dispute.candidate_id).first()
        )


@transaction.atomic
def dispute_give_reason(
    *, dispute: Dispute, editor: User, reason: str, criteria_level: int | None = None
) -> Dispute:
    """Record (or, until the reveal, rewrite) the basis of `editor`'s grade.

    The last missing reason reveals the dispute, and only that does: nobody sees another editor's
    grade or reason before every reason is in.
    """
    dispute = _lock(dispute)
    _refuse_if_settled(dispute)
    if refusal := reason_refusal(dispute=dispute, editor=editor):
        raise DisputeError(refusal)
    statement = _statement(dispute, editor)
    reason = reason.strip()
    if not reason:
        raise DisputeError(
            _("Write the basis of your grade: which condition the document meets or misses, and why.")
        )
    if criteria_level is not None:
        criteria_level = check_grade(criteria_level)
    now = timezone.now()
    statement.reason, statement.criteria_level, statement.reason_given_at = reason, criteria_level, now
    statement.save(update_fields=["reason", "criteria_level", "reason_given_at"])
    if not dispute.statements.filter(reason_given_at__isnull=True).exists():
        dispute.reveal(at=now)
    _hand_over_if_only_departed_wait(dispute, now)
    return dispute


def _hand_over_if_only_departed_wait(dispute: Dispute, now: datetime) -> None:
    """After an editor's step: if the dispute now waits only for editors who left (deactivated
    accounts, which no removal handed over), it goes to review by itself instead of waiting for
    a reviewer to notice it."""
    if departed_editors(dispute):
        dispute.hand_to_review(at=now, by=None)


@transaction.atomic
def dispute_revise(*, dispute: Dispute, editor: User, grade: int, note: str = "") -> Dispute:
    """After the reveal, `editor` keeps their grade (grade == original) or changes it, once.

    All current grades equal -> final grade `discussion`. Everyone responded and still apart ->
    the reviewer queue.
    """
    dispute = _lock(dispute)
    _refuse_if_settled(dispute)
    if refusal := revision_refusal(dispute=dispute, editor=editor):
        raise DisputeError(refusal)
    statement = _statement(dispute, editor)
    grade = check_grade(grade)
    now = timezone.now()
    statement.revised_grade, statement.revision_note, statement.revised_at = grade, note.strip(), now
    statement.save(update_fields=["revised_grade", "revision_note", "revised_at"])
    if statement.changed_grade:
        raw = Grade.objects.filter(candidate_id=dispute.candidate_id, editor=editor).first()
        if raw is not None:
            # The raw grade row keeps the blind grade; the revision lives beside it.
            GradeHistory.objects.create(
                grade=raw,
                changed_by=editor,
                kind=GradeHistory.Kind.REVISED,
                old_grade=statement.original_grade,
                new_grade=grade,
                old_reason=statement.reason,
                new_reason=statement.revision_note,
            )
    agreed = dispute.agreed_grade()
    if agreed is not None:
        FinalGrade.objects.create(
            candidate_id=dispute.candidate_id,
            grade=agreed,
            source=FinalSource.DISCUSSION,
            criteria_version=criteria_of_grades(dispute.candidate_id),
        )
        dispute.mark_settled(at=now)
    elif not dispute.statements.filter(revised_at__isnull=True).exists():
        dispute.send_to_review(at=now)
    else:
        _hand_over_if_only_departed_wait(dispute, now)
    return dispute


def departed_editors(dispute: Dispute, gone: set[int] | None = None) -> list[User]:
    """Editors whose step the dispute waits for (a reason, a response to the reveal) and who can
    no longer take it (no longer members of the project, or deactivated accounts), when it waits
    for them alone; [] while an editor who can still take their step has not. `gone`: the
    caller's `gone_editor_ids(dispute)`, when it has it already.

    Only then may it go to review without them: sent earlier, it would skip the remaining editor's
    reason and show them the other grades before they wrote it, which grading blind forbids.
    """
    pending = dispute.pending_statements()
    if not pending:
        return []
    gone = gone_editor_ids(dispute) if gone is None else gone
    if any(s.editor_id not in gone for s in pending):
        return []
    return [s.editor for s in pending]


def gone_editor_ids(dispute: Dispute) -> set[int]:
    """The dispute's editors who are no longer active members of its project."""
    editors = {s.editor_id for s in dispute.statements.all()}
    active = Membership.objects.filter(
        project_id=dispute.candidate.grading_set.project_id, user_id__in=editors, user__is_active=True
    ).values_list("user_id", flat=True)
    return editors - set(active)


@transaction.atomic
def dispute_hand_to_review(*, dispute: Dispute, by: User) -> Dispute:
    """A reviewer sends a dispute to review when it waits for an editor who is gone.

    Removing a member does this by itself (membership_remove); this covers accounts deactivated
    instead, and disputes left waiting before that rule existed.
    """
    dispute = _lock(dispute)
    _refuse_if_settled(dispute)
    if closed := closed_refusal(dispute):
        raise DisputeError(closed)
    membership = Membership.objects.filter(project=dispute.candidate.grading_set.project, user=by).first()
    if membership is None or not membership.may(Permission.SETTLE_DISPUTES):
        raise DisputeError(_("Only a reviewer or an owner of the project can send a dispute to review."))
    if graded_pair(candidate_id=dispute.candidate_id, user=by):  # it would reveal the others' grades to them
        raise DisputeError(_("You graded this pair, so you cannot settle it: another reviewer must."))
    if dispute.status == DisputeStatus.IN_REVIEW:  # a second send is told it is in review already
        if dispute.escalated_by is not None:
            raise DisputeError(
                _("This dispute is already with the reviewers: %(name)s sent it to review.")
                % {"name": dispute.escalated_by.get_username()}
            )
        raise DisputeError(_("This dispute is already with the reviewers: it waits in the review queue."))
    if not departed_editors(dispute):
        raise DisputeError(
            _(
                "This dispute waits for an editor who can still take their step: it stays with them, and "
                "goes to review without an editor who left only once everyone else has taken theirs."
            )
        )
    dispute.hand_to_review(at=timezone.now(), by=by)
    return dispute


def may_settle(*, dispute: Dispute, user: User) -> bool:
    """Reviewer or owner of the project who did not grade the pair."""
    membership = Membership.objects.filter(
        project_id=dispute.candidate.grading_set.project_id, user=user
    ).first()
    if membership is None or not membership.may(Permission.SETTLE_DISPUTES):
        return False
    return not graded_pair(candidate_id=dispute.candidate_id, user=user)


def graded_pair(*, candidate_id: int, user: User) -> bool:
    return candidate_id in pairs_graded_by(user, [candidate_id])


def pairs_graded_by(user: User, candidate_ids: list[int]) -> set[int]:
    """Which of these pairs `user` graded, or was an editor of in their dispute: pairs they may
    neither settle nor re-check. Two queries for a whole page of pairs."""
    return set(
        Grade.objects.filter(editor=user, candidate_id__in=candidate_ids).values_list(
            "candidate_id", flat=True
        )
    ) | set(
        DisputeStatement.objects.filter(editor=user, dispute__candidate_id__in=candidate_ids).values_list(
            "dispute__candidate_id", flat=True
        )
    )


@transaction.atomic
def dispute_settle(*, dispute: Dispute, by: User, grade: int, note: str = "") -> FinalGrade:
    """A reviewer's decision on a dispute in review: adopt an editor's grade or set another.

    A grade no editor put forward (originally or as a revision) overrides all of them and needs a
    note. Raises `AlreadySettled` (carrying the stored decision) when someone settled it first.
    """
    dispute = _lock(dispute)
    _refuse_if_settled(dispute)
    if closed := closed_refusal(dispute):
        raise DisputeError(closed)
    if dispute.status != DisputeStatus.IN_REVIEW:
        raise DisputeError(
            _("This dispute is not waiting for a reviewer yet: the editors have not finished.")
        )
    membership = Membership.objects.filter(project=dispute.candidate.grading_set.project, user=by).first()
    if membership is None or not membership.may(Permission.SETTLE_DISPUTES):
        raise DisputeError(_("Only a reviewer or an owner of the project can settle a dispute."))
    if graded_pair(candidate_id=dispute.candidate_id, user=by):
        raise DisputeError(_("You graded this pair, so you cannot settle it: another reviewer must."))
    grade = check_grade(grade)
    note = note.strip()
    on_record = dispute.grades_on_record()
    if grade not in on_record and not note:
        raise DisputeError(override_needs_note_message(grade, on_record))
    try:
        with transaction.atomic():
            final = FinalGrade.objects.create(
                candidate_id=dispute.candidate_id,
                grade=grade,
                source=FinalSource.ADJUDICATED,
                decided_by=by,
                note=note,
                criteria_version=criteria_of_grades(dispute.candidate_id),
            )
    except IntegrityError:
        # Only reachable where row locks are not real (SQLite): the one-to-one is the last guard.
        raise AlreadySettled(
            FinalGrade.objects.select_related("decided_by").filter(candidate_id=dispute.candidate_id).first()
        ) from None
    dispute.mark_settled(at=final.decided_at)
    return final


def override_needs_note_message(grade: int, on_record: set[int]) -> str:
    return _(
        "Grade %(grade)s differs from every editor's grade (%(grades)s): write a note saying why you "
        "override them."
    ) % {"grade": grade, "grades": enumeration(sorted(on_record))}
