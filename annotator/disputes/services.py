"""From raw grades to one final grade per pair: unanimity, reasons, the reveal, revision, review.

Raw grades are never overwritten (agreement is computed on what editors gave blind): a revision
sits beside the original in its `DisputeStatement`. Every step locks the dispute row first, so
two people acting on one dispute are serialised; `FinalGrade` being one-to-one is the last guard.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.disputes.agreement import check_grade
from annotator.models import (
    Candidate,
    CandidateSource,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    DisputeStatus,
    FinalGrade,
    FinalGradeRecheck,
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


@transaction.atomic
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
        Candidate.objects.select_for_update(of=("self",)).select_related("grading_set").get(pk=candidate.pk)
    )
    if (
        FinalGrade.objects.filter(candidate=candidate).exists()
        or Dispute.objects.filter(candidate=candidate).exists()
    ):
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
        [DisputeStatement(dispute=dispute, editor=g.editor, original_grade=g.grade) for g in grades]
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


# Re-checking a settled pair whose grades went stale ----------------------------------------------


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


def override_needs_note_message(grade: int, on_record: set[int]) -> str:
    return _(
        "Grade %(grade)s differs from every editor's grade (%(grades)s): write a note saying why you "
        "override them."
    ) % {"grade": grade, "grades": enumeration(sorted(on_record))}


# The timeline of one pair ---------------------------------------------------------------------


@dataclass(frozen=True)
class TimelineEvent:
    at: datetime
    # graded, changed, reason_added, reason_edited, reason_removed, undone, rechecked (the grading
    # page); opened, reason, revealed, revised, kept, in_review, decided (the dispute);
    # final_rechecked (a reviewer's re-check of the settled pair, final_grade_recheck)
    kind: str
    actor: User | None = None
    grade: int | None = None
    old_grade: int | None = None
    text: str = ""
    criteria_level: int | None = None
    source: str = ""
    severity: int | None = None
    # A decision copied with its pair from a frozen version: that version's label ("Pool v1") and
    # the source the version recorded (unanimous, discussion, adjudicated or imported).
    copied_from: str = ""
    copied_source: str = ""
    # final_rechecked: the document version the reviewer read.
    document_version: int | None = None


# Same instant: a grade comes before the dispute it opens, a reason before the reveal it causes.
_KIND_ORDER = {
    "graded": 0,
    "changed": 1,
    "reason_added": 1,
    "reason_edited": 1,
    "reason_removed": 1,
    "undone": 1,
    "rechecked": 1,
    "withdrawn": 1,
    "opened": 2,
    "reason": 3,
    "revealed": 4,
    "revised": 5,
    "kept": 5,
    "in_review": 6,
    "handed": 6,
    "decided": 7,
    "final_rechecked": 8,
}
_HISTORY_KINDS: dict[str, str] = {
    GradeHistory.Kind.CREATED: "graded",
    GradeHistory.Kind.CHANGED: "changed",
    GradeHistory.Kind.REASON_EDITED: "reason_edited",
    GradeHistory.Kind.UNDONE: "undone",
    GradeHistory.Kind.RECHECKED: "rechecked",
    GradeHistory.Kind.WITHDRAWN: "withdrawn",
    # REVISED is told by the dispute statement, which also has the "kept" case.
}


def _history_kind(entry: GradeHistory) -> str:
    """How the timeline tells a grading-page history entry (one of `_HISTORY_KINDS`' values, refined)."""
    kind = _HISTORY_KINDS[entry.kind]
    # Same grade, another reason: never "changed the grade from 2 to 2". Entries written before
    # REASON_EDITED existed are CHANGED with equal grades, and are told the same way.
    if kind in ("changed", "reason_edited") and entry.old_grade == entry.new_grade:
        if not entry.old_reason:
            return "reason_added"
        if not entry.new_reason:
            return "reason_removed"
        return "reason_edited"
    return kind


@dataclass
class Timeline:
    candidate: Candidate
    dispute: Dispute | None
    final_grade: FinalGrade | None
    events: list[TimelineEvent] = field(default_factory=list)
    # Empty when the viewer sees everything; else why others' grades and reasons are hidden:
    # "incomplete" (pair still being graded), "unfinished" (its set closed before that, and the
    # viewer graded it), "blind" (viewer graded it, no reveal yet),
    # "not_involved" (an editor who did not grade the pair: never, settled or not).
    hidden: str = ""


def _history_of(candidate: Candidate) -> list[tuple[GradeHistory, User]]:
    """The pair's grade history with, for each entry, the editor whose grade it is.

    Entries name the pair directly when the model has `GradeHistory.candidate` (so they outlive an
    undone grade); otherwise they are reached through their grade.
    """
    if any(f.name == "candidate" for f in GradeHistory._meta.get_fields()):
        rows = GradeHistory.objects.filter(candidate=candidate).select_related("editor", "grade__editor")
    else:
        rows = GradeHistory.objects.filter(grade__candidate=candidate).select_related("grade__editor")
    result = []
    for h in rows.order_by("created_at", "pk"):
        editor = getattr(h, "editor", None) or (h.grade.editor if h.grade is not None else None)
        if editor is not None:
            result.append((h, editor))
    return result


def pair_timeline(*, candidate: Candidate, viewer: User, membership: Membership) -> Timeline:
    """Every grade, reason, reveal, revision and decision of the pair, oldest first, as `viewer` may see it.

    Blindness holds here too: until a dispute is revealed (or the pair is settled), a person who
    graded the pair sees only their own entries, and nobody sees grades of a pair still being graded.
    An editor who did not grade the pair sees none of its grades, ever.
    """
    dispute = (
        Dispute.objects.filter(candidate=candidate)
        .select_related("escalated_by")
        .prefetch_related("statements__editor")
        .first()
    )
    final = (
        FinalGrade.objects.select_related("decided_by", "criteria_version")
        .filter(candidate=candidate)
        .first()
    )
    grades = list(Grade.objects.filter(candidate=candidate).select_related("editor"))
    is_grader = any(g.editor_id == viewer.pk for g in grades) or (
        dispute is not None and dispute.has_participant(viewer)
    )
    if not is_grader and not membership.may(Permission.SEE_ALL_GRADES):
        # An editor outside the pair never reads its grades: they may have the same query and
        # document to grade in another set, and must do so blind.
        hidden = "not_involved"
        # Not even that the grades differed (a dispute, its reveal, its link): disagreement tells
        # them the pair is borderline. Their own history (e.g. a grade they withdrew) stays.
        dispute = None
    elif final is not None or (dispute is not None and dispute.is_revealed):
        hidden = ""
    elif dispute is None and candidate.grading_set.is_open:
        hidden = "incomplete"
    elif dispute is None:
        # Left unfinished when its set closed: it gets no more grades there, so a reviewer who did
        # not grade it reads it all, not "still being graded" for good; who graded it stays blind,
        # since the pair may come back to them in a later set.
        hidden = "unfinished" if is_grader else ""
    elif is_grader:
        hidden = "blind"
    else:
        hidden = ""  # a reviewer or owner who did not grade it

    def visible(actor_id: int | None) -> bool:
        return not hidden or actor_id == viewer.pk

    events: list[TimelineEvent] = []
    history = _history_of(candidate)
    for g in grades:
        if not visible(g.editor_id):
            continue
        if not any(h.kind == GradeHistory.Kind.CREATED and editor.pk == g.editor_id for h, editor in history):
            # Grades written without a history row (imports, older data) still show when they came in.
            events.append(
                TimelineEvent(at=g.created_at, kind="graded", actor=g.editor, grade=g.grade, text=g.reason)
            )
    for h, editor in history:
        if h.kind in _HISTORY_KINDS and visible(editor.pk):
            events.append(
                TimelineEvent(
                    at=h.created_at,
                    kind=_history_kind(h),
                    actor=editor,
                    grade=h.new_grade,
                    old_grade=h.old_grade,
                    text=h.new_reason,
                )
            )
    if dispute is not None:
        # Severity tells a blind editor how far off the other grade is: shown only after the reveal.
        events.append(
            TimelineEvent(at=dispute.opened_at, kind="opened", severity=None if hidden else dispute.severity)
        )
        for s in dispute.statements.all():
            if not visible(s.editor_id):
                continue
            if s.reason_given_at:
                events.append(
                    TimelineEvent(
                        at=s.reason_given_at,
                        kind="reason",
                        actor=s.editor,
                        grade=s.original_grade,
                        text=s.reason,
                        criteria_level=s.criteria_level,
                    )
                )
            if s.revised_at:
                events.append(
                    TimelineEvent(
                        at=s.revised_at,
                        kind="revised" if s.changed_grade else "kept",
                        actor=s.editor,
                        grade=s.revised_grade,
                        old_grade=s.original_grade,
                        text=s.revision_note,
                    )
                )
        # A dispute handed to review because an editor left (membership_remove) has a step missing:
        # it was never revealed by the last reason, nor did every editor respond.
        handed = dispute.was_handed_over
        if dispute.revealed_at and not (handed and dispute.revealed_at == dispute.escalated_at):
            events.append(TimelineEvent(at=dispute.revealed_at, kind="revealed"))
        if dispute.escalated_at:
            events.append(
                TimelineEvent(
                    at=dispute.escalated_at,
                    kind="handed" if handed else "in_review",
                    actor=dispute.escalated_by if handed else None,
                )
            )
    if final is not None and not hidden:  # a final grade of 3 from a unanimous pair is both grades
        copied_from = copied_source = ""
        if candidate.source == CandidateSource.COPIED:
            copied_from = candidate.source_detail
            based_on = candidate.grading_set.based_on
            recorded = (
                based_on.judgments.filter(
                    query_id=candidate.query.external_id, doc_id=candidate.document.external_id
                )
                .values_list("source", flat=True)
                .first()
                if based_on is not None
                else None
            )
            copied_source = recorded or ""
        rechecks = list(
            candidate.final_rechecks.select_related("reviewer", "old_decided_by", "document_version")
        )
        # A re-check may have changed the final grade: the decision as first made is the one the
        # first re-check recorded as "before"; each re-check then tells its own step.
        first = rechecks[0] if rechecks else None
        events.append(
            TimelineEvent(
                at=first.old_decided_at if first else final.decided_at,
                kind="decided",
                actor=first.old_decided_by if first else final.decided_by,
                grade=first.old_grade if first else final.grade,
                text=first.old_note if first else final.note,
                source=first.old_source if first else final.source,
                copied_from=copied_from,
                copied_source=copied_source,
            )
        )
        for r in rechecks:
            events.append(
                TimelineEvent(
                    at=r.created_at,
                    kind="final_rechecked",
                    actor=r.reviewer,
                    grade=r.new_grade,
                    old_grade=r.old_grade,
                    text=r.note,
                    document_version=r.document_version.version,
                )
            )
    events.sort(key=lambda e: (e.at, _KIND_ORDER[e.kind]))
    return Timeline(
        candidate=candidate,
        dispute=dispute,
        final_grade=None if hidden == "not_involved" else final,
        events=events,
        hidden=hidden,
    )
