"""The timeline of one pair: every grade, reason, reveal, revision and decision, as the viewer may see it.

Blindness holds here as on the grading and dispute pages: what a viewer may not see yet is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from annotator.models import (
    Candidate,
    CandidateSource,
    Dispute,
    FinalGrade,
    Grade,
    GradeHistory,
    Membership,
    Permission,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import User


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
