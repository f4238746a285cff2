"""Grading sets (open pools), their candidate pairs, editors' grades and the grade history.

A grade is one editor's judgment of one candidate (query, document) pair. Grades are never deleted
or overwritten silently: every change appends a `GradeHistory` row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, overload

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce, Concat
from django.utils.translation import gettext_lazy as _

from annotator.documents.models import CriteriaVersion, Document, DocumentVersion, Query
from annotator.projects.models import Project, SharedLockQuerySet

if TYPE_CHECKING:
    from django.contrib.auth.models import User

GRADE_VALUES = (0, 1, 2, 3)
# The longest reason, note or explanation a person may write (grading reasons, dispute
# statements, revisions, settlement notes): one limit, so a reason carried from grading into a
# dispute always fits.
REASON_MAX_LENGTH = 5000


@dataclass(frozen=True)
class Progress:
    """`done` of `total` pairs; a bar on the page, never a per-grade breakdown (blindness)."""

    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 0


class CountedByDatabase(models.Model):
    """A model with counter columns that the database's triggers keep (migration grading_counters).

    A save of an existing row writes every column but those, so a stale copy in memory never
    overwrites a count that grades changed meanwhile.
    """

    counters: ClassVar[tuple[str, ...]] = ()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding and kwargs.get("update_fields") is None:
            written = [f for f in self._meta.concrete_fields if not f.primary_key]
            kwargs["update_fields"] = [f.name for f in written if f.name not in self.counters]
        super().save(*args, **kwargs)


class GradingSetQuerySet(SharedLockQuerySet["GradingSet"]):
    """`lock_shared(pk)`: every change to the grades of a set's pairs takes it first, before it
    reads whether the set is open: a freeze, which takes the row FOR UPDATE to close the set, then
    waits for the changes in flight, and a change waits for a freeze in flight and then finds the
    set closed, so no grade saved just after a freeze settles a pair the version left out."""

    def in_project(self, project: Project) -> GradingSetQuerySet:
        return self.filter(project=project)

    def open(self) -> GradingSetQuerySet:
        return self.filter(is_open=True)

    def with_progress(self, editor: User) -> GradingSetQuerySet:
        """`pairs_mine`: the pairs of each set graded by `editor` (the counters give the rest)."""
        mine = EditorProgress.objects.filter(grading_set=OuterRef("pk"), editor=editor).values("graded")
        return self.annotate(pairs_mine=Coalesce(Subquery(mine, output_field=IntegerField()), Value(0)))


class GradingSet(CountedByDatabase):
    """An open pool: queries and, per query, the candidate documents to grade."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="grading_sets")
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    required_grades = models.PositiveSmallIntegerField(
        _("grades required per pair"),
        default=2,
        help_text=_("Grades from distinct editors needed for each pair."),
    )
    # The pool lineage this set freezes into, and the frozen version it was started from (if any).
    pool = models.ForeignKey(
        "annotator.Pool", on_delete=models.PROTECT, null=True, blank=True, related_name="grading_sets"
    )
    based_on = models.ForeignKey(
        "annotator.PoolVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    is_open = models.BooleanField(_("open for grading"), default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    # Counters kept by the database (migration grading_counters): its pairs, and those done
    # (Candidate.done). Progress bars read them instead of counting 500,000 pairs per view.
    pair_count = models.PositiveIntegerField(default=0, editable=False)
    done_count = models.PositiveIntegerField(default=0, editable=False)
    counters = ("pair_count", "done_count")

    objects = GradingSetQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at"]
        verbose_name = _("grading set")
        verbose_name_plural = _("grading sets")
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="grading_set_unique_name"),
            models.CheckConstraint(
                condition=Q(required_grades__gte=1), name="grading_set_required_grades_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def progress(self) -> Progress:
        """Read now, in one query: every grade moves the counters, so a copy loaded before is stale."""
        done, total = GradingSet.objects.filter(pk=self.pk).values_list("done_count", "pair_count").get()
        return Progress(done=done, total=total)

    def annotated_progress(self) -> tuple[Progress, Progress]:
        """(whole set, the editor's share) as read with the set by `with_progress`."""
        mine: int = self.pairs_mine  # type: ignore[attr-defined]
        return Progress(done=self.done_count, total=self.pair_count), Progress(
            done=mine, total=self.pair_count
        )

    def progress_of(self, editor: User) -> Progress:
        """The editor's own share, read now: pairs of this set they have graded, out of all pairs."""
        return self.progress_with(editor)[1]

    def progress_with(self, editor: User) -> tuple[Progress, Progress]:
        """(whole set, the editor's share), read now in one query, as `progress` and `progress_of`."""
        sets = GradingSet.objects.filter(pk=self.pk).with_progress(editor)
        done, mine, total = sets.values_list("done_count", "pairs_mine", "pair_count").get()  # type: ignore[misc]
        return Progress(done=done, total=total), Progress(done=mine, total=total)

    def queries(self) -> models.QuerySet[Query]:
        """The queries with a pair in this set, in external ID order. The project's unique index on
        external IDs gives the order, and each query asks the pairs' unique index whether it has
        one here: no pair is joined or sorted (grouping the pairs by query took 1.5 s, with their
        count, for a set of 585,000 pairs on SQLite)."""
        in_set = Candidate.objects.filter(grading_set=self, query=OuterRef("pk"))
        return Query.objects.filter(project_id=self.project_id).filter(Exists(in_set)).order_by("external_id")


class PairsInOrder(Sequence["Candidate"]):
    """A set's pairs in (query, document) external-ID order, as a Paginator's object list.

    A page reads only the pairs of the queries it covers, found from per-query counts. Sorting
    every pair of the set for each page took 1 s for the first page and 3 s for a deep one, for
    585,000 pairs on SQLite.
    """

    # Queries counted per read: a first page reads one batch, not every query's pairs.
    COUNT_BATCH = 100

    def __init__(self, grading_set: GradingSet, pairs: CandidateQuerySet) -> None:
        self._set = grading_set
        self._pairs = pairs  # the set's pairs, with what the page shows of them
        self._counted: list[tuple[int, int]] = []  # (query pk, its pairs) in query order, so far

    @cached_property
    def _query_ids(self) -> list[int]:
        return list(self._set.queries().values_list("pk", flat=True))

    def _counts(self) -> Iterator[tuple[int, int]]:
        """(query pk, its pairs) in query order, counted a batch of queries at a time as needed."""
        yield from self._counted
        ids = self._query_ids
        for at in range(len(self._counted), len(ids), self.COUNT_BATCH):
            batch = ids[at : at + self.COUNT_BATCH]
            in_batch = Candidate.objects.filter(grading_set=self._set, query__in=batch).order_by()
            counts = dict(in_batch.values("query").annotate(n=Count("*")).values_list("query", "n"))
            for query in batch:
                self._counted.append((query, counts.get(query, 0)))
                yield self._counted[-1]

    @cached_property
    def _length(self) -> int:
        # The set's pair counter, read now (annotator/grading/counters.py): no pair is counted.
        return GradingSet.objects.filter(pk=self._set.pk).values_list("pair_count", flat=True).get()

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Candidate: ...
    @overload
    def __getitem__(self, index: slice) -> list[Candidate]: ...
    def __getitem__(self, index: int | slice) -> Candidate | list[Candidate]:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop = index.start or 0, index.stop if index.stop is not None else len(self)
        covered: list[int] = []
        skipped = position = 0
        for query, n in self._counts():
            if position >= stop:
                break
            if position + n > start:
                if not covered:
                    skipped = start - position  # pairs of the first covered query on earlier pages
                covered.append(query)
            position += n
        pairs = self._pairs.filter(query__in=covered).order_by("query__external_id", "document__external_id")
        return list(pairs[skipped : skipped + stop - start])


class CandidateSource(models.TextChoices):
    POOLED = "pooled", _("Pooled from runs")
    MANUAL = "manual", _("Added by hand")
    IMPORTED = "imported", _("Imported")
    COPIED = "copied", _("Copied from a frozen version")


def count_of(queryset: models.QuerySet, outer: str) -> Coalesce:
    """A correlated COUNT(*) subquery: cheaper than JOIN + GROUP BY and composable with more counts."""
    counted = (
        queryset.filter(**{outer: OuterRef("pk")})
        .order_by()
        .values(outer)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


class CandidateQuerySet(models.QuerySet["Candidate"]):
    def unsettled(self) -> CandidateQuerySet:
        """Pairs with neither a final grade nor a dispute: the only pairs whose grades may still change."""
        return self.filter(final_grade__isnull=True, dispute__isnull=True)

    def progress(self) -> Progress:
        totals = self.aggregate(total=Count("pk"), done=Count("pk", filter=Q(done=True)))
        return Progress(done=totals["done"], total=totals["total"])

    def final_to_recheck(self) -> CandidateQuerySet:
        """Settled pairs of open sets with a grade marked for re-checking, or a copied final grade
        marked itself (FinalGrade.stale_reason: no editor graded a copied pair here). Their editors
        cannot re-grade a settled pair: a reviewer re-checks the final grade (`final_grade_recheck`)."""
        # The pairs are found from the marks, read from partial indexes (marked rows are few): one
        # IN over the union of both, not an EXISTS or an IN test per settled pair (at 448,000
        # settled pairs the EXISTS took 4 s on SQLite, two IN tests 0.3 s on PostgreSQL).
        stale = Grade.objects.filter(stale=True).values("candidate")
        stale_finals = FinalGrade.objects.filter(MARKED_STALE).values("candidate")
        return self.filter(final_grade__isnull=False, grading_set__is_open=True).filter(
            pk__in=stale.union(stale_finals)
        )


class Candidate(CountedByDatabase):
    """One (query, document) pair to grade in a grading set, with where it came from."""

    grading_set = models.ForeignKey(GradingSet, on_delete=models.CASCADE, related_name="candidates")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="candidates")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="candidates")
    source = models.CharField(_("source"), max_length=16, choices=CandidateSource.choices)
    # e.g. "run bm25.trec, depth 10" or the import file name; shown as provenance, never to editors.
    source_detail = models.CharField(_("source detail"), max_length=500, blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    added_at = models.DateTimeField(_("added at"), auto_now_add=True)
    # Kept by the database's triggers (migration grading_counters), never written by the app: the
    # pair's grades, and whether it is done (settled, disputed, or holding the grades its set
    # requires). Queues, progress and locks read these instead of counting grades per pair.
    grade_count = models.PositiveSmallIntegerField(default=0, editable=False)
    done = models.BooleanField(default=False, editable=False)
    counters = ("grade_count", "done")

    objects = CandidateQuerySet.as_manager()

    class Meta:
        ordering = ["grading_set", "query", "document"]
        verbose_name = _("candidate")
        verbose_name_plural = _("candidates")
        constraints = [
            models.UniqueConstraint(
                fields=["grading_set", "query", "document"], name="candidate_unique_pair"
            ),
        ]
        # The pairs still open for grading, found without reading the done ones (the queue).
        indexes = [
            # With the ID: the queue counts and lists open pairs from the index alone.
            models.Index(
                fields=["grading_set", "query", "id"], condition=Q(done=False), name="candidate_open_work"
            )
        ]

    def __str__(self) -> str:
        return f"{self.query.external_id} / {self.document.external_id}"


class Reservation(models.Model):
    """A short claim on a pair by an editor, so two editors are not sent to the same last pair."""

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="reservations")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField(_("expires at"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["candidate", "editor"], name="reservation_unique_editor"),
        ]

    def __str__(self) -> str:
        return f"{self.candidate} reserved by {self.editor} until {self.expires_at:%H:%M}"


