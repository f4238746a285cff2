"""Grading workflows: saving and undoing grades, adding and removing candidates.

Every grade goes through `grade_submit`, so every grade records the document version and criteria
version it was made under, appends to the grade history, and asks the disputes service whether
the pair is now complete.
"""

from __future__ import annotations

import itertools
import random
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils.translation import gettext as _

from annotator.disputes.services import pair_settle_if_complete
from annotator.documents.models import chunked
from annotator.documents.readers import ImportFileError, LineError
from annotator.grading.models import FinalGradeQuerySet, GradeQuerySet, StaleReason
from annotator.grading.pooling import PooledPair
from annotator.grading.settlement import query_hold_open
from annotator.models import (
    GRADE_VALUES,
    Candidate,
    CandidateSource,
    CriteriaChange,
    CriteriaVersion,
    Document,
    DocumentVersion,
    FinalGrade,
    Grade,
    GradeHistory,
    GradingSet,
    Membership,
    Project,
    Query,
    Reservation,
)

# Import progress is reported (management commands) every this many records.
PROGRESS_EVERY = 1000
BATCH = 1000
# Candidates made and inserted at a time: each instance, with its statement's parameters, costs
# ~2 KB, many times a run file's line.
CANDIDATE_BATCH = 250


def flaggable(**lookups: Any) -> tuple[GradeQuerySet, FinalGradeQuerySet]:
    """What a change of text or criteria can mark for re-checking, narrowed by `lookups` (valid on
    both): the grades of open sets, and the final grades copied into open sets, which carry the
    flag themselves (no editor graded a copied pair there)."""
    return Grade.objects.in_open_sets().filter(**lookups), FinalGrade.objects.copied_in_open_sets().filter(
        **lookups
    )


def flag_for_recheck(reason: StaleReason, **lookups: Any) -> int:
    """Mark for re-checking, for `reason`, everything `flaggable(**lookups)` finds; how many now are."""
    grades, finals = flaggable(**lookups)
    return grades.mark_stale(reason) + finals.mark_stale(reason)


class GradingError(Exception):
    """A grade cannot be saved or undone; the message says why, in the reader's language."""


class PairLocked(GradingError):
    """The pair is settled or in dispute: the editor's grade changes only through the dispute flow."""


class CriteriaChanged(GradingError):
    """The criteria changed meaning after the page the grade came from was loaded."""


class QueryChanged(GradingError):
    """The query's text or information need changed after the page the grade came from showed it."""


class CriteriaOutdated(GradingError):
    """A criteria edit made on version `based_on` while version `latest` is the newest."""

    def __init__(self, latest: int, based_on: int) -> None:
        super().__init__(
            _(
                "Criteria version %(latest)d was published after this page showed version %(based)d: "
                "publishing your edit now would undo its changes. Read version %(latest)d below, make your "
                "edit on it, then publish."
            )
            % {"latest": latest, "based": based_on}
        )
        self.latest = latest


class UnknownDocumentVersion(GradingError):
    """The grade names a document (or criteria) version that never existed: bad input, not a change."""


# --- grading ---------------------------------------------------------------------------------


def _validate_value(value: object) -> int:
    # bool is an int in Python: True must not become grade 1.
    if type(value) is not int or value not in GRADE_VALUES:
        raise GradingError(_("A grade is a whole number from 0 to 3; got %(value)r.") % {"value": value})
    return value


def pair_lock_reason(candidate: Candidate) -> str | None:
    """Why grades of this pair can no longer change on the grading page, or None."""
    if hasattr(candidate, "final_grade"):
        return _("This pair is settled: changes go through a reviewer.")
    if hasattr(candidate, "dispute"):
        return _("This pair is in dispute: changes go through the dispute page.")
    return None


def _record(
    grade: Grade,
    *,
    by: User,
    kind: str,
    old: tuple[int | None, str],
    new: tuple[int | None, str],
    old_versions: tuple[int | None, int | None] = (None, None),
) -> None:
    """One history entry; `old_versions` = (document version, criteria version) the old grade had."""
    GradeHistory.objects.create(
        grade=grade,
        candidate_id=grade.candidate_id,
        editor_id=grade.editor_id,
        changed_by=by,
        kind=kind,
        old_grade=old[0],
        old_reason=old[1],
        new_grade=new[0],
        new_reason=new[1],
        old_document_version_id=old_versions[0],
        old_criteria_version_id=old_versions[1],
    )


