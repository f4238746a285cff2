"""Freezing a grading set: the preview (what is ready, what blocks it) and `pool_freeze`, which
writes the set's final grades as the next version of its pool through `pool_version_create`.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from annotator.disputes.models import DisputeStatus
from annotator.grading.settlement import open_queries_settle
from annotator.models import (
    Candidate,
    CandidateSource,
    FinalGradeRecheck,
    Grade,
    GradingSet,
    OpenQuery,
    Permission,
    Pool,
    PoolJudgment,
    PoolVersion,
    PoolVersionSource,
    StaleReason,
)
from annotator.pools.models import exclusion_text
from annotator.pools.services import (
    FreezeError,
    newer_version_refusal,
    pool_version_create,
    require_permission,
)
from annotator.web.text import clauses

if TYPE_CHECKING:
    from annotator.jobs.services import Progress

OPEN_DISPUTE = "open_dispute"
NO_FINAL_GRADE = "no_final_grade"


@lru_cache(maxsize=1024)
def _detail(why: str, values: tuple[tuple[str, Any], ...], language: str | None) -> str:
    """Blockers repeat a few sentences (tens of thousands of pairs left out, a handful of texts);
    `language` keys the cache, since the text is in the active language."""
    return exclusion_text(why, dict(values)) or why


@dataclass(frozen=True)
class Blocker:
    """A pair that cannot be frozen yet, and why."""

    query_id: str
    doc_id: str
    why: str  # OPEN_DISPUTE | NO_FINAL_GRADE
    values: dict[str, Any]  # the dispute status code, or how many grades are in of how many

    @property
    def detail(self) -> str:
        """In words, in the active language."""
        return _detail(self.why, tuple(sorted(self.values.items())), get_language())

    def as_exclusion(self, reason: str) -> dict[str, Any]:
        # The sentence for readers of the stored record; the code and values to say it in any language.
        return {
            "query_id": self.query_id,
            "doc_id": self.doc_id,
            "why": self.why,
            "values": self.values,
            "detail": self.detail,
            "reason": reason,
        }


class FreezeBlocked(FreezeError):
    def __init__(self, blockers: list[Blocker]) -> None:
        self.blockers = blockers
        listed = clauses(
            _("(%(query)s, %(document)s): %(problem)s")
            % {"query": b.query_id, "document": b.doc_id, "problem": b.detail}
            for b in blockers[:20]
        )
        more = _(" and %(n)d more") % {"n": len(blockers) - 20} if len(blockers) > 20 else ""
        super().__init__(
            _(
                "Pairs that cannot be frozen yet (%(n)d): %(list)s%(more)s. Settle them, or leave them out "
                "with a reason."
            )
            % {"n": len(blockers), "list": listed, "more": more}
        )


@dataclass(frozen=True, slots=True)
class FreezePair:
    """One pair of a set as freezing reads it: IDs and the facts about its grades, no texts.

    A set can hold a million pairs (pooled from deep runs): loading each as a Candidate with its
    document, query and grades takes gigabytes and ends in "too many SQL variables" on SQLite;
    these rows come from two queries, the pairs and their grades' facts grouped by pair.
    """

    pk: int
    query_id: str
    doc_id: str
    source: str
    source_detail: str
    added_by: str | None  # username of who added it, if anyone
    dispute_status: str | None  # None: no dispute
    grade: int | None  # the final grade; None: none yet
    final_source: str | None
    final_stale_reason: str | None
    criteria_number: int | None  # criteria version the final grade was decided under
    graders: int  # grades given (one per editor)
    stale_grades: int  # of those, marked for re-checking
    query_stale: bool  # a grade is marked for re-checking because the query changed
    # The newest document version among its grades: the content the final grade was decided on.
    graded_document_version: int | None

    FIELDS = (
        "pk",
        "query__external_id",
        "document__external_id",
        "source",
        "source_detail",
        "added_by__username",
        "dispute__status",
        "final_grade__grade",
        "final_grade__source",
        "final_grade__stale_reason",
        "final_grade__criteria_version__number",
    )

    @property
    def decided_on_unknown_query_text(self) -> bool:
        """The final grade stands on a query text that is not the current one, and which one is
        not known (queries keep no versions): its grades or the copied final grade are marked."""
        return self.query_stale or StaleReason.QUERY.value in (self.final_stale_reason or "").split(",")


@dataclass
class FreezePreview:
    """What freezing `grading_set` now would record, and what stands in the way."""

    grading_set: GradingSet
    candidates: list[FreezePair]
    blockers: list[Blocker]
    ready: list[FreezePair]
    frozen_as: PoolVersion | None  # set when the set was frozen already
    # Why the set cannot be frozen at all, whatever its pairs ("" if it can): a version newer than
    # the one it continues exists (another set froze, or a file was imported, meanwhile).
    refusal: str = ""

    @cached_property
    def inherited(self) -> dict[tuple[str, str], PoolJudgment]:
        """The judgments of the version this set continues, by (query, document)."""
        based_on = self.grading_set.based_on
        return {(j.query_id, j.doc_id): j for j in based_on.judgments.all()} if based_on is not None else {}

    def recorded_source(self, pair: FreezePair) -> str:
        """The source freezing records for a ready pair: its final grade's, except that a copy
        whose grade is unchanged keeps the source it had in the version it came from (an
        imported judgment stays "imported": FinalGrade has no such source, see
        grading_set_create_from_version)."""
        if pair.source == CandidateSource.COPIED:
            old = self.inherited.get((pair.query_id, pair.doc_id))
            if old is not None and old.grade == pair.grade:
                return old.source
        assert pair.final_source is not None  # ready pairs have a final grade
        return pair.final_source

    @property
    def criteria_versions(self) -> list[int]:
        """The criteria the final grades were decided under. An imported judgment carried along
        was judged under none of this project's versions, so it claims none."""
        return sorted(
            {
                p.criteria_number
                for p in self.ready
                if self.recorded_source(p) != "imported" and p.criteria_number
            }
        )

    @property
    def grade_counts(self) -> list[int]:
        counts = Counter(p.grade for p in self.ready)
        return [counts.get(g, 0) for g in range(4)]

    @property
    def stale_pairs(self) -> int:
        """Ready pairs marked for a reviewer's re-check: by a raw grade, or (a copy) by the final grade."""
        return sum(1 for p in self.ready if p.final_stale_reason or p.stale_grades)

    @property
    def blockers_key(self) -> str:
        """Names exactly which pairs block freezing: the freeze page sends it back, so that leaving
        out "the pairs listed above" leaves out those and no pair that blocked only later."""
        pairs = sorted(f"{b.query_id}\t{b.doc_id}\n" for b in self.blockers)
        return hashlib.sha256("".join(pairs).encode()).hexdigest()[:32]