class OpenQuery(models.Model):
    """A query an editor is grading whose complete pairs wait for them to leave it before settling.

    Blindness to the end of a query: the grading page settles no pair, and opens no dispute, while
    the editor who completed it is still on its query, so no row tells them whether they matched
    a colleague. The pairs settle all at once when the editor leaves (grading/settlement.py), or
    once `touched_at` is older than settings.GRADING_IDLE_SETTLE.
    """

    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    grading_set = models.ForeignKey(GradingSet, on_delete=models.CASCADE, related_name="open_queries")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="+")
    touched_at = models.DateTimeField(_("last activity"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["editor", "grading_set", "query"], name="open_query_once"),
        ]
        indexes = [models.Index(fields=["touched_at"], name="open_query_touched")]

    def __str__(self) -> str:
        return f"{self.editor} on {self.query_id} of set {self.grading_set_id} since {self.touched_at:%H:%M}"


class StaleReason(models.TextChoices):
    """Why a grade needs re-checking; stored as codes, shown in the reader's language."""

    DOCUMENT = "document", _("The document changed since you graded it.")
    CRITERIA = "criteria", _("The criteria changed meaningfully since you graded it.")
    QUERY = "query", _("The query or its information need changed since you graded it.")

    @classmethod
    def labels_for(cls, codes: Iterable[str]) -> list[str]:
        """The reasons told to the grade's editor ("you"); an unknown code is shown as is."""
        labels = dict(cls.choices)
        return [str(labels.get(code, code)) for code in codes if code]

    @classmethod
    def labels_for_others(cls, codes: Iterable[str]) -> list[str]:
        """The same reasons told to anyone else (a reviewer): the same codes, in the third person."""
        labels = {
            cls.DOCUMENT.value: _("The document changed since this grade was given."),
            cls.CRITERIA.value: _("The criteria changed meaningfully since this grade was given."),
            cls.QUERY.value: _("The query or its information need changed since this grade was given."),
        }
        return [str(labels.get(code, code)) for code in codes if code]