def _settle_if_full(candidate: Candidate, *, grades: int, editor: User, settle_now: bool) -> None:
    """Let the pair settle once it holds `grades` (counted under its lock) of the ones it needs:
    a pair still short of grades, the usual save, reads nothing more. The outcome is set on
    `candidate`, so that it says what the pair is now. Without `settle_now` the pair's query is
    held open for `editor` instead (grading/settlement.py), and `candidate.held_open` says so."""
    if grades < candidate.grading_set.required_grades:
        return
    if not settle_now:
        query_hold_open(grading_set_id=candidate.grading_set_id, query_id=candidate.query_id, editor=editor)
        candidate.held_open = True  # type: ignore[attr-defined]
        return
    outcome = pair_settle_if_complete(candidate=candidate)
    if isinstance(outcome, FinalGrade):
        candidate.final_grade = outcome
    elif outcome is not None:
        candidate.dispute = outcome


def _query_read_shared(query_id: int) -> Query:
    """The query's text and information need, read under a shared lock (Model.lock_shared) in the
    same statement on PostgreSQL; SQLite's transactions here run one at a time and need none."""
    if connection.vendor != "postgresql":
        return Query.objects.only("text", "information_need").get(pk=query_id)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT text, information_need FROM annotator_query WHERE id = %s FOR SHARE", [query_id]
        )
        text, need = cursor.fetchone()
    return Query(pk=query_id, text=text, information_need=need)


def _release(candidate: Candidate, editor: User) -> None:
    """The editor's reservation of the pair ends with their grade; `reserved` was read with the pair
    under its lock, so a pair without one (most saves) costs no statement here."""
    if candidate.reserved:  # type: ignore[attr-defined]
        Reservation.objects.filter(candidate=candidate, editor=editor).delete()