NO_GRADES = (0, 0, False, None)


def _grade_facts(grading_set: GradingSet) -> dict[int, tuple[int, int, bool, int | None]]:
    """Per pair with grades: (graders, stale grades, a grade stale because the query changed, the
    newest document version graded). One grouped query: a correlated count per pair took most of a
    million-pair preview. The newest version is the highest ID: a document's versions are created
    in order, so a later version always has the larger ID."""
    stale_query = Q(stale=True, stale_reason__contains=StaleReason.QUERY.value)
    rows = (
        Grade.objects.filter(candidate__grading_set=grading_set)
        .order_by()
        .values("candidate_id")
        .annotate(
            graders=Count("id"),
            stale_grades=Count("id", filter=Q(stale=True)),
            query_stale=Count("id", filter=stale_query),
            newest=Max("document_version_id"),
        )
        .values_list("candidate_id", "graders", "stale_grades", "query_stale", "newest")
    )
    return {
        pk: (n, stale, query_stale > 0, newest) for pk, n, stale, query_stale, newest in rows.iterator(5000)
    }


def freeze_preview(grading_set: GradingSet) -> FreezePreview:
    """Read-only: every pair of the set, split into ready (final grade) and blocked."""
    facts = _grade_facts(grading_set)
    pairs = (
        Candidate.objects.filter(grading_set=grading_set)
        .order_by("query__external_id", "document__external_id")
        .values_list(*FreezePair.FIELDS)
    )
    candidates = [
        FreezePair(*(row + facts.get(row[0], NO_GRADES))) for row in pairs.iterator(chunk_size=5000)
    ]
    blockers, ready = [], []
    required = grading_set.required_grades
    for p in candidates:
        if p.dispute_status is not None and p.dispute_status != DisputeStatus.SETTLED:
            blockers.append(Blocker(p.query_id, p.doc_id, OPEN_DISPUTE, {"status": p.dispute_status}))
        elif p.grade is None:
            values = {"grades": p.graders, "required": required}
            if p.stale_grades:
                values["stale"] = p.stale_grades
            blockers.append(Blocker(p.query_id, p.doc_id, NO_FINAL_GRADE, values))
        else:
            ready.append(p)
    frozen_as = PoolVersion.objects.filter(grading_set=grading_set).select_related("pool").first()
    refusal = ""
    based_on = grading_set.based_on
    if frozen_as is None and based_on is not None:
        # The same check pool_version_create makes under the pool's lock, said before the form is
        # sent: a file imported as the next version meanwhile is said before the submit.
        pool = grading_set.pool or based_on.pool
        refusal = newer_version_refusal(pool, based_on, pool.latest_version())
    return FreezePreview(grading_set, candidates, blockers, ready, frozen_as, refusal)