class GradeQuerySet(models.QuerySet["Grade"]):
    def blind_for(self, editor: User) -> GradeQuerySet:
        """What an editor may see before a dispute reveals others' grades: only their own."""
        return self.filter(editor=editor)

    def in_open_sets(self) -> GradeQuerySet:
        return self.filter(candidate__grading_set__is_open=True)

    def stale(self) -> GradeQuerySet:
        return self.filter(stale=True)

    def to_recheck(self) -> GradeQuerySet:
        """Stale grades their editor can re-check: in an open set, on a pair neither settled nor in
        dispute (those change through a reviewer). What the "need re-checking" counts count."""
        return (
            self.stale()
            .in_open_sets()
            .filter(candidate__final_grade__isnull=True, candidate__dispute__isnull=True)
        )

    def mark_stale(self, reason: StaleReason) -> int:
        """Flag these grades for re-checking, adding `reason` to any reason already recorded.

        Returns how many grades carry the flag for this reason now. Bulk updates: a re-import may
        touch thousands of grades, and none of this is an edit of the grade itself (no history).
        """
        fresh = self.filter(stale=False).update(stale=True, stale_reason=reason.value)
        already = (
            self.filter(stale=True)
            .exclude(stale_reason__contains=reason.value)
            .update(stale_reason=Concat(F("stale_reason"), Value("," + reason.value)))
        )
        return fresh + already


