"""Runs (a system's ranked output, kept exactly as uploaded) and comparisons of two runs.

A comparison pins everything a number depends on (the frozen pool version and its SHA-256, the
runs, K, every policy, the seed) and stores its per-query results: a permalink always means the
same numbers, and pages never recompute them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from annotator.models import PoolVersion, Project
from evaluation import metrics
from evaluation.formats.registry import FORMATS


class ImmutableFieldError(Exception):
    """Somebody tried to change a field that is fixed once the row exists."""


class FrozenFieldsQuerySet(models.QuerySet):
    """`QuerySet.update()` bypasses `save()`: refuse it for the frozen fields too."""

    frozen_fields: frozenset[str] = frozenset()

    def update(self, **kwargs: Any) -> int:
        touched = self.frozen_fields & set(kwargs)
        if touched:
            raise ImmutableFieldError(
                f"{self.model.__name__}: {', '.join(sorted(touched))} never change after creation"
            )
        return super().update(**kwargs)


class FrozenFieldsModel(models.Model):
    """Refuses `save()` of an existing row when one of `FROZEN_FIELDS` differs from the database."""

    FROZEN_FIELDS: tuple[str, ...] = ()

    if TYPE_CHECKING:
        # Abstract, so Django adds no manager here; every concrete subclass declares `objects`.
        objects: models.Manager[Any]

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            stored = type(self).objects.filter(pk=self.pk).values(*self._frozen_attnames()).first()
            if stored is not None:
                changed = [
                    name
                    for name, attname in zip(self.FROZEN_FIELDS, self._frozen_attnames(), strict=True)
                    if _normalise(getattr(self, attname)) != _normalise(stored[attname])
                ]
                if changed:
                    raise ImmutableFieldError(
                        f"{type(self).__name__} {self.pk}: {', '.join(changed)} never change after creation"
                    )
        super().save(*args, **kwargs)

    def _frozen_attnames(self) -> list[str]:
        # FROZEN_FIELDS name concrete fields of the model, never reverse relations (no attname).
        return [
            cast("models.Field[Any, Any]", self._meta.get_field(name)).attname for name in self.FROZEN_FIELDS
        ]


def _normalise(value: Any) -> Any:
    # BinaryField values come back as memoryview on PostgreSQL and bytes on SQLite.
    return bytes(value) if isinstance(value, memoryview) else value


# ---- Runs -----------------------------------------------------------------------------------------


# The run formats of the registry (RunFormat.TREC == "trec", ...), labelled in the UI language.
RunFormat = models.TextChoices(  # type: ignore[call-overload]  # the stubs lack the (name, value) pairs form
    "RunFormat",
    [(name.upper(), (name, _(fmt.run_description))) for name, fmt in FORMATS.items() if fmt.holds("run")],
)


# The file name a run pasted into the upload form is stored under (it has none of its own).
PASTED_FILE_NAME = "pasted.txt"


RUN_FROZEN = (
    "project",
    "format",
    "file_name",
    "raw",
    "sha256",
    "size",
    "has_scores",
    "query_count",
    "entry_count",
)


class RunQuerySet(FrozenFieldsQuerySet):
    frozen_fields = frozenset(RUN_FROZEN)

    def in_project(self, project: Project) -> RunQuerySet:
        return self.filter(project=project)

    def listing(self) -> RunQuerySet:
        """Everything a list page shows, without the (possibly large) raw and parsed payloads."""
        return self.defer("raw").select_related("uploaded_by")


class Run(FrozenFieldsModel):
    """One system's ranked output for a set of queries, kept byte for byte as uploaded."""

    FROZEN_FIELDS = RUN_FROZEN

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="runs")
    name = models.CharField(_("name"), max_length=200)
    notes = models.TextField(_("notes"), blank=True)
    format = models.CharField(_("format"), max_length=16, choices=RunFormat.choices)
    file_name = models.CharField(_("file name"), max_length=255)
    # The upload exactly as received (pasted text is stored as its UTF-8 bytes) and its SHA-256,
    # so anyone can check that the file they download is the one that was scored.
    raw = models.BinaryField(_("uploaded bytes"))
    sha256 = models.CharField(_("SHA-256"), max_length=64)
    size = models.PositiveBigIntegerField(_("size in bytes"))
    # The parsed ranking lives in RunQuery rows, one per query (see there).
    has_scores = models.BooleanField(_("has scores"))
    query_count = models.PositiveIntegerField(_("queries"))
    entry_count = models.PositiveIntegerField(_("ranked entries"))
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    uploaded_at = models.DateTimeField(_("uploaded at"), auto_now_add=True)

    objects = RunQuerySet.as_manager()

    # Not stored: what the reader warned about on upload (see run_upload), for the page that
    # follows the upload to show once; a run loaded from the database has none.
    upload_warnings: tuple[str, ...] = ()

    class Meta:
        ordering = ["project", "-uploaded_at", "-pk"]
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="run_unique_name"),
            models.CheckConstraint(
                condition=Q(format__in=[f.value for f in RunFormat]), name="run_format_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("run_detail", kwargs={"slug": self.project.slug, "run_id": self.pk})

    @staticmethod
    def rows_of(run: metrics.Run) -> Iterator[RunQuery]:
        """Unsaved RunQuery rows that store an engine `Run` (the inverse of `engine_runs`), made
        as they are consumed: stored in batches, a large run never has all of them in memory."""
        for position, query in enumerate(run.query_ids):
            ranking = run.ranking(query)
            scores = run.scores_of(query)
            lines = run.lines_of(query) or (0,) * len(ranking)
            yield RunQuery(
                position=position,
                query_id=query,
                doc_ids="\n".join(ranking),
                size=len(ranking),
                scores=np.asarray(scores, dtype="<f8").tobytes() if scores is not None else None,
                lines=np.asarray(lines, dtype="<i8").tobytes(),
            )

    def engine_run(self, name: str | None = None) -> metrics.Run:
        """The parsed ranking as the scoring engine's `Run` (one query over RunQuery)."""
        return Run.engine_runs([self])[self.pk]

    @staticmethod
    def engine_runs(runs: list[Run]) -> dict[int, metrics.Run]:
        """{run pk: engine Run} for several runs, read in one query.

        The rows were produced by the engine's own readers (or the pasted-lists parser, which
        builds a validated Run) at upload and never change, so they are handed over as trusted:
        re-validating a million rows would cost more than scoring them.
        """
        columns: dict[int, tuple[list[str], list[str], list[int], list[bytes], list[bytes]]] = {
            run.pk: ([], [], [0], [], []) for run in runs
        }
        rows = (
            RunQuery.objects.filter(run__in=[run.pk for run in runs])
            .order_by("run", "position")
            .values_list("run_id", "query_id", "doc_ids", "size", "scores", "lines")
        )
        scores: bytes | memoryview | np.ndarray | None  # a row's stored bytes, then a run's decoded array
        for run_id, query_id, doc_ids, size, scores, lines in rows:
            query_ids, blocks, offsets, score_parts, line_parts = columns[run_id]
            query_ids.append(query_id)
            if size:
                blocks.append(doc_ids)
            offsets.append(offsets[-1] + size)
            if scores is not None:
                score_parts.append(bytes(scores))
            line_parts.append(bytes(lines))
        result = {}
        for run in runs:
            query_ids, blocks, offsets, score_parts, line_parts = columns[run.pk]
            # One split of the whole run: much faster than one per query.
            docs = "\n".join(blocks).split("\n") if blocks else []
            scores = (
                np.frombuffer(b"".join(score_parts), dtype="<f8").astype(np.float64)
                if run.has_scores
                else None
            )
            result[run.pk] = metrics.Run._trusted(
                query_ids,
                docs,
                np.asarray(offsets, dtype=np.int64),
                scores=scores,
                lines=np.frombuffer(b"".join(line_parts), dtype="<i8").astype(np.int64),
                name=run.name,
                source=run.file_name,
            )
        return result


class RunQueryQuerySet(FrozenFieldsQuerySet):
    frozen_fields = frozenset({"run", "position", "query_id", "doc_ids", "size", "scores", "lines"})


class RunQuery(FrozenFieldsModel):
    """One query's parsed ranking in a run: document IDs in input order, scores, file lines.

    One row per query (not one per document, nor one blob per run) so that a page can read a
    single query of a million-row run, and a comparison can read a whole run in one query.
    Scores are kept, not turned into an order: each comparison orders them under its tie policy.
    """

    FROZEN_FIELDS = ("run", "position", "query_id", "doc_ids", "size", "scores", "lines")

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="queries")
    position = models.PositiveIntegerField(_("position in the file"))
    query_id = models.CharField(_("query ID"), max_length=255)
    # Joined by LF: IDs never hold a line break (services.run_parse refuses them, as pools do).
    doc_ids = models.TextField(_("document IDs"), blank=True)
    size = models.PositiveIntegerField(_("ranked documents"))
    # Little-endian float64 / int64 arrays, one value per document (scores null: ordered list).
    scores = models.BinaryField(_("scores"), null=True)
    lines = models.BinaryField(_("file lines"))

    objects = RunQueryQuerySet.as_manager()

    class Meta:
        ordering = ["run", "position"]
        verbose_name = _("run query")
        verbose_name_plural = _("run queries")
        constraints = [
            models.UniqueConstraint(fields=["run", "query_id"], name="run_query_unique_query"),
            models.UniqueConstraint(fields=["run", "position"], name="run_query_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.run} · {self.query_id}"

    def ranking(self, limit: int | None = None) -> QueryRanking:
        """The query's rows in input order; with `limit`, only the first that many are decoded
        (the run page previews a few rows of rankings that may hold a million)."""
        count = self.size if limit is None else min(limit, self.size)
        docs = tuple(self.doc_ids.split("\n", count)[:count]) if count else ()
        scores = (
            tuple(np.frombuffer(self.scores, dtype="<f8", count=count).tolist())
            if self.scores is not None
            else None
        )
        return QueryRanking(docs, scores, tuple(np.frombuffer(self.lines, dtype="<i8", count=count).tolist()))


@dataclass(frozen=True)
class QueryRanking:
    """One query's rows of a run, in input order (scores None for an ordered list)."""

    doc_ids: tuple[str, ...]
    scores: tuple[float, ...] | None
    lines: tuple[int, ...]


# ---- Comparisons ----------------------------------------------------------------------------------


class Gain(models.TextChoices):
    LINEAR = "linear", _("linear: gain = grade")
    EXPONENTIAL = "exponential", _("exponential: gain = 2^grade − 1")


class UnjudgedPolicy(models.TextChoices):
    ERROR = "error", _("error: a ranked ID without a grade in the pool is refused")
    ZERO = "zero", _("zero: a ranked ID without a grade scores 0 (and is counted)")


class ZeroIdcgPolicy(models.TextChoices):
    ZERO = "zero", _("zero: a query whose pool has no grade above 0 scores 0 and stays in the mean")
    EXCLUDE = "exclude", _("exclude: such a query is left out of the mean (and counted)")


class TiesPolicy(models.TextChoices):
    ERROR = "error", _("error: equal scores in one query are refused")
    DOCID_DESC = "docid-desc", _("document ID descending (trec_eval's rule)")
    DOCID_ASC = "docid-asc", _("document ID ascending")
    INPUT_ORDER = "input-order", _("file order")
    EXPECTED = "expected", _("expected DCG over all orders of each tied group (scikit-learn)")


class MissingQueriesPolicy(models.TextChoices):
    ZERO = "zero", _("zero: a pool query absent from a run is an empty ranking (scores 0, counted)")
    ERROR = "error", _("error: every pool query must be in both runs")


class ExtraQueriesPolicy(models.TextChoices):
    ERROR = "error", _("error: a run query that is not in the pool is refused")
    IGNORE = "ignore", _("ignore: such queries are skipped (and counted)")


COMPARISON_SETTINGS = (
    "pool_version",
    "pool_sha256",
    "run_a",
    "run_b",
    "k",
    "gain",
    "unjudged",
    "zero_idcg",
    "ties",
    "missing_queries",
    "extra_queries",
    "seed",
)


class ComparisonQuerySet(FrozenFieldsQuerySet):
    frozen_fields = frozenset({*COMPARISON_SETTINGS, "project", "results", "summary", "engine"})

    def in_project(self, project: Project) -> ComparisonQuerySet:
        return self.filter(project=project)

    def listing(self) -> ComparisonQuerySet:
        # "project": each row links to its page, whose URL holds the project's slug.
        return self.defer("results", "pool_version__canonical", "run_a__raw", "run_b__raw").select_related(
            "pool_version__pool", "run_a", "run_b", "created_by", "project"
        )

    def for_pages(self) -> ComparisonQuerySet:
        """One query for everything the comparison pages show, without the runs' payloads."""
        return self.select_related("pool_version__pool", "run_a", "run_b", "created_by", "project").defer(
            "pool_version__canonical", "run_a__raw", "run_b__raw"
        )


class Comparison(FrozenFieldsModel):
    """Run A against run B on one frozen pool version, under pinned settings, with the results."""

    FROZEN_FIELDS = (*COMPARISON_SETTINGS, "project", "results", "summary", "engine")

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="comparisons")
    name = models.CharField(_("name"), max_length=200)
    notes = models.TextField(_("notes"), blank=True)
    pool_version = models.ForeignKey(PoolVersion, on_delete=models.PROTECT, related_name="comparisons")
    # The pool's hash when the comparison was computed: pages check it still matches.
    pool_sha256 = models.CharField(_("pool SHA-256"), max_length=64)
    # RESTRICT: a run used by a comparison cannot be deleted on its own, yet deleting the whole
    # project (which cascades to both) still works.
    run_a = models.ForeignKey(Run, on_delete=models.RESTRICT, related_name="+", verbose_name=_("run A"))
    run_b = models.ForeignKey(Run, on_delete=models.RESTRICT, related_name="+", verbose_name=_("run B"))
    k = models.PositiveIntegerField("K")
    gain = models.CharField(_("gain"), max_length=16, choices=Gain.choices, default=Gain.LINEAR)
    unjudged = models.CharField(
        _("unjudged IDs"), max_length=16, choices=UnjudgedPolicy.choices, default=UnjudgedPolicy.ERROR
    )
    zero_idcg = models.CharField(
        _("zero IDCG"), max_length=16, choices=ZeroIdcgPolicy.choices, default=ZeroIdcgPolicy.ZERO
    )
    ties = models.CharField(_("ties"), max_length=16, choices=TiesPolicy.choices, default=TiesPolicy.ERROR)
    missing_queries = models.CharField(
        _("missing queries"),
        max_length=16,
        choices=MissingQueriesPolicy.choices,
        default=MissingQueriesPolicy.ZERO,
    )
    extra_queries = models.CharField(
        _("extra queries"),
        max_length=16,
        choices=ExtraQueriesPolicy.choices,
        default=ExtraQueriesPolicy.ERROR,
    )
    seed = models.PositiveBigIntegerField(_("random seed"), default=0)
    # The engine's output, full precision, in the results shape of evaluation/metrics/results.py
    # (`Results.to_dict()`; `from_dict()` also reads version 1). Written once, at creation.
    results = models.JSONField(_("results"), editable=False)
    # The headline numbers (means, delta, wins/ties/losses), small enough for list pages.
    summary = models.JSONField(_("summary"), editable=False, default=dict)
    engine = models.JSONField(_("engine settings"), default=dict, editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = ComparisonQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-created_at", "-pk"]
        verbose_name = _("comparison")
        verbose_name_plural = _("comparisons")
        constraints = [
            models.CheckConstraint(condition=Q(k__gte=1), name="comparison_k_positive"),
            models.CheckConstraint(condition=~Q(run_a=F("run_b")), name="comparison_two_different_runs"),
            models.CheckConstraint(
                condition=Q(gain__in=[c.value for c in Gain]), name="comparison_gain_valid"
            ),
            models.CheckConstraint(
                condition=Q(unjudged__in=[c.value for c in UnjudgedPolicy]), name="comparison_unjudged_valid"
            ),
            models.CheckConstraint(
                condition=Q(zero_idcg__in=[c.value for c in ZeroIdcgPolicy]),
                name="comparison_zero_idcg_valid",
            ),
            models.CheckConstraint(
                condition=Q(ties__in=[c.value for c in TiesPolicy]), name="comparison_ties_valid"
            ),
            models.CheckConstraint(
                condition=Q(missing_queries__in=[c.value for c in MissingQueriesPolicy]),
                name="comparison_missing_queries_valid",
            ),
            models.CheckConstraint(
                condition=Q(extra_queries__in=[c.value for c in ExtraQueriesPolicy]),
                name="comparison_extra_queries_valid",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("comparison_detail", kwargs={"slug": self.project.slug, "comparison_id": self.pk})

    @property
    def settings(self) -> dict[str, Any]:
        """The pinned settings in the engine's vocabulary (also the export's `settings`)."""
        return {
            "k": self.k,
            "gain": self.gain,
            "unjudged": self.unjudged,
            "zero_idcg": self.zero_idcg,
            "ties": self.ties,
            "missing_queries": self.missing_queries,
            "extra_queries": self.extra_queries,
            "seed": self.seed,
        }

    @property
    def pool_hash_matches(self) -> bool:
        """False when the pool version's recorded hash is no longer the one this was computed on."""
        return self.pool_version.sha256 == self.pool_sha256

    def pinned_hash_problem(self) -> str:
        """Why the stored numbers no longer belong to the pool version ("" when they do): its
        recorded SHA-256 changed since they were computed."""
        if self.pool_hash_matches:
            return ""
        return gettext(
            "%(version)s: its recorded SHA-256 %(now)s… is not the %(pinned)s… this comparison was computed "
            "on"
        ) % {
            "version": self.pool_version,
            "now": self.pool_version.sha256[:12],
            "pinned": self.pool_sha256[:12],
        }

    @staticmethod
    def pool_integrity_refusals(comparisons: Sequence[Comparison]) -> dict[int, str]:
        """{comparison pk: why} for those whose pages refuse to show a number (HTTP 409): the
        same two checks as the comparison pages, for a list of them at once.

        One query reads the canonical text of the pool versions still to check, one at a time
        (a pool can hold millions of judgments); each distinct version is hashed once however many
        comparisons share it, and its text is dropped once hashed. Not cached across requests:
        the check exists to notice a row changed behind the app's back.
        """
        refusals = {c.pk: problem for c in comparisons if (problem := c.pinned_hash_problem())}
        versions = {c.pool_version_id: c.pool_version for c in comparisons if c.pk not in refusals}
        if not versions:
            return refusals
        broken: dict[int, str] = {}
        texts = PoolVersion.objects.filter(pk__in=versions).order_by().values_list("pk", "canonical")
        for pk, canonical in texts.iterator(chunk_size=1):
            if problem := versions[pk].hash_problem(canonical):
                broken[pk] = problem
        for c in comparisons:
            if c.pk not in refusals and c.pool_version_id in broken:
                refusals[c.pk] = broken[c.pool_version_id]
        return refusals