# Details kept per source in a version's provenance: the most frequent ones, the rest summed in one
# entry. Pooled pairs' details name each pair's runs and ranks, so a deep pool has as many as it
# has pairs, and would print megabytes on the version page and in every manifest.
PROVENANCE_DETAILS = 50
_IMPORT_LINE = re.compile(r":\d+$")


def _natural(text: str) -> list[str | int]:
    """A sort key reading the digits in `text` as numbers (str and int alternate from a str)."""
    return [int(part) if i % 2 else part for i, part in enumerate(re.split(r"(\d+)", text))]


def _top_details(details: Counter[str]) -> list[dict[str, Any]]:
    """[{"detail", "pairs"}] for the most frequent details (then by name); what is left, as one
    entry with an empty detail and `other_details` (how many distinct details it sums), so that
    the pairs still add up to the source's."""
    # Ties in natural order, so that "bm25 #2" comes before "bm25 #10" (not #1, #10, #100, #11…).
    ranked = sorted(details.items(), key=lambda item: (-item[1], _natural(item[0])))
    kept = [{"detail": d, "pairs": n} for d, n in ranked[:PROVENANCE_DETAILS]]
    if rest := ranked[PROVENANCE_DETAILS:]:
        kept.append({"detail": "", "pairs": sum(n for _d, n in rest), "other_details": len(rest)})
    return kept


def _provenance(preview: FreezePreview, included: list[FreezePair], excluded: int) -> dict[str, Any]:
    """Where the frozen pairs came from: which runs and depths were pooled, manual additions,
    imports, copies. Pairs left out are only counted (`excluded_pairs`): the sources add up to the
    version's judgments."""
    by_source: dict[str, Counter[str]] = defaultdict(Counter)
    added_by: dict[str, Counter[str]] = defaultdict(Counter)
    for p in included:
        detail = p.source_detail or ""
        if p.source == CandidateSource.IMPORTED:
            detail = _IMPORT_LINE.sub("", detail)  # "file:line" → the file: one entry per file, not per pair
        by_source[p.source][detail] += 1
        if p.added_by is not None:
            added_by[p.source][p.added_by] += 1
    candidates = {
        source: {
            "pairs": sum(details.values()),
            "details": _top_details(details),
            **({"added_by": dict(sorted(added_by[source].items()))} if added_by[source] else {}),
        }
        for source, details in sorted(by_source.items())
    }
    gs = preview.grading_set
    based_on = gs.based_on
    return {
        "grading_set": {"id": gs.pk, "name": gs.name, "required_grades": gs.required_grades},
        "based_on": (
            {"pool": based_on.pool.name, "version": based_on.number, "sha256": based_on.sha256}
            if based_on
            else None
        ),
        "candidates": candidates,
        # As the judgments record them: imported grades carried along are not settled by a
        # reviewer, the stand-in source of their copied final grade.
        "final_grades": dict(sorted(Counter(preview.recorded_source(c) for c in included).items())),
        "excluded_pairs": excluded,
        # Frozen while marked for a re-check (the freeze page warned): the version page says so.
        "stale_pairs": preview.stale_pairs,
    }


