"""`evaluate_run`: a whole run at once, vectorised with numpy, no Python loop per query on the hot path.

It aligns the run with the pool, orders it once (`ordering.py`: the queries whose top K holds
tied scores are re-ordered under the tie policy together, in one pass), looks the grades up,
then hands that order to every metric of `METRICS`. The breakdown of any query is `RunResult.explain(query)`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import itemgetter

import numpy as np

from evaluation.metrics import lookup, ndcg
from evaluation.metrics.data import Pool, Run, _readonly
from evaluation.metrics.ndcg import _UNJUDGED_ERROR, QueryResult, score_query
from evaluation.metrics.ordering import EMPTY, UNJUDGED, Ranked, _order_by_score, tied_groups
from evaluation.metrics.policies import DEFAULT_SETTINGS, EvaluationError, Settings, as_settings, gettext_noop
from evaluation.metrics.results import Metric, SystemResult


@dataclass(frozen=True)
class Counts:
    """What every report states besides the mean (all per system except the pool-level ones)."""

    queries: int  # queries in the pool: the query set of the evaluation
    evaluated: int  # queries in the mean (all but the excluded ones)
    zero_idcg: int  # queries whose pool has no grade above 0
    excluded: int  # zero-IDCG queries left out of the mean (zero_idcg="exclude")
    missing_from_run: int  # pool queries the run did not answer (empty ranking)
    unjudged_in_top_k: int  # unjudged IDs in the top K, summed over queries
    extra_queries_skipped: int  # run queries not in the pool, skipped (extra_queries="ignore")


@dataclass(frozen=True)
class QueryScore:
    """One row of a per-query table."""

    query_id: str
    dcg: float
    idcg: float
    ndcg: float | None
    zero_idcg: bool
    excluded: bool
    missing_from_run: bool
    unjudged_in_top_k: int
    retrieved: int


@dataclass(frozen=True, eq=False)
class RunResult:
    """NDCG@K of every pool query for one run, plus the aggregates and counts.

    Arrays are aligned with `query_ids` (the pool's query order) and read-only. `ndcg` is NaN
    for an excluded query; use `ndcg_of` or `rows()` to get None instead.
    `mean` is the macro mean over evaluated queries (the headline); `micro` is sum(DCG)/sum(IDCG),
    a different number that weighs queries by their IDCG. Both are None when undefined.
    `scores` holds every metric's batch output by metric name (NDCG's is `ndcg.Scores`), those
    of `METRICS` and the ones asked for by `evaluate_run(..., metrics=...)`, which `metrics`
    lists (`to_system(label, result.metrics)` puts them in the results shape).
    """

    name: str
    settings: Settings
    query_ids: tuple[str, ...]
    dcg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray
    zero_idcg: np.ndarray
    excluded: np.ndarray
    missing: np.ndarray
    unjudged: np.ndarray
    retrieved: np.ndarray
    mean: float | None
    micro: float | None
    counts: Counts
    extra_queries: tuple[str, ...]
    scores: Mapping[str, object] = field(repr=False)
    pool: Pool = field(repr=False)
    run: Run = field(repr=False)
    metrics: tuple[Metric, ...] = ()

    def _position(self, query_id: str) -> int:
        try:
            return self.pool._index[query_id]
        except KeyError:
            raise EvaluationError(
                gettext_noop("query %(query)r is not in the pool"), {"query": query_id}, query=query_id
            ) from None

    def ndcg_of(self, query_id: str) -> float | None:
        i = self._position(query_id)
        return None if self.excluded[i] else float(self.ndcg[i])

    def rows(self) -> list[QueryScore]:
        ndcg = self.ndcg.tolist()
        excluded = self.excluded.tolist()
        return [
            QueryScore(
                query_id=query,
                dcg=dcg,
                idcg=idcg,
                ndcg=None if excl else value,
                zero_idcg=zero,
                excluded=excl,
                missing_from_run=missing,
                unjudged_in_top_k=unjudged,
                retrieved=retrieved,
            )
            for query, dcg, idcg, value, zero, excl, missing, unjudged, retrieved in zip(
                self.query_ids,
                self.dcg.tolist(),
                self.idcg.tolist(),
                ndcg,
                self.zero_idcg.tolist(),
                excluded,
                self.missing.tolist(),
                self.unjudged.tolist(),
                self.retrieved.tolist(),
                strict=True,
            )
        ]

    def to_system(self, label: str, metrics: Sequence[Metric]) -> SystemResult:
        """This run in the results shape (results.py), with the values of each of `metrics`."""
        counts = self.counts
        return SystemResult(
            label=label,
            name=self.name,
            missing=tuple(self.missing.tolist()),
            unjudged=tuple(self.unjudged.tolist()),
            retrieved=tuple(self.retrieved.tolist()),
            run_counts={
                "queries": counts.queries,
                "missing_from_run": counts.missing_from_run,
                "unjudged_in_top_k": counts.unjudged_in_top_k,
                "extra_queries_skipped": counts.extra_queries_skipped,
            },
            extra_queries=tuple(self.extra_queries),
            metrics={metric.name: metric.values(self.scores[metric.name]) for metric in metrics},
        )

    def explain(self, query_id: str) -> QueryResult:
        """The per-position breakdown of one query (the same numbers, term by term)."""
        self._position(query_id)
        run = self.run
        return score_query(
            run.ranking(query_id),
            self.pool[query_id],
            self.settings,
            scores=run.scores_of(query_id),
            query_id=query_id,
            source=run.source,
            lines=run.lines_of(query_id),
            missing_from_run=query_id not in run,
        )


def as_pool(pool: Pool | Mapping[str, Mapping[str, int]]) -> Pool:
    return pool if isinstance(pool, Pool) else Pool(pool)  # Pool() refuses what is not a mapping


def as_run(
    run: Run | Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]], *, name: str = "run"
) -> Run:
    """A Run as is; {query: [doc, ...]} as ordered lists; {query: {doc: score}} as scores."""
    if isinstance(run, Run):
        return run
    if not isinstance(run, Mapping):
        raise EvaluationError(
            gettext_noop("a run must be a Run or a mapping of query ID to its ranking, got %(type)s"),
            {"type": type(run).__name__},
        )
    if run and all(isinstance(value, Mapping) for value in run.values()):
        return Run.from_scores(run, name=name)  # type: ignore[arg-type]
    return Run.from_rankings(run, name=name)  # type: ignore[arg-type]


def _gather(items: list[str], indices: np.ndarray) -> Sequence[str]:
    """items[i] for each index, in one C call (a per-item __getitem__ map costs ~10x more)."""
    if len(indices) == 1:
        return [items[int(indices[0])]]
    return itemgetter(*indices.tolist())(items) if len(indices) else []


def _grades_of(pool: Pool, run: Run, rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The grade of run row `rows[i]` in pool query `queries[i]`, or UNJUDGED: from the pool's
    IdTable, and from its dicts for what the words cannot settle (lookup.py says which)."""
    table, words = pool._id_table, run._id_words
    if table is None or words is None:
        found = np.full(len(rows), lookup.ASK, dtype=np.int64)
    else:
        found = table.grades(words, rows, queries)
    ask = np.flatnonzero(found == lookup.ASK)
    if len(ask):
        dicts = pool._dicts[queries[ask]].tolist()
        found[ask] = list(map(dict.get, dicts, _gather(run._docs, rows[ask]), repeat(UNJUDGED)))
    return found


