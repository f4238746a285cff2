"""The relevance-threshold metrics: recall@K, p@K, rr@K, ap@K and judged@K, each a vectorised
batch over a run ordered once (`ordering.Ranked`), like NDCG's `batch`.

"Relevant" is a grade >= `settings.relevant` (1 by default, as trec_eval's). An unjudged ID is
not relevant (unjudged="zero"; under "error" the engine refused the run before any metric ran),
an empty position of a short list holds nothing. With R the pool's relevant documents:

- recall@K = relevant in the top K / R (trec_eval `recall_K`)
- p@K = relevant in the top K / K, a short list still divides by K (`P_K`)
- rr@K = 1 / rank of the first relevant document within K, else 0 (`recip_rank` on the run cut at K)
- ap@K = the sum of precision at each relevant rank <= K, over R (`map_cut_K`)
- judged@K = documents in the top K with a grade in the pool / documents in the top K, 0 for an
  empty ranking (ir_measures' `Judged@k`: a short list divides by its length)

A query with R = 0 follows the zero-IDCG policy for the first four (`zero`: 0, kept in the mean;
`exclude`: left out, counted); judged@K needs no relevant document, so it scores every query, as
ir_measures does. Under ties="expected" every value is its expectation over all orders of the
tied groups: recall, precision and judged are linear in the per-position indicators, so each
member takes its group's mean; RR and AP are not, and use the exact expectations below.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from evaluation.metrics.data import Pool, _readonly
from evaluation.metrics.ordering import EMPTY, Ranked, TiedGroups
from evaluation.metrics.results import Metric, MetricValues


@dataclass(frozen=True, eq=False)
class Scores:
    """One binary metric of every pool query (arrays in the pool's query order, read-only).

    `value` is NaN for an excluded query; `columns` are the terms behind it (hits, the pool's
    relevant count); `mean` is the macro mean, None when no query is evaluated."""

    name: str
    value: np.ndarray
    columns: Mapping[str, np.ndarray]
    no_relevant: np.ndarray
    excluded: np.ndarray
    mean: float | None
    counts: Mapping[str, int]


def relevant_in_pool(pool: Pool, relevant: int) -> np.ndarray:
    """R of every pool query: its documents graded `relevant` or above (kept with the pool)."""
    key = ("relevant", relevant)
    counts = pool._derived.get(key)
    if counts is None:
        counts = _readonly(pool._grade_counts[:, relevant:].sum(axis=1).astype(np.int64))
        pool._derived[key] = counts
    return counts


def _hits(ranked: Ranked, *, judged: bool = False) -> np.ndarray:
    """1.0 where the ranked position holds a relevant (or, `judged`, any graded) document."""
    threshold = 0 if judged else ranked.settings.relevant  # UNJUDGED and EMPTY codes are negative
    return (ranked.grades >= threshold).astype(np.float64)


def _averaged(ranked: Ranked, hits: np.ndarray) -> np.ndarray:
    """Under ties="expected", each tied member's indicator is its group's mean (a copy)."""
    if ranked.ties is None:
        return hits
    values = hits.copy()
    ranked.ties.average(values)
    return values


def _row_sums(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right, as trec_eval accumulates them."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1].copy()


def _per_query(ranked: Ranked, rows: np.ndarray) -> np.ndarray:
    """Per-row values at their pool queries; 0 for the pool queries the run does not answer."""
    values = np.zeros(len(ranked.pool), dtype=rows.dtype)
    values[ranked.pool_rows] = rows
    return values


def _over_relevant(numerator: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    return np.divide(numerator, relevant, out=np.zeros(len(relevant)), where=relevant > 0)


def _finish(
    name: str,
    ranked: Ranked,
    value: np.ndarray,
    columns: dict[str, np.ndarray],
    *,
    needs_relevant: bool = True,
) -> Scores:
    settings = ranked.settings
    no_relevant = relevant_in_pool(ranked.pool, settings.relevant) == 0
    excluded = no_relevant & (needs_relevant and settings.zero_idcg == "exclude")
    value = value.copy()
    value[excluded] = np.nan
    evaluated = int((~excluded).sum())
    mean = math.fsum(value[~excluded].tolist()) / evaluated if evaluated else None
    return Scores(
        name=name,
        value=_readonly(value),
        columns={key: _readonly(column) for key, column in columns.items()},
        no_relevant=_readonly(no_relevant),
        excluded=_readonly(excluded),
        mean=mean,
        counts={
            "evaluated": evaluated,
            "no_relevant": int(no_relevant.sum()),
            "excluded": int(excluded.sum()),
        },
    )


def _relevant_hits(ranked: Ranked) -> tuple[np.ndarray, np.ndarray]:
    """Relevant documents in the top K per pool query (expected counts under ties), and R."""
    k = ranked.settings.k
    hits = _per_query(ranked, _row_sums(_averaged(ranked, _hits(ranked))[:, :k]))
    return hits, relevant_in_pool(ranked.pool, ranked.settings.relevant)


def recall(ranked: Ranked) -> Scores:
    hits, relevant = _relevant_hits(ranked)
    return _finish("recall", ranked, _over_relevant(hits, relevant), {"hits": hits, "relevant": relevant})


def precision(ranked: Ranked) -> Scores:
    hits, relevant = _relevant_hits(ranked)
    return _finish("p", ranked, hits / ranked.settings.k, {"hits": hits, "relevant": relevant})


def judged(ranked: Ranked) -> Scores:
    k = ranked.settings.k
    graded = _row_sums(_averaged(ranked, _hits(ranked, judged=True))[:, :k])
    shown = (ranked.grades[:, :k] != EMPTY).sum(axis=1)
    rows = np.divide(graded, shown, out=np.zeros(len(shown)), where=shown > 0)
    columns = {
        "judged_count": _per_query(ranked, graded),
        "shown": _per_query(ranked, shown.astype(np.int64)),
    }
    return _finish("judged", ranked, _per_query(ranked, rows), columns, needs_relevant=False)


def reciprocal_rank(ranked: Ranked) -> Scores:
    k = ranked.settings.k
    hits = _hits(ranked)
    top = hits[:, :k] > 0
    found = top.any(axis=1)
    first = top.argmax(axis=1) if top.shape[1] else np.zeros(len(top), dtype=np.int64)  # no column: all empty
    rows = np.where(found, 1.0 / (first + 1.0), 0.0)
    if ranked.ties is not None:
        rows[ranked.ties.rows] = _expected_rr(ranked.ties, hits[ranked.ties.rows], k)
    relevant = relevant_in_pool(ranked.pool, ranked.settings.relevant)
    return _finish("rr", ranked, _per_query(ranked, rows), {"relevant": relevant})


def average_precision(ranked: Ranked) -> Scores:
    k = ranked.settings.k
    hits = _hits(ranked)
    top = hits[:, :k]
    ranks = np.arange(1.0, top.shape[1] + 1.0)
    rows = _row_sums(top * np.cumsum(top, axis=1) / ranks)  # precision at each relevant rank
    if ranked.ties is not None:
        rows[ranked.ties.rows] = _expected_precision_sum(ranked.ties, hits[ranked.ties.rows], k)
    relevant = relevant_in_pool(ranked.pool, ranked.settings.relevant)
    precision_sum = _per_query(ranked, rows)
    return _finish(
        "ap",
        ranked,
        _over_relevant(precision_sum, relevant),
        {"precision_sum": precision_sum, "relevant": relevant},
    )


# ---- ties="expected" for RR and AP: exact expectations over the orders of each tied group ----
# A group of n members holding m relevant ones is in uniformly random order; groups are
# independent and fill fixed spans, so every expectation is a sum over positions of terms that
# depend only on (n, m), the offset o within the group and the relevant documents before it.


@dataclass(frozen=True)
class _Groups:
    n: np.ndarray  # size of each cell's group
    m: np.ndarray  # relevant members of each cell's group
    offset: np.ndarray  # the cell's position within its group, from 0
    group: np.ndarray  # the cell's group number


def _groups(ties: TiedGroups, hits: np.ndarray) -> _Groups:
    rows, width = hits.shape
    group = ties.group.reshape(rows, width)
    relevant = np.bincount(ties.group, weights=hits.ravel(), minlength=len(ties.sizes))
    first = np.flatnonzero(np.r_[True, ties.group[1:] != ties.group[:-1]])  # groups are contiguous
    start = (first % width)[group]
    return _Groups(
        n=ties.sizes[group].astype(np.float64),
        m=relevant[group],
        offset=(np.arange(width)[None, :] - start).astype(np.float64),
        group=group,
    )


def _expected_rr(ties: TiedGroups, hits: np.ndarray, k: int) -> np.ndarray:
    """E[RR@k]: only the first group holding a relevant document can hold the first relevant
    rank; its member at offset o is the first relevant one with probability
    prod_{t<o} (n-m-t)/(n-t) * m/(n-o)."""
    g = _groups(ties, hits)
    rows, width = hits.shape
    found = hits.any(axis=1)
    first_group = g.group[np.arange(rows), hits.argmax(axis=1)]
    inside = (g.group == first_group[:, None]) & found[:, None]
    stays_irrelevant = np.where(inside, (g.n - g.m - g.offset) / (g.n - g.offset), 1.0)
    before = np.ones((rows, width))
    before[:, 1:] = np.cumprod(stays_irrelevant, axis=1)[:, :-1]
    first_at = np.where(inside, before * g.m / (g.n - g.offset), 0.0)[:, :k]
    return _row_sums(first_at / np.arange(1.0, first_at.shape[1] + 1.0))


def _expected_precision_sum(ties: TiedGroups, hits: np.ndarray, k: int) -> np.ndarray:
    """E[sum over ranks i <= k of rel_i * (relevant in ranks 1..i) / i]: with p = m/n and C the
    relevant documents before the group, E[rel_i * count_i] = p * (1 + C) + o * m(m-1)/(n(n-1))."""
    g = _groups(ties, hits)
    before_group = np.take_along_axis(
        np.cumsum(hits, axis=1) - hits,
        (np.arange(hits.shape[1])[None, :] - g.offset).astype(np.int64),
        axis=1,
    )
    pairs = np.divide(g.m * (g.m - 1), g.n * (g.n - 1), out=np.zeros(g.n.shape), where=g.n > 1)
    terms = (g.m / g.n * (1.0 + before_group) + g.offset * pairs)[:, :k]
    return _row_sums(terms / np.arange(1.0, terms.shape[1] + 1.0))


def values(scores: Scores) -> MetricValues:
    """A binary metric's part of the results shape (results.py)."""
    columns = {name: tuple(column.tolist()) for name, column in scores.columns.items()}
    return MetricValues(
        per_query={
            scores.name: tuple(None if math.isnan(v) else v for v in scores.value.tolist()),
            **columns,
            "no_relevant": tuple(scores.no_relevant.tolist()),
            "excluded": tuple(scores.excluded.tolist()),
        },
        aggregates={"mean": scores.mean},
        counts=dict(scores.counts),
    )


def _metric(
    name: str, label: str, measure: Callable[[int], str], batch: Callable[[Ranked], Scores]
) -> Metric:
    # No breakdown partial yet: the comparison pages list METRICS (NDCG) only.
    return Metric(
        name=name,
        label=label,
        measure=lambda settings: measure(settings.k),
        batch=batch,
        values=values,
        partial="",
    )


RECALL = _metric("recall", "Recall@K", lambda k: f"recall_{k}", recall)
PRECISION = _metric("p", "P@K", lambda k: f"P_{k}", precision)
RECIPROCAL_RANK = _metric("rr", "RR@K", lambda k: f"recip_rank@{k}", reciprocal_rank)
AVERAGE_PRECISION = _metric("ap", "AP@K", lambda k: f"map_cut_{k}", average_precision)
JUDGED = _metric("judged", "Judged@K", lambda k: f"Judged@{k}", judged)
