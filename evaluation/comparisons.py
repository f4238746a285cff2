"""Comparisons: created once from a frozen pool and two runs, stored, read back, broken down.

Every number a comparison page shows comes from `evaluation.metrics`: the batch results are
computed at creation and stored; a query's per-position breakdown is `metrics.score_query` on
demand. Nothing here or in the views recomputes a DCG term.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from annotator.models import PoolVersion, Project
from annotator.pools.models import PoolIntegrityError, parse_canonical
from annotator.web.errors import describe_error
from evaluation import metrics
from evaluation.models import Comparison, Run, RunQuery
from evaluation.runs import pool_for_scoring, pool_query_grades, trusted_pool, verify_pool

# ---- Errors -------------------------------------------------------------------------------------


class ComparisonInputError(Exception):
    """A comparison refused at creation; `field` says which form field the problem belongs to.

    `problems` holds every (field, message) found: both runs are checked, so that a user who
    fixes run A is not told about run B only on the next try.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.problems: list[tuple[str | None, str]] = [(field, message)]
        super().__init__(message)
        self.field = field

    @classmethod
    def of(cls, problems: list[tuple[str | None, str]]) -> ComparisonInputError:
        error = cls(problems[0][1], field=problems[0][0])
        error.problems = problems
        return error

    def __str__(self) -> str:
        return " ".join(message for _field, message in self.problems)


# ---- Comparisons: creation ----------------------------------------------------------------------


def results_of(comparison: metrics.Comparison) -> dict[str, Any]:
    """The engine's comparison as the JSON stored on `Comparison.results` (full precision): the
    results shape's current version. Every reader goes through `metrics.Results.from_dict`, which
    also reads the version 1 documents of earlier comparisons."""
    return metrics.Results.from_engine([comparison.a, comparison.b], [comparison]).to_dict()


def summary_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """The few numbers list pages show, kept beside the (large) results."""
    shape = metrics.Results.from_dict(results)
    a, b, c = shape.system("a"), shape.system("b"), shape.comparison("a", "b")
    assert c is not None  # an A/B document always holds B against A
    return {
        "queries": a.counts["queries"],
        "a_mean": a.mean,
        "b_mean": b.mean,
        "mean_delta": c.mean_delta,
        "wins": c.wins,
        "ties": c.ties,
        "losses": c.losses,
    }


def _compute(pool: metrics.Pool, run_a: Run, run_b: Run, settings: metrics.Settings) -> metrics.Comparison:
    """Evaluate A and B (each error says which run it is in; both are reported) and compare them."""
    results = []
    problems: list[tuple[str | None, str]] = []
    # Both runs' parsed rankings in one query.
    engine_runs = Run.engine_runs([run_a, run_b])
    for label, run, field in ((_("A"), run_a, "run_a"), (_("B"), run_b, "run_b")):
        try:
            results.append(metrics.evaluate_run(pool, engine_runs[run.pk], settings, name=run.name))
        except metrics.EvaluationError as error:
            problem = describe_error(error, run=run.name)
            problems.append((field, _("Run %(label)s: %(problem)s") % {"label": label, "problem": problem}))
    if problems:
        raise ComparisonInputError.of(problems)
    try:
        return metrics.compare_results(results[0], results[1])
    except metrics.EvaluationError as error:  # settings or pools differ: cannot happen here, but never silent
        raise ComparisonInputError(describe_error(error)) from None