class Grade(models.Model):
    """One editor's grade for one pair. Unique per (pair, editor); every change is in `history`."""

    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="grades")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="grades")
    grade = models.PositiveSmallIntegerField(_("grade"), choices=[(g, str(g)) for g in GRADE_VALUES])
    reason = models.TextField(_("reason"), blank=True)
    criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="grades")
    document_version = models.ForeignKey(DocumentVersion, on_delete=models.PROTECT, related_name="grades")
    # Stale: the document or the criteria changed meaningfully since; the grade must be re-checked.
    stale = models.BooleanField(_("needs re-check"), default=False)
    stale_reason = models.CharField(_("why it needs re-check"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    objects = GradeQuerySet.as_manager()

    class Meta:
        ordering = ["candidate", "created_at"]
        verbose_name = _("grade")
        verbose_name_plural = _("grades")
        constraints = [
            models.UniqueConstraint(fields=["candidate", "editor"], name="grade_unique_per_editor"),
            models.CheckConstraint(condition=Q(grade__gte=0) & Q(grade__lte=3), name="grade_between_0_and_3"),
        ]
        # The few grades marked for re-checking, found without reading every grade (re-check counts).
        indexes = [
            models.Index(fields=["candidate"], condition=Q(stale=True), name="grade_stale_candidate"),
            # An editor's graded pairs from the index alone: the queue leaves them out of every count.
            models.Index(fields=["editor", "candidate"], name="grade_editor_candidate"),
        ]

    def __str__(self) -> str:
        return f"{self.candidate}: {self.grade} by {self.editor}"

    def stale_for(self, reason: StaleReason) -> bool:
        """Marked for re-checking for `reason` (among others, perhaps)."""
        return self.stale and reason.value in self.stale_reason.split(",")

    def stale_reasons(self) -> list[str]:
        """The reasons this grade needs re-checking, translated, told to its editor."""
        return StaleReason.labels_for(self.stale_reason.split(","))

    def stale_reasons_for_others(self) -> list[str]:
        """The same reasons told to someone other than the grade's editor (e.g. its reviewer)."""
        return StaleReason.labels_for_others(self.stale_reason.split(","))


class EditorProgress(models.Model):
    """How many pairs of a set an editor has graded: kept by the database's triggers on grades
    (migration grading_counters), so "your progress" is one row, not a count of their grades."""

    grading_set = models.ForeignKey(GradingSet, on_delete=models.CASCADE, related_name="+")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    graded = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["grading_set", "editor"], name="editor_progress_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.editor} graded {self.graded} in {self.grading_set}"


class GradeHistory(models.Model):
    """Append-only log of every grade change: who, old, new, reason, when."""

    class Kind(models.TextChoices):
        CREATED = "created", _("Graded")
        CHANGED = "changed", _("Changed")
        # Same grade, another reason: kept apart from CHANGED so that no one reads "from 2 to 2".
        REASON_EDITED = "reason_edited", _("Reason edited")
        UNDONE = "undone", _("Undone")
        REVISED = "revised", _("Revised after the reveal")
        RECHECKED = "rechecked", _("Re-checked")
        # A grade awaiting re-check whose editor left the project: nobody else may re-check it,
        # so it is taken out and the pair asks another editor (see membership_remove).
        WITHDRAWN = "withdrawn", _("Withdrawn: the editor left the project")

    # Undoing a first grade deletes the Grade (it never existed as far as counting and settling
    # go); its history stays, still naming the pair and the editor, so nothing is forgotten.
    grade = models.ForeignKey(Grade, on_delete=models.SET_NULL, null=True, blank=True, related_name="history")
    candidate = models.ForeignKey(
        Candidate, on_delete=models.PROTECT, null=True, blank=True, related_name="grade_history"
    )
    editor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    old_grade = models.PositiveSmallIntegerField(null=True, blank=True)
    new_grade = models.PositiveSmallIntegerField(null=True, blank=True)
    old_reason = models.TextField(blank=True)
    new_reason = models.TextField(blank=True)
    # The document and criteria versions the old grade was given on: what an undo puts back with
    # it (a re-check moves the grade to the new text; undoing it must not leave it there).
    old_document_version = models.ForeignKey(
        DocumentVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    old_criteria_version = models.ForeignKey(
        CriteriaVersion, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("grade history entry")
        verbose_name_plural = _("grade history")

    def __str__(self) -> str:
        return f"{self.candidate}: {self.old_grade} -> {self.new_grade} ({self.kind})"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ValueError("Grade history is append-only.")
        # Callers may pass only `grade`; the pair and editor are copied so the entry outlives it.
        if self.grade_id is not None:
            if self.candidate_id is None:
                self.candidate_id = self.grade.candidate_id
            if self.editor_id is None:
                self.editor_id = self.grade.editor_id
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class FinalSource(models.TextChoices):
    UNANIMOUS = "unanimous", _("Unanimous")
    DISCUSSION = "discussion", _("Agreed after discussion")
    ADJUDICATED = "adjudicated", _("Settled by a reviewer")


# A final grade marked for re-checking. Queries filter with this very Q so that they match, and
# use, the partial index on it (few rows carry a mark).
MARKED_STALE = ~Q(stale_reason="")


class FinalGradeQuerySet(models.QuerySet["FinalGrade"]):
    def in_project(self, project: Project) -> FinalGradeQuerySet:
        return self.filter(candidate__grading_set_id__in=project.set_ids())

    def copied_in_open_sets(self) -> FinalGradeQuerySet:
        """Final grades copied from a frozen version into an open set: no editor graded those
        pairs here, so their own `stale_reason` is what marks them for a reviewer's re-check."""
        return self.filter(candidate__source=CandidateSource.COPIED, candidate__grading_set__is_open=True)

    def mark_stale(self, reason: StaleReason) -> int:
        """Add `reason` to these final grades' re-check reasons (as Grade.mark_stale does for raw
        grades); returns how many carry it now."""
        fresh = self.filter(stale_reason="").update(stale_reason=reason.value)
        already = (
            self.exclude(stale_reason="")
            .exclude(stale_reason__contains=reason.value)
            .update(stale_reason=Concat(F("stale_reason"), Value("," + reason.value)))
        )
        return fresh + already


class FinalGrade(models.Model):
    """The settled grade of a pair, with its provenance. One per pair, enforced by the database."""

    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="final_grade")
    grade = models.PositiveSmallIntegerField(_("grade"))
    source = models.CharField(_("source"), max_length=16, choices=FinalSource.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    note = models.TextField(_("note"), blank=True)
    criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(_("decided at"), auto_now_add=True)
    # StaleReason codes, comma-separated, for a copied final grade only (a pair copied from a frozen
    # version has no raw grade here to carry the flag): its document, query or criteria changed
    # since it was decided, and a reviewer re-checks it (final_grade_recheck clears it).
    stale_reason = models.CharField(_("re-check reason"), max_length=64, blank=True, default="")

    objects = FinalGradeQuerySet.as_manager()

    class Meta:
        verbose_name = _("final grade")
        verbose_name_plural = _("final grades")
        constraints = [
            models.CheckConstraint(condition=Q(grade__lte=3), name="final_grade_between_0_and_3"),
            models.CheckConstraint(
                condition=Q(source__in=[s.value for s in FinalSource]), name="final_grade_source_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["candidate"], condition=MARKED_STALE, name="final_grade_stale_candidate")
        ]

    def __str__(self) -> str:
        return f"{self.candidate}: {self.grade} ({self.get_source_display()})"


class FinalGradeRecheckQuerySet(models.QuerySet["FinalGradeRecheck"]):
    def in_project(self, project: Project) -> FinalGradeRecheckQuerySet:
        return self.filter(candidate__grading_set_id__in=project.set_ids())


class FinalGradeRecheck(models.Model):
    """A reviewer's re-check of a settled pair whose grades went stale: append-only.

    Once a pair is settled its editors can no longer re-grade it, so when its document, query or
    criteria change meaningfully a reviewer reads the pair again and keeps or changes the final
    grade (`final_grade_recheck`). The row keeps what the final grade was before (grade, source,
    who decided, note, criteria) and what the reviewer read (document and criteria versions), so
    the final grade's provenance survives the change.
    """

    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="final_rechecks")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # The stale reasons of the pair's grades when it was re-checked (StaleReason codes, comma-separated).
    reasons = models.CharField(_("why it was re-checked"), max_length=200, blank=True)
    old_grade = models.PositiveSmallIntegerField(_("grade before"))
    old_source = models.CharField(_("source before"), max_length=16, choices=FinalSource.choices)
    old_decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    old_note = models.TextField(_("note before"), blank=True)
    old_criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="+")
    old_decided_at = models.DateTimeField(_("decided at before"))
    new_grade = models.PositiveSmallIntegerField(_("grade"))
    note = models.TextField(_("note"), blank=True)
    # What the reviewer read: freezing records this document version for the pair.
    document_version = models.ForeignKey(
        "annotator.DocumentVersion", on_delete=models.PROTECT, related_name="+"
    )
    criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(_("re-checked at"), auto_now_add=True)

    objects = FinalGradeRecheckQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "pk"]
        verbose_name = _("final grade re-check")
        verbose_name_plural = _("final grade re-checks")
        constraints = [
            models.CheckConstraint(
                condition=Q(old_grade__lte=3) & Q(new_grade__lte=3), name="final_recheck_grades_0_to_3"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.candidate}: {self.old_grade} -> {self.new_grade} (re-checked by {self.reviewer})"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ValueError("Final grade re-checks are append-only.")
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def changed_grade(self) -> bool:
        return self.new_grade != self.old_grade