@transaction.atomic
def pool_freeze(
    *,
    grading_set: GradingSet,
    by: User,
    exclude_unsettled: bool = False,
    reason: str = "",
    blockers_seen: str | None = None,
    progress: Progress | None = None,
) -> PoolVersion:
    """Freeze every final grade of `grading_set` as the next version of its pool (reviewer+).

    Refuses (FreezeBlocked, listing query, document and why) while pairs have an open dispute or
    no final grade, unless `exclude_unsettled` with a `reason`: those pairs are then left out and
    recorded in the version's `exclusions`. The set is closed for grading once frozen.
    `blockers_seen` (FreezePreview.blockers_key of the page the person read): when it no longer
    matches, nothing is left out unseen: FreezeError, and the page shows the list as it is now.
    `progress` (a job's): the judgments written of those ready.
    """
    require_permission(grading_set.project, by, Permission.FREEZE)
    # One freezer at a time per set: the second waits here, then finds the version and stops.
    grading_set = (
        GradingSet.objects.select_for_update(of=("self",))
        .select_related("pool", "based_on__pool")
        .get(pk=grading_set.pk)
    )
    # Every query still held open settles first, in this transaction: a freeze never reads a
    # query whose pairs wait for their editor to leave it (grading/settlement.py); the set closes,
    # so the editor learns nothing more on its page than that it is frozen.
    open_queries_settle(OpenQuery.objects.filter(grading_set=grading_set))
    preview = freeze_preview(grading_set)
    if preview.frozen_as is not None:
        raise FreezeError(
            _(
                "%(set)s was already frozen as %(pool)s version %(n)d. Start a new version from it to change "
                "anything."
            )
            % {"set": grading_set.name, "pool": preview.frozen_as.pool.name, "n": preview.frozen_as.number}
        )
    if preview.refusal:
        # Before the pairs: settling or leaving out pairs cannot make this set freezable.
        raise FreezeError(preview.refusal)
    reason = reason.strip()
    exclusions: list[dict[str, str]] = []
    if preview.blockers:
        if not exclude_unsettled:
            raise FreezeBlocked(preview.blockers)
        if not reason:
            raise FreezeError(_("Excluding pairs needs a reason: it is recorded in the version."))
        if blockers_seen is not None and blockers_seen != preview.blockers_key:
            raise FreezeError(
                _(
                    "The pairs that block freezing changed since this page was shown (%(n)d now). Check the "
                    "list again, then freeze."
                )
                % {"n": len(preview.blockers)}
            )
        exclusions = [b.as_exclusion(reason) for b in preview.blockers]
    if not preview.ready:
        raise FreezeError(
            _("%(set)s has no pair with a final grade: there is nothing to freeze.")
            % {"set": grading_set.name}
        )

    # The document version the final grade was decided on: the newest its grades read, unless a
    # reviewer's re-check of the settled pair (final_grade_recheck) read a newer one: the last re-check's.
    rechecked: dict[int, int] = dict(
        FinalGradeRecheck.objects.filter(candidate__grading_set=grading_set)
        .order_by("created_at", "pk")
        .values_list("candidate_id", "document_version_id")
    )
    # Copied pairs have no grades here: they keep what the version they came from recorded.
    inherited = preview.inherited
    fingerprints = {
        q.external_id: q.fingerprint
        for q in grading_set.queries().only("external_id", "text", "information_need")
    }

    judgments, document_versions, query_fingerprints = [], {}, {}
    for p in preview.ready:
        pair = (p.query_id, p.doc_id)
        old = inherited.get(pair)
        assert p.grade is not None  # ready: it has a final grade
        judgments.append((*pair, p.grade, preview.recorded_source(p)))
        if (graded := rechecked.get(p.pk, p.graded_document_version)) is not None:
            document_versions[pair] = graded
        elif old is not None and old.document_version_id is not None:
            document_versions[pair] = old.document_version_id
        # The query text the final grade stands on: a copy not re-checked here keeps what its
        # version recorded; else the current text, unless a mark says it changed since the grades
        # (then an earlier one, which the next version's copies are marked for again).
        carried = p.source == CandidateSource.COPIED and p.pk not in rechecked
        if carried and old is not None and old.query_fingerprint:
            query_fingerprints[pair] = old.query_fingerprint
        elif p.decided_on_unknown_query_text:
            query_fingerprints[pair] = PoolJudgment.EARLIER_QUERY_TEXT
        elif carried:
            query_fingerprints[pair] = ""  # carried from an import: still not known
        else:
            query_fingerprints[pair] = fingerprints[p.query_id]

    pool = grading_set.pool
    if pool is None:
        pool = Pool.objects.create(
            project=grading_set.project, name=Pool.unique_name(grading_set.project, grading_set.name)
        )
        grading_set.pool = pool
    if progress is not None:
        progress.stage("saving", total=len(preview.ready))
    try:
        version = pool_version_create(
            pool=pool,
            judgments=judgments,
            source=PoolVersionSource.FROZEN,
            by=by,
            grading_set=grading_set,
            criteria_versions=preview.criteria_versions,
            provenance=_provenance(preview, preview.ready, len(exclusions)),
            exclusions=exclusions,
            document_versions=document_versions,
            query_fingerprints=query_fingerprints,
            continues=grading_set.based_on,
            on_rows=progress.report if progress is not None else None,
        )
    except ValueError as exc:
        # Only IDs stored before the imports refused what a version cannot hold get here (the
        # imports check the same rule now); the transaction undoes the pool made above.
        raise FreezeError(_("This set cannot be frozen: %(error)s") % {"error": exc}) from exc
    grading_set.is_open = False  # graded and frozen: editors are done with this set
    grading_set.save(update_fields=["pool", "is_open"])
    return version