@transaction.atomic
def grade_submit(
    *,
    candidate: Candidate,
    editor: User,
    value: int,
    reason: str = "",
    document_version: int | None = None,
    criteria_version: int | None = None,
    query_seen: str | None = None,
    project: Project | None = None,
    settle_now: bool = True,
) -> Grade:
    """Save `editor`'s grade for `candidate` (create or update), then let the pair settle if complete.

    The grading page passes `settle_now=False`: a pair it completes waits, unsettled, until the
    editor leaves its query (grading/settlement.py), so that no reply tells them whether they
    matched a colleague; until then they may change or undo the grade.

    Raises GradingError for a value outside 0..3, a closed set, a non-member, a document that
    changed since the editor read it (`document_version` = the version shown, when given),
    UnknownDocumentVersion for a version the document never had, QueryChanged for a query whose
    text changed since the page showed it (`query_seen` = its Query.fingerprint then, when given;
    queries keep no versions), and PairLocked once the pair is
    settled or in dispute, or has all its grades from other editors. The grading page always sends
    `document_version` (its form requires it); code that grades without a page, like the demo, may
    leave it out. Submitting the same
    grade twice stores one grade and one history entry; a new reason for the same grade is logged
    as REASON_EDITED, never as a change of grade. The candidate row is locked, so concurrent saves
    of one pair (by the same or different editors) are serialised and none is lost. The grade's
    `candidate` is the pair as read under that lock, with the final grade or dispute this save
    left it: the grading page shows the row from it without reading the pair again. With
    `project`, `candidate` may be unread (its key and set's only): a pair not in that set of that
    project raises Candidate.DoesNotExist.
    """
    value = _validate_value(value)
    reason = (reason or "").strip()
    # Before the pair: the freeze's order. (With `project`, the set is checked with the pair just
    # after; a shared lock on a set that turns out to be another project's only waits for its freeze.)
    GradingSet.objects.lock_shared(candidate.grading_set_id)
    # The pair with what the save checks about it, in one statement: whether the editor is a
    # member, the document version they grade (the current one), and whether they hold a reservation.
    candidate = (
        Candidate.objects.select_for_update(of=("self",))
        .select_related("grading_set__project", "query", "document", "final_grade", "dispute")
        .annotate(
            editor_is_member=Exists(
                Membership.objects.filter(project=OuterRef("grading_set__project"), user=editor)
            ),
            current_version_id=Subquery(
                DocumentVersion.objects.filter(
                    document=OuterRef("document"), version=OuterRef("document__version")
                ).values("pk")[:1]
            ),
            reserved=Exists(Reservation.objects.filter(candidate=OuterRef("pk"), editor=editor)),
        )
        .get(
            pk=candidate.pk,
            **(
                {}
                if project is None
                else {"grading_set_id": candidate.grading_set_id, "grading_set__project": project}
            ),
        )
    )
    grading_set = candidate.grading_set
    if not grading_set.is_open:
        raise GradingError(_("The grading set “%(set)s” is closed.") % {"set": grading_set.name})
    if not candidate.editor_is_member:  # type: ignore[attr-defined]
        raise GradingError(_("Only members of the project can grade in it."))
    locked = pair_lock_reason(candidate)
    if locked:
        if not Grade.objects.filter(candidate=candidate, editor=editor).exists():
            # Blind grading: whether the others agreed (settled) or not (dispute) is not for an
            # editor who never graded the pair; the page says the same for such a pair.
            locked = _("This pair already has all the grades it needs.")
        raise PairLocked(locked)
    if query_seen is not None:
        # Shared-locked first, so that a re-import changing the query waits for this save and then
        # flags the grade, or this save waits for it and reads the new text: read unlocked, a grade
        # committed just after the import's flagging stayed unflagged (it records no query version).
        query = _query_read_shared(candidate.query_id)
        # Before the document: the reply then shows the new query and the row's current text at once.
        if query_seen != query.fingerprint:
            raise QueryChanged(
                _(
                    "This query changed while you were reading it. The new text is shown now: read it and "
                    "grade again."
                )
            )
    document = candidate.document
    # Versions run 1..current, so a number outside that range was never shown to anyone: refuse it
    # as bad input instead of telling the editor that the document changed since "version 99".
    if document_version is not None and not 1 <= document_version <= document.version:
        raise UnknownDocumentVersion(
            _("Version %(version)s of this document does not exist. Reload the page and grade again.")
            % {"version": document_version}
        )
    if document_version is not None and document_version != document.version:
        raise GradingError(
            _(
                "This document changed while you were reading it (you saw version %(seen)d, it is now "
                "version %(now)d). The new text is shown now: read it and grade again."
            )
            % {"seen": document_version, "now": document.version}
        )
    doc_version_id: int | None = candidate.current_version_id  # type: ignore[attr-defined]
    if doc_version_id is None:  # a document without its current version's row: as a read of it would
        raise DocumentVersion.DoesNotExist(
            f"document {document.pk} has no row for version {document.version}"
        )
    criteria = CriteriaVersion.objects.current_for(grading_set.project)
    if criteria_version is not None and criteria_version != criteria.number:
        if not 1 <= criteria_version <= criteria.number:
            raise UnknownDocumentVersion(
                _("Version %(version)s of the criteria does not exist. Reload the page and grade again.")
                % {"version": criteria_version}
            )
        # A wording-only change keeps what each grade means (earlier grades stand), so only a
        # meaning change since the page was loaded refuses: the grade would be recorded under
        # criteria the editor never read.
        if CriteriaVersion.objects.filter(
            project=grading_set.project, number__gt=criteria_version, change=CriteriaChange.MEANING
        ).exists():
            raise CriteriaChanged(
                _(
                    "The criteria changed while you were reading (you saw version %(seen)d; version %(now)d "
                    "changes what the grades mean). They are shown now: read them and grade again."
                )
                % {"seen": criteria_version, "now": criteria.number}
            )

    grade = Grade.objects.filter(candidate=candidate, editor=editor).first()
    if grade is not None:
        grade.candidate = candidate
    # grade_count is kept by the database and read under the pair's lock (grading/counters.py).
    if grade is None and candidate.grade_count >= grading_set.required_grades:
        # Full (e.g. one grade awaits its editor's re-check): a further editor would make the pair
        # a three-way dispute. The page says the same and offers no buttons; this is the rule.
        raise PairLocked(_("This pair already has all the grades it needs."))
    if grade is None:
        try:
            # A savepoint on SQLite only: it cannot lock rows, so a twin may win the insert there;
            # elsewhere the pair's row lock serialises twins and the savepoint would cost two statements.
            with transaction.atomic(savepoint=not connection.features.has_select_for_update):
                grade = Grade.objects.create(
                    candidate=candidate,
                    editor=editor,
                    grade=value,
                    reason=reason,
                    criteria_version=criteria,
                    document_version_id=doc_version_id,
                )
        except IntegrityError:
            grade = Grade.objects.get(candidate=candidate, editor=editor)
            grade.candidate = candidate
        else:
            _record(grade, by=editor, kind=GradeHistory.Kind.CREATED, old=(None, ""), new=(value, reason))
            _release(candidate, editor)
            _settle_if_full(candidate, grades=candidate.grade_count + 1, editor=editor, settle_now=settle_now)
            return grade

    unchanged = grade.grade == value and grade.reason == reason
    if unchanged and not grade.stale:
        return grade  # a double submit: nothing new to store
    if grade.stale:
        kind = GradeHistory.Kind.RECHECKED
    elif grade.grade == value:
        kind = GradeHistory.Kind.REASON_EDITED
    else:
        kind = GradeHistory.Kind.CHANGED
    old = (grade.grade, grade.reason)
    old_versions = (grade.document_version_id, grade.criteria_version_id)
    grade.grade, grade.reason = value, reason
    grade.criteria_version, grade.document_version_id = criteria, doc_version_id
    # The reason stays (unused while not stale) so that undoing this re-check can restore it.
    grade.stale = False
    grade.save()
    _record(grade, by=editor, kind=kind, old=old, new=(value, reason), old_versions=old_versions)
    _release(candidate, editor)
    _settle_if_full(candidate, grades=candidate.grade_count, editor=editor, settle_now=settle_now)
    return grade