def _line(run: Run, row: int) -> int | None:
    return int(run._lines[row]) if run._lines is not None else None


def _first_row_of(run: Run, query_index: int) -> int:
    return int(run._offsets[query_index])


def evaluate_run(
    pool: Pool | Mapping[str, Mapping[str, int]],
    run: Run | Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    name: str = "run",
    metrics: Sequence[str | Metric] | None = None,
) -> RunResult:
    """Score every query of `pool` for `run` under `settings` with every metric of `METRICS`
    and, given `metrics` (names such as "ndcg@10", "recall@100"), each of those at its own K.

    The run is ordered once, as deep as the largest K (with `settings.k`, the headline NDCG's),
    and the unjudged and tie policies apply to that depth: under unjudged="error" an unjudged ID
    within any requested K refuses the run for every metric, and `unjudged` counts the unjudged
    IDs within that depth. Without `metrics` nothing differs from NDCG alone.
    """
    from evaluation.metrics import METRICS  # the package imports this module
    from evaluation.metrics.registry import parse_metrics

    settings = as_settings(settings)
    requested = parse_metrics(metrics) if metrics is not None else ()
    pool = as_pool(pool)
    run = as_run(run, name=name)
    # The depth every metric's order is read from; `settings` keeps the headline's own K.
    depth = max([settings.k, *(metric.k or settings.k for metric in requested)])
    ordered = replace(settings, k=depth) if depth != settings.k else settings
    k = depth
    n_queries = len(pool)

    # Align the run's queries with the pool's (a run file usually lists the qrels' queries, in
    # their order: one comparison of the two tuples then stands for the lookups).
    if run.query_ids == pool.query_ids:
        run_to_pool = np.arange(n_queries, dtype=np.int64)
    else:
        pool_index = pool._index
        run_to_pool = np.fromiter(
            map(pool_index.get, run.query_ids, repeat(-1)), dtype=np.int64, count=len(run.query_ids)
        )
    is_extra = run_to_pool < 0
    extra_queries: tuple[str, ...] = ()
    if is_extra.any():
        extra_at = np.flatnonzero(is_extra)
        extra_queries = tuple(run.query_ids[i] for i in extra_at.tolist())
        if settings.extra_queries == "error":
            first = int(extra_at[0])
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r of run %(run)r is not in the pool (run queries not in the pool: "
                    "%(count)s); the extra-queries policy 'ignore' would skip them"
                ),
                {"query": run.query_ids[first], "run": run.name, "count": len(extra_queries)},
                query=run.query_ids[first],
                source=run.source,
                line=_line(run, _first_row_of(run, first)),
            )
    kept = np.flatnonzero(~is_extra)
    kept_pool = run_to_pool[kept]
    missing = np.ones(n_queries, dtype=bool)
    missing[kept_pool] = False
    if settings.missing_queries == "error" and missing.any():
        first_missing = pool.query_ids[int(np.flatnonzero(missing)[0])]
        raise EvaluationError(
            gettext_noop(
                "pool query %(query)r is missing from run %(run)r (%(count)s missing); "
                "the missing-queries policy 'zero' would score them 0"
            ),
            {"query": first_missing, "run": run.name, "count": int(missing.sum())},
            query=first_missing,
            source=run.source,
        )

    starts = run._offsets[:-1][kept]
    lengths = run._lengths[kept]
    n_rows = len(kept)
    longest = int(lengths.max()) if n_rows else 0
    # Under "expected" a tied group reaching into the top K may extend below it, and its members
    # there still enter the average; so the whole ranking is kept for that policy.
    expected = run.has_scores and settings.ties == "expected"
    width = longest if expected else min(k, longest)

    columns = np.arange(width)
    top: np.ndarray | None = None
    tied_rows = np.zeros(0, dtype=np.int64)
    if run.has_scores:
        top, tied_rows = _order_by_score(run, kept, is_extra, starts, lengths, longest, width, ordered)
    if top is None:
        # The ranking is the input order (no scores, or scores already in order without a tie
        # reaching into the top K): each query's first `width` rows.
        shown = np.minimum(lengths, width)
        top = starts[:, None] + columns
        if int(shown.min(initial=width)) < width:
            valid = columns < shown[:, None]
            top = np.where(valid, top, -1)
        else:
            valid = np.ones(top.shape, dtype=bool)
    else:
        valid = top >= 0
        shown = valid.sum(axis=1)

    # Grades of the ranked documents, found in the pool's IdTable.
    rows = top.ravel() if valid.all() else top[valid]
    found = _grades_of(pool, run, rows, np.repeat(kept_pool, shown))
    if len(found) == valid.size:
        grades = found.reshape(valid.shape)
    else:
        grades = np.full(valid.shape, EMPTY, dtype=np.int64)
        grades[valid] = found

    unjudged = grades == UNJUDGED
    # The IDs that enter the score: the top K, plus (expected) whole tied groups reaching into it.
    scored_unjudged = unjudged[:, :k].copy() if width else unjudged
    ties = tied_groups(run, top, tied_rows, k) if expected and len(tied_rows) else None
    if ties is not None:
        scored_unjudged = ties.widen(unjudged, scored_unjudged)
    if settings.unjudged == "error" and scored_unjudged.any():
        row, col = (int(x[0]) for x in np.nonzero(scored_unjudged))
        index = int(top[row, col])
        query = run.query_ids[int(kept[row])]
        doc = run._docs[index]
        raise EvaluationError(
            _UNJUDGED_ERROR,
            {"query": query, "doc": doc},
            query=query,
            doc_id=doc,
            source=run.source,
            line=_line(run, index),
        )

    unjudged_counts = np.zeros(n_queries, dtype=np.int64)
    # The unjudged IDs that enter the score: the same mask the unjudged="error" policy refuses.
    unjudged_counts[kept_pool] = scored_unjudged.sum(axis=1)
    retrieved = np.zeros(n_queries, dtype=np.int64)
    retrieved[kept_pool] = lengths

    # Read-only: every metric reads the same order, and none may change it for the next.
    ranked = Ranked(settings=settings, pool=pool, pool_rows=kept_pool, grades=_readonly(grades), ties=ties)
    scores = {metric.name: metric.batch(ranked) for metric in (*METRICS, *requested)}
    # The run's own fields are NDCG's, the headline (the public API of `RunResult`).
    headline = scores[ndcg.METRIC.name]
    assert isinstance(headline, ndcg.Scores)

    counts = Counts(
        queries=n_queries,
        evaluated=headline.counts["evaluated"],
        zero_idcg=headline.counts["zero_idcg"],
        excluded=headline.counts["excluded"],
        missing_from_run=int(missing.sum()),
        unjudged_in_top_k=int(unjudged_counts.sum()),
        extra_queries_skipped=len(extra_queries),
    )
    return RunResult(
        name=run.name,
        settings=settings,
        query_ids=pool.query_ids,
        dcg=headline.dcg,
        idcg=headline.idcg,
        ndcg=headline.ndcg,
        zero_idcg=headline.zero_idcg,
        excluded=headline.excluded,
        missing=_readonly(missing),
        unjudged=_readonly(unjudged_counts),
        retrieved=_readonly(retrieved),
        mean=headline.mean,
        micro=headline.micro,
        counts=counts,
        extra_queries=extra_queries,
        scores=scores,
        pool=pool,
        run=run,
        metrics=requested,
    )