def default_comparison_name(run_a: Run, run_b: Run) -> str:
    """ "A vs B" within the name column's limit: two long run names are each shortened with "…"
    to half the room, so that both stay recognisable."""
    template = _("%(a)s vs %(b)s")
    room = (Comparison._meta.get_field("name").max_length or 200) - len(template % {"a": "", "b": ""})
    return template % {
        "a": Truncator(run_a.name).chars(room // 2),
        "b": Truncator(run_b.name).chars(room // 2),
    }


def comparison_create(
    *,
    project: Project,
    pool_version: PoolVersion,
    run_a: Run,
    run_b: Run,
    settings: metrics.Settings,
    by: User,
    name: str = "",
    notes: str = "",
) -> Comparison:
    """Validate A and B against the pool version under `settings`, compute, and store.

    Refused (ComparisonInputError): objects of another project, the same run twice, a pool whose
    judgments fail their hash check, or any input the engine refuses under these policies
    (duplicates, unjudged IDs under 'error', ties under 'error', extra or missing queries under
    'error'), each named with the run, file, line, query and value.
    """
    if pool_version.pool.project_id != project.pk:
        raise ComparisonInputError(_("This pool version belongs to another project."), field="pool_version")
    for run, field in ((run_a, "run_a"), (run_b, "run_b")):
        if run.project_id != project.pk:
            raise ComparisonInputError(_("This run belongs to another project."), field=field)
    if run_a.pk == run_b.pk:
        raise ComparisonInputError(
            _("Choose two different runs: a run compared with itself tells nothing."), field="run_b"
        )
    try:
        verify_pool(pool_version)
    except PoolIntegrityError as error:
        raise ComparisonInputError(
            _("Pool version %(version)s failed its hash check and cannot be scored: %(problem)s")
            % {"version": str(pool_version), "problem": str(error)},
            field="pool_version",
        ) from None
    # The hashed text is intact, but a stored row or an earlier comparison's record of the hash may
    # disagree: the version page says "do not use this version", so no new result is stored on
    # it. Scores already stored stay, and their pages say so. Parsing the text is Python's work and
    # checking the rows mostly the database's (~0.5 s each for a million judgments; the driver lets
    # go of the GIL while the database works), so the two overlap.
    with ThreadPoolExecutor(max_workers=1) as executor:
        parsed = executor.submit(parse_canonical, pool_version.canonical)
        problems = pool_version.integrity_problems()
        pool = trusted_pool(pool_version, parsed.result())
    if problems:
        raise ComparisonInputError(
            _("Pool version %(version)s failed its integrity check and cannot be scored: %(problem)s")
            % {"version": str(pool_version), "problem": " ".join(problems)},
            field="pool_version",
        )
    engine_comparison = _compute(pool, run_a, run_b, settings)
    results = results_of(engine_comparison)
    try:
        # Its own transaction: the foreign keys are checked at its commit, so a run deleted while
        # the scores were computed (run_delete locks the row) becomes a clear refusal, not a 500.
        with transaction.atomic():
            comparison = Comparison.objects.create(
                project=project,
                name=name or default_comparison_name(run_a, run_b),
                notes=notes,
                pool_version=pool_version,
                pool_sha256=pool_version.sha256,
                run_a=run_a,
                run_b=run_b,
                k=settings.k,
                gain=settings.gain,
                unjudged=settings.unjudged,
                zero_idcg=settings.zero_idcg,
                ties=settings.ties,
                missing_queries=settings.missing_queries,
                extra_queries=settings.extra_queries,
                seed=settings.seed,
                results=results,
                summary=summary_of(results),
                engine={
                    "n_permutations": engine_comparison.n_permutations,
                    "n_resamples": engine_comparison.n_resamples,
                    "results_version": results["version"],
                },
                created_by=by,
            )
    except IntegrityError:
        raise ComparisonInputError(
            _("Run A or run B was deleted while this comparison was being computed; choose the runs again."),
            field="run_a",
        ) from None
    return comparison


def engine_settings(comparison: Comparison) -> metrics.Settings:
    return metrics.Settings(**comparison.settings)


def comparison_recompute(*, comparison: Comparison) -> list[str]:
    """Recompute from the pool version and both runs; the differences from the stored results.

    An empty list means every stored number was reproduced to the last digit. A pool that fails
    its hash check raises PoolIntegrityError.
    """
    pool = pool_for_scoring(comparison.pool_version)
    engine_comparison = _compute(pool, comparison.run_a, comparison.run_b, engine_settings(comparison))
    # Written in the stored document's version, so that an older comparison compares like with like.
    version = comparison.results.get("version", metrics.RESULTS_VERSION)
    shape = metrics.Results.from_engine([engine_comparison.a, engine_comparison.b], [engine_comparison])
    # Through JSON, as stored: the comparison is of the exact text of every number.
    fresh = json.loads(json.dumps(shape.to_dict(version=version)))
    return _differences(comparison.results, fresh)


def comparison_verification(comparison: Comparison) -> tuple[str, str]:
    """("success" or "error", the sentence): recomputed from the pool version and both runs, are
    the stored numbers identical, and do the version's stored rows still match its hash? The one
    check of the comparison page's button and of the `verify_comparison` job. PoolIntegrityError
    when the hashed text itself no longer matches."""
    try:
        differences = comparison_recompute(comparison=comparison)
    except ComparisonInputError as error:
        differences = [str(error)]
    # The pages check only the hashed text the scores come from (cheap enough for every view);
    # the explicit check also compares the version's stored rows with it, as the version page does.
    row_problems = comparison.pool_version.integrity_problems()
    if row_problems:
        return "error", _(
            "Pool version %(version)s failed its integrity check: %(problem)s The scores here come from "
            "its hashed judgments only; see the version page before relying on them."
        ) % {"version": str(comparison.pool_version), "problem": row_problems[0]}
    if differences:
        return "error", _(
            "Recomputing did NOT reproduce the stored numbers (%(count)s differences), first: %(first)s"
        ) % {"count": len(differences), "first": differences[0]}
    return "success", _(
        "Recomputed from the pool version and both runs: every stored number is identical to the last digit."
    )


def _differences(stored: Any, fresh: Any, path: str = "results") -> list[str]:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        found = []
        for key in sorted(set(stored) | set(fresh)):
            found.extend(_differences(stored.get(key), fresh.get(key), f"{path}.{key}"))
        return found
    if isinstance(stored, list) and isinstance(fresh, list) and len(stored) == len(fresh):
        found = []
        for i, (s, f) in enumerate(zip(stored, fresh, strict=True)):
            found.extend(_differences(s, f, f"{path}[{i}]"))
            if len(found) > 20:
                break
        return found
    if stored != fresh or type(stored) is not type(fresh):
        return [f"{path}: stored {stored!r}, recomputed {fresh!r}"]
    return []


# ---- Comparisons: reading the stored results ----------------------------------------------------


@dataclass(frozen=True)
class QueryRow:
    """One row of the per-query table (numbers from the stored engine results)."""

    index: int
    query_id: str
    a_ndcg: float | None
    b_ndcg: float | None
    delta: float | None
    a_dcg: float
    b_dcg: float
    idcg: float
    zero_idcg: bool
    excluded: bool
    a_missing: bool
    b_missing: bool
    a_unjudged: int
    b_unjudged: int

    @property
    def outcome(self) -> str:
        if self.delta is None:
            return "excluded"
        if self.delta > 0:
            return "improvement"
        if self.delta < 0:
            return "regression"
        return "tie"


class ComparisonResults:
    """Read access to a comparison's stored results: rows, filters, sorting, counts.

    The stored dict is read through `metrics.Results.from_dict` (any readable version); `a`
    and `b` are its two systems, `stats` the comparison of B against A.
    """

    FILTERS = ("all", "regressions", "improvements", "ties", "excluded")
    SORTS = ("delta", "-delta", "query", "a", "b")

    def __init__(self, results: Mapping[str, Any]) -> None:
        shape = metrics.Results.from_dict(results)
        stats = shape.comparison("a", "b")
        if stats is None:
            raise metrics.ResultsVersionError("stored results hold no comparison of B against A")
        self.shape = shape
        self.a = shape.system("a")
        self.b = shape.system("b")
        self.stats = stats
        self.query_ids: list[str] = list(shape.query_ids)
        self._a = self.a.headline.per_query
        self._b = self.b.headline.per_query

    def __len__(self) -> int:
        return len(self.query_ids)

    def index_of(self, query_id: str) -> int | None:
        try:
            return self.query_ids.index(query_id)
        except ValueError:
            return None

    def row(self, i: int) -> QueryRow:
        a, b = self._a, self._b
        return QueryRow(
            index=i,
            query_id=self.query_ids[i],
            a_ndcg=a["ndcg"][i],
            b_ndcg=b["ndcg"][i],
            delta=self.stats.delta[i],
            a_dcg=a["dcg"][i],
            b_dcg=b["dcg"][i],
            idcg=a["idcg"][i],
            zero_idcg=a["zero_idcg"][i],
            excluded=a["excluded"][i],
            a_missing=self.a.missing[i],
            b_missing=self.b.missing[i],
            a_unjudged=self.a.unjudged[i],
            b_unjudged=self.b.unjudged[i],
        )

    def selected(self, *, show: str = "all", search: str = "", sort: str = "delta") -> list[int]:
        """Indexes of the rows to list, filtered and sorted; the default puts the worst regression first."""
        delta = self.stats.delta
        indexes: Sequence[int] = range(len(self.query_ids))
        if search:
            needle = search.casefold()
            indexes = [i for i in indexes if needle in self.query_ids[i].casefold()]
        if show == "regressions":
            indexes = [i for i in indexes if (d := delta[i]) is not None and d < 0]
        elif show == "improvements":
            indexes = [i for i in indexes if (d := delta[i]) is not None and d > 0]
        elif show == "ties":
            indexes = [i for i in indexes if (d := delta[i]) is not None and d == 0]
        elif show == "excluded":
            indexes = [i for i in indexes if delta[i] is None]
        indexes = list(indexes)
        ids = self.query_ids
        if sort == "query":
            indexes.sort(key=ids.__getitem__)
        else:
            values = {"delta": delta, "-delta": delta, "a": self._a["ndcg"], "b": self._b["ndcg"]}.get(
                sort, delta
            )
            sign = -1.0 if sort == "-delta" else 1.0
            # Excluded queries (no value) go last; equal values keep the pool's query order.
            indexes.sort(
                key=lambda i: (values[i] is None, sign * values[i] if values[i] is not None else 0.0, i)
            )
        return indexes

    def worst_query(self) -> str | None:
        """The largest regression (B - A most negative), else the first query by the default order."""
        order = self.selected()
        return self.query_ids[order[0]] if order else None

    def sorted_deltas(self) -> list[float]:
        return sorted(v for v in self.stats.delta if v is not None)

    def coverage_warning(self, settings: Mapping[str, Any]) -> bool:
        """True when unjudged IDs were scored as gain 0 in either system's top K."""
        return settings["unjudged"] == "zero" and (
            self.a.counts["unjudged_in_top_k"] > 0 or self.b.counts["unjudged_in_top_k"] > 0
        )


# ---- Comparisons: the per-query breakdown -------------------------------------------------------


@dataclass(frozen=True)
class Breakdown:
    """One query scored for A and B by `metrics.score_query`, under the saved or what-if settings."""

    query_id: str
    settings: metrics.Settings
    what_if: bool
    a: metrics.QueryResult | None
    b: metrics.QueryResult | None
    # Each run's refusal, named by run (both columns may say "not scored"); shown one per line.
    errors: tuple[str, ...]
    only_in_a: frozenset[str]
    only_in_b: frozenset[str]
    # The pool's own side (an empty ranking scored): the ideal rows and IDCG, which depend on the
    # pool, K and gain only; shown even when neither run can be scored, not "No judged document".
    pool_side: metrics.QueryResult


def comparison_breakdown(
    *, comparison: Comparison, query_id: str, k: int | None = None, gain: str | None = None
) -> Breakdown | None:
    """Score one query of the comparison for both runs, term by term; None if not in the pool.

    `k` and `gain` make it a what-if: the saved comparison and its stored results do not change.
    A pool failing its hash check raises PoolIntegrityError.
    """
    saved = engine_settings(comparison)
    settings = saved
    if (k is not None and k != saved.k) or (gain is not None and gain != saved.gain):
        settings = metrics.Settings(**{**saved.as_dict(), "k": k or saved.k, "gain": gain or saved.gain})
    grades = pool_query_grades(comparison.pool_version, query_id)
    if grades is None:
        return None
    results: list[metrics.QueryResult | None] = []
    errors: list[str] = []  # each run's own: both columns may say "not scored", so both are named
    # This query's rows of both runs, in one query (a run may hold a million rows).
    rows = {
        row.run_id: row.ranking()
        for row in RunQuery.objects.filter(
            run__in=[comparison.run_a_id, comparison.run_b_id], query_id=query_id
        )
    }
    for run in (comparison.run_a, comparison.run_b):
        ranking = rows.get(run.pk)
        try:
            results.append(
                metrics.score_query(
                    ranking.doc_ids if ranking else (),
                    grades,
                    settings,
                    scores=ranking.scores if ranking else None,
                    query_id=query_id,
                    source=run.file_name,
                    lines=ranking.lines if ranking else None,
                    missing_from_run=ranking is None,
                )
            )
        except metrics.EvaluationError as problem:
            results.append(None)
            errors.append(describe_error(problem, run=run.name))
    top = [
        frozenset(row.doc_id for row in result.positions if row.doc_id is not None) if result else frozenset()
        for result in results
    ]
    if None in results:
        # A refused side has no top K to compare with: its empty set tagged every document of the
        # other side "only in A" although the refused list may hold them. No tags at all then;
        # the refused run's top K is not guessed either (under ties=error its order is undefined).
        top = [frozenset(), frozenset()]
    return Breakdown(
        query_id=query_id,
        settings=settings,
        what_if=settings != saved,
        a=results[0],
        b=results[1],
        errors=tuple(errors),
        only_in_a=top[0] - top[1],
        only_in_b=top[1] - top[0],
        pool_side=metrics.score_query((), grades, settings, query_id=query_id),
    )