# What `u` on the grading page can take back; a dispute revision is not among them.
UNDOABLE = frozenset(
    {
        GradeHistory.Kind.CREATED,
        GradeHistory.Kind.CHANGED,
        GradeHistory.Kind.REASON_EDITED,
        GradeHistory.Kind.RECHECKED,
    }
)


@dataclass(frozen=True)
class UndoResult:
    candidate: Candidate
    grade: Grade | None  # None: the undone action was the first grade, so the pair is ungraded again
    undone: tuple[int, str] | None = None  # the grade and reason the undo replaced or deleted


def _undo_target(entries: Iterable[GradeHistory]) -> GradeHistory | None:
    """The newest action not yet undone, reading history newest first (each UNDONE cancels one)."""
    pending = 0
    for entry in entries:
        if entry.kind == GradeHistory.Kind.UNDONE:
            pending += 1
        elif entry.kind in UNDOABLE:
            if pending:
                pending -= 1
            else:
                return entry
        else:
            return None  # a dispute revision: nothing before it may be undone from the grading page
    return None


def undo_available(*, editor: User, grading_set: GradingSet, query: Query) -> bool:
    """Whether `grade_undo` would act: the editor's last action on the query is undoable and its
    pair is neither settled nor in dispute (the page offers undo only then)."""
    entries = GradeHistory.objects.filter(
        editor=editor, candidate__grading_set=grading_set, candidate__query=query
    ).order_by("-created_at", "-pk")[:500]
    target = _undo_target(entries.select_related("candidate__final_grade", "candidate__dispute"))
    return target is not None and target.candidate is not None and not pair_lock_reason(target.candidate)


@transaction.atomic
def grade_undo(*, editor: User, grading_set: GradingSet, query: Query) -> UndoResult:
    """Undo `editor`'s last grade action on this query of this set (repeatable, like an undo stack).

    The undo is itself recorded (history kind UNDONE). Undoing a first grade deletes the grade,
    undoing a change restores the previous grade and reason, undoing a re-check flags the grade
    stale again. Refused (PairLocked) once the pair is settled or in dispute.
    """
    entries = GradeHistory.objects.filter(
        editor=editor, candidate__grading_set=grading_set, candidate__query=query
    ).order_by("-created_at", "-pk")[:500]
    target = _undo_target(entries)
    if target is None:
        raise GradingError(_("There is nothing of yours to undo for this query."))
    # `entries` joins through candidate__grading_set, so an entry with a null candidate never matches.
    assert target.candidate_id is not None
    GradingSet.objects.lock_shared(grading_set.pk)
    candidate = (
        Candidate.objects.select_for_update(of=("self",))
        .select_related("grading_set")
        .get(pk=target.candidate_id)
    )
    if not candidate.grading_set.is_open:
        raise GradingError(_("The grading set “%(set)s” is closed.") % {"set": candidate.grading_set.name})
    locked = pair_lock_reason(candidate)
    if locked:
        if not Grade.objects.filter(candidate=candidate, editor=editor).exists():
            # Blind grading: whether the others agreed (settled) or not (dispute) is not for an
            # editor who never graded the pair; the page says the same for such a pair.
            locked = _("This pair already has all the grades it needs.")
        raise PairLocked(locked)
    grade = Grade.objects.filter(candidate=candidate, editor=editor).first()
    if grade is None:
        raise GradingError(_("There is nothing of yours to undo for this query."))
    old = (grade.grade, grade.reason)
    if target.old_grade is None:
        _record(grade, by=editor, kind=GradeHistory.Kind.UNDONE, old=old, new=(None, ""))
        grade.delete()  # history keeps candidate + editor (SET_NULL on the grade link)
        return UndoResult(candidate=candidate, grade=None, undone=old)
    before_versions = (grade.document_version_id, grade.criteria_version_id)
    grade.grade, grade.reason = target.old_grade, target.old_reason
    # Back on the texts the old grade was given on (entries from before these were recorded have none).
    if target.old_document_version_id is not None:
        grade.document_version_id = target.old_document_version_id
    if target.old_criteria_version_id is not None:
        grade.criteria_version_id = target.old_criteria_version_id
    if target.kind == GradeHistory.Kind.RECHECKED:
        grade.stale = True
        grade.stale_reason = grade.stale_reason or StaleReason.DOCUMENT.value  # set by the flag being undone
    grade.save()
    _record(
        grade,
        by=editor,
        kind=GradeHistory.Kind.UNDONE,
        old=old,
        new=(grade.grade, grade.reason),
        old_versions=before_versions,
    )
    return UndoResult(candidate=candidate, grade=grade, undone=old)


# --- candidates ------------------------------------------------------------------------------


@dataclass
class CandidateSummary:
    added: int = 0
    already: int = 0
    queries: int = 0
    runs: list[str] = field(default_factory=list)


def _refuse_closed(grading_set: GradingSet) -> None:
    """A closed set's pairs are a record of what was graded (and usually frozen): they stay as they are.

    Call inside the transaction that changes the pairs: the set's row stays locked until it ends,
    so a freeze (which locks the same row to close the set) waits for it, or it for the freeze.
    """
    is_open = (
        GradingSet.objects.select_for_update()
        .filter(pk=grading_set.pk)
        .values_list("is_open", flat=True)
        .first()
    )
    if not is_open:
        raise GradingError(
            _("The grading set “%(set)s” is closed: its pairs can no longer be added or removed.")
            % {"set": grading_set.name}
        )


@transaction.atomic
def candidates_add(
    *,
    grading_set: GradingSet,
    pairs: Sequence[PooledPair],
    by: User | None,
    depth: int | None = None,
) -> CandidateSummary:
    """Add (query, document) pairs to a set, all or nothing; every unknown ID is an error naming its line.

    With a `depth` the pairs are pooled from runs (provenance: each run and position that pooled
    it); without, they are imported as listed. Pairs already in the set are left as they are.
    A closed set (frozen, or closed by hand) takes no new pairs: GradingError.
    """
    _refuse_closed(grading_set)
    project = grading_set.project
    query_ids = {p.query_id for p in pairs}
    doc_ids = {p.doc_id for p in pairs}
    # {external ID: pk}, not model instances (~1 KB each): an upload pools every document it names.
    queries = _pks_by_external_id(Query.objects.filter(project=project), sorted(query_ids))
    documents = _pks_by_external_id(Document.objects.filter(project=project), sorted(doc_ids))
    del query_ids, doc_ids
    errors: list[LineError] = []
    more = 0
    for p in pairs:
        for name, value, known in (("query_id", p.query_id, queries), ("doc_id", p.doc_id, documents)):
            if value not in known:
                if len(errors) < 20:
                    message = (
                        _("no query with this ID in the project: import the queries first.")
                        if name == "query_id"
                        else _("no document with this ID in the project: import the documents first.")
                    )
                    errors.append(LineError(p.line, name, value, message, source=p.source))
                else:
                    more += 1
    if errors:
        raise ImportFileError(errors, more)
    source = CandidateSource.POOLED if depth else CandidateSource.IMPORTED
    fresh = _fresh_pairs(grading_set, pairs, queries, documents)
    summary = CandidateSummary()
    summary.already = len(pairs) - len(fresh)
    # Database IDs follow insertion order, and editors' pages carry candidate IDs: inserted in the
    # runs' rank order, sorting a page by ID would give a system's ranking back.
    random.SystemRandom().shuffle(fresh)
    # Model instances and their details a batch at a time: for every pair at once they cost many
    # times the run files' bytes.
    for batch in itertools.batched(fresh, CANDIDATE_BATCH):
        Candidate.objects.bulk_create(
            [
                Candidate(
                    grading_set=grading_set,
                    query_id=queries[p.query_id],
                    document_id=documents[p.doc_id],
                    source=source,
                    # Pooled: which runs put it in their top k, at which position. Imported: file and line.
                    source_detail=(p.provenance(depth) if depth else f"{p.source}:{p.line}")[:500],
                    added_by=by,
                )
                for p in map(pairs.__getitem__, batch)
            ]
        )
    summary.added = len(fresh)
    summary.queries = len(queries)
    summary.runs = sorted({run for p in pairs for run, _pos in p.hits})
    return summary


def _fresh_pairs(
    grading_set: GradingSet, pairs: Sequence[PooledPair], queries: dict[str, int], documents: dict[str, int]
) -> array[int]:
    """The positions in `pairs` of those to add, in order: neither in the set already nor given
    before in `pairs`. Found with arrays of their database IDs, not a set of every pair's tuple."""
    n = len(pairs)
    existing = set(Candidate.objects.filter(grading_set=grading_set).values_list("query_id", "document_id"))
    taken = np.fromiter(
        ((queries[p.query_id], documents[p.doc_id]) in existing for p in pairs), dtype=bool, count=n
    )
    del existing
    query_pks = np.fromiter((queries[p.query_id] for p in pairs), dtype=np.int64, count=n)
    document_pks = np.fromiter((documents[p.doc_id] for p in pairs), dtype=np.int64, count=n)
    # A pair given again: every occurrence after its first (lexsort is stable: first in file order).
    order = np.lexsort((document_pks, query_pks))
    again = (query_pks[order[1:]] == query_pks[order[:-1]]) & (
        document_pks[order[1:]] == document_pks[order[:-1]]
    )
    taken[order[1:][again]] = True
    fresh = array("q")
    fresh.frombytes(np.flatnonzero(~taken).astype(np.int64).tobytes())
    return fresh


def _pks_by_external_id(rows: QuerySet[Any], ids: Sequence[str]) -> dict[str, int]:
    """{external ID: pk} for those of `ids` found in `rows`, read in chunks."""
    found: dict[str, int] = {}
    for chunk in chunked(ids):
        found.update(rows.filter(external_id__in=chunk).values_list("external_id", "pk"))
    return found


@transaction.atomic
def candidates_add_by_hand(
    *, grading_set: GradingSet, query: Query, documents: Sequence[Document], by: User
) -> CandidateSummary:
    _refuse_closed(grading_set)
    summary = CandidateSummary(queries=1)
    documents = list(documents)
    random.SystemRandom().shuffle(documents)  # a hand-typed list may be a ranking too (see candidates_add)
    for document in documents:
        _candidate, created = Candidate.objects.get_or_create(
            grading_set=grading_set,
            query=query,
            document=document,
            defaults={"source": CandidateSource.MANUAL, "added_by": by},
        )
        if created:
            summary.added += 1
        else:
            summary.already += 1
    return summary


@transaction.atomic
def candidate_remove(*, candidate: Candidate) -> None:
    """Remove a pair nobody has graded yet (a grade, its history or a settlement keeps it).

    A pair copied from the frozen version a set continues is removed with its copied final grade:
    that grade was decided there, and stays there (the version is immutable); here it only means
    "keep this judgment in the next version". Removing it drops the pair from the next version, or,
    added again, has it graded anew, so a copied pair whose document changed can be graded on its
    new content, as the version page says.
    """
    candidate = (
        Candidate.objects.select_for_update(of=("self",)).select_related("grading_set").get(pk=candidate.pk)
    )
    _refuse_closed(candidate.grading_set)
    if candidate.grade_history.exists() or candidate.grades.exists():
        raise GradingError(_("This pair has been graded, so it stays: grades are never thrown away."))
    if candidate.source == CandidateSource.COPIED:  # never graded here (checked above): no dispute either
        FinalGrade.objects.filter(candidate=candidate).delete()
    elif pair_lock_reason(Candidate.objects.select_related("final_grade", "dispute").get(pk=candidate.pk)):
        raise GradingError(_("This pair is settled or in dispute, so it stays."))
    candidate.delete()
