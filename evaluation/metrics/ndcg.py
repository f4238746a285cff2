"""NDCG@K: one query with every term of the sum written out (`score_query`, the reference path),
and every query of an ordered run at once (`batch`, vectorised with numpy), side by side.

DCG is the last running total of the rows a page prints, so the breakdown is the computation;
`batch` reproduces its numbers bit for bit (same discounts, divisions and left-to-right sums).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from evaluation.metrics.data import Pool, _check_doc_id, _check_ranking, _check_score, _readonly
from evaluation.metrics.ordering import EMPTY, Ranked, _tie_groups, ranked_indices
from evaluation.metrics.policies import (
    DEFAULT_SETTINGS,
    MAX_BREAKDOWN_K,
    EvaluationError,
    Settings,
    as_settings,
    gain_function,
    gain_table,
    gettext_noop,
    validate_grade,
)
from evaluation.metrics.results import Metric, MetricValues

_UNJUDGED_ERROR = gettext_noop(
    "query %(query)r: document %(doc)r has no grade in the pool (unjudged); "
    "the unjudged policy 'zero' would score it as gain 0"
)


def discount(rank: int) -> float:
    """log2(rank + 1), rank counted from 1: position 1 divides by 1, position 2 by log2(3)."""
    return math.log2(rank + 1)


@lru_cache(maxsize=32)
def discounts(k: int) -> np.ndarray:
    """discount(1..k) as a read-only float64 array, computed with math.log2.

    numpy's log2 differs from math.log2 in the last bit for some arguments; sharing one source of
    discounts keeps the batch engine and the per-query path bit-identical.
    """
    array = np.array([discount(rank) for rank in range(1, k + 1)], dtype=np.float64)
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class PositionRow:
    """One term of a DCG sum.

    `doc_id` is None for a position the ranking did not fill (a short list): it contributes 0.
    `unjudged` is True for an ID without a grade in the pool (scored 0 under unjudged="zero");
    its `grade` is then None. Under ties="expected", `gain` is the mean gain of the tied group
    the document belongs to (`tied` > 1), which is the expected gain at that position.
    """

    rank: int
    doc_id: str | None
    grade: int | None
    unjudged: bool
    gain: float
    discount: float
    contribution: float
    cumulative: float
    score: float | None = None
    tied: int = 1


@dataclass(frozen=True)
class QueryResult:
    """NDCG@K of one query and the arithmetic behind it.

    `ndcg` is None only for an excluded query (zero IDCG under zero_idcg="exclude").
    `candidate_only_ndcg` divides by the ideal DCG of the returned candidates alone: a labelled
    contrast that shows how much a candidate-only denominator would flatter the system; it is never
    the NDCG (None when the candidates have no positive grade).
    """

    query_id: str
    settings: Settings
    dcg: float
    idcg: float
    ndcg: float | None
    zero_idcg: bool
    excluded: bool
    positions: tuple[PositionRow, ...]
    ideal: tuple[PositionRow, ...]
    candidate_only_ndcg: float | None
    unjudged_in_top_k: int
    retrieved: int
    missing_from_run: bool = False


def _checked_pool(pool_grades: Mapping[str, int], query_id: str) -> dict[str, int]:
    if not isinstance(pool_grades, Mapping):
        raise EvaluationError(
            gettext_noop(
                "query %(query)r: the pool's grades must be a mapping of document ID to grade, got %(type)s"
            ),
            {"query": query_id, "type": type(pool_grades).__name__},
            query=query_id or None,
        )
    grades = dict(pool_grades)
    for doc, grade in grades.items():
        _check_doc_id(doc, query_id)
        validate_grade(grade, query=query_id, doc_id=doc)
    return grades


def _ideal_rows(grades: Mapping[str, int], settings: Settings) -> tuple[PositionRow, ...]:
    gain_of = gain_function(settings.gain)
    # Ties in grade are shown in document-ID order; the sum does not depend on it.
    best = sorted(grades.items(), key=lambda item: (-item[1], item[0]))[: settings.k]
    rows = []
    cumulative = 0.0
    for rank, (doc, grade) in enumerate(best, start=1):
        gain = gain_of(grade)
        d = discount(rank)
        contribution = gain / d
        cumulative = cumulative + contribution
        rows.append(PositionRow(rank, doc, grade, False, gain, d, contribution, cumulative))
    return tuple(rows)


def score_query(
    ranking: Sequence[str],
    pool_grades: Mapping[str, int],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    scores: Sequence[float] | None = None,
    query_id: str = "",
    source: str | None = None,
    lines: Sequence[int] | None = None,
    missing_from_run: bool = False,
) -> QueryResult:
    """NDCG@K of one ranking against the query's whole pool.

    `ranking` is an ordered list of document IDs; with `scores` (same length, input order) the
    order is formed by score under `settings.ties`. `pool_grades` is the query's whole pool,
    document ID -> grade 0..3: IDCG is the DCG of its top K grades. `source` and `lines` only
    enrich error messages (the file and line of each ranking entry).
    """
    settings = as_settings(settings)
    k = settings.k
    if k > MAX_BREAKDOWN_K:
        raise EvaluationError(
            gettext_noop(
                "a per-position breakdown lists K rows per table; K may be at most %(max)s for it, got %(k)s "
                "(scores without the breakdown have no such limit)"
            ),
            {"max": MAX_BREAKDOWN_K, "k": k},
            query=query_id or None,
        )
    if isinstance(ranking, str | Mapping) or not isinstance(ranking, Iterable):
        # A string is a sequence of characters: "BA" would be read as the ranking ['B', 'A'].
        raise EvaluationError(
            gettext_noop("query %(query)r: a ranking must be a sequence of document IDs, got %(type)s"),
            {"query": query_id, "type": type(ranking).__name__},
            query=query_id or None,
        )
    grades = _checked_pool(pool_grades, query_id)
    docs = list(ranking)
    _check_ranking(query_id, docs, lines, source)
    score_list: list[float] | None = None
    if scores is not None:
        if len(scores) != len(docs):
            raise EvaluationError(
                gettext_noop("query %(query)r: %(scores)s scores for %(docs)s documents"),
                {"query": query_id, "scores": len(scores), "docs": len(docs)},
                query=query_id,
            )
        for position, (doc, score) in enumerate(zip(docs, scores, strict=True)):
            line = lines[position] if lines is not None else None
            _check_score(score, query=query_id, doc_id=doc, source=source, line=line)
        score_list = [float(score) for score in scores]
        order = ranked_indices(
            docs, score_list, settings.ties, k=k, query_id=query_id, lines=lines, source=source
        )
    else:
        order = list(range(len(docs)))

    gain_of = gain_function(settings.gain)

    def gain_at(index: int) -> float:
        grade = grades.get(docs[index])
        if grade is None:
            if settings.unjudged == "error":
                raise EvaluationError(
                    _UNJUDGED_ERROR,
                    {"query": query_id, "doc": docs[index]},
                    query=query_id,
                    doc_id=docs[index],
                    source=source,
                    line=lines[index] if lines is not None else None,
                )
            return 0.0
        return gain_of(grade)

    # Gain per ranked position. Under ties="expected" every member of a tied group that reaches
    # into the top K gets the group's mean gain: E[DCG] over all orders of the group, because DCG
    # is linear in the gains.
    position_gain: dict[int, float] = {}
    tie_size: dict[int, int] = {}
    # Unjudged IDs below K whose gain still enters the score (members of a tied group reaching
    # into the top K): counted with the top K's, as the unjudged="error" policy refuses them too.
    unjudged_below_k = 0
    if score_list is not None and settings.ties == "expected":
        ordered_scores = [score_list[i] for i in order]
        for start, end in _tie_groups(ordered_scores):
            if start >= k:
                break
            if end - start > 1:
                total = 0.0
                for position in range(start, end):
                    total = total + gain_at(order[position])
                    unjudged_below_k += position >= k and docs[order[position]] not in grades
                for position in range(start, min(end, k)):
                    position_gain[position] = total / (end - start)
                    tie_size[position] = end - start
    elif score_list is not None:
        ordered_scores = [score_list[i] for i in order]
        for start, end in _tie_groups(ordered_scores):
            if start >= k:
                break
            for position in range(start, min(end, k)):
                tie_size[position] = end - start

    rows = []
    cumulative = 0.0
    unjudged = 0
    for position in range(k):
        rank = position + 1
        d = discount(rank)
        if position < len(order):
            index = order[position]
            doc = docs[index]
            grade = grades.get(doc)
            gain = position_gain[position] if position in position_gain else gain_at(index)
            contribution = gain / d
            cumulative = cumulative + contribution
            unjudged += grade is None
            rows.append(
                PositionRow(
                    rank,
                    doc,
                    grade,
                    grade is None,
                    gain,
                    d,
                    contribution,
                    cumulative,
                    score=score_list[index] if score_list is not None else None,
                    tied=tie_size.get(position, 1),
                )
            )
        else:
            contribution = 0.0 / d
            cumulative = cumulative + contribution
            rows.append(PositionRow(rank, None, None, False, 0.0, d, contribution, cumulative))
    dcg = cumulative

    ideal = _ideal_rows(grades, settings)
    idcg = ideal[-1].cumulative if ideal else 0.0
    zero_idcg = not idcg > 0.0
    excluded = zero_idcg and settings.zero_idcg == "exclude"
    if not zero_idcg:
        ndcg: float | None = dcg / idcg
    else:
        ndcg = None if excluded else 0.0

    candidate_grades = {doc: grades.get(doc, 0) for doc in docs}
    candidate_ideal = _ideal_rows(candidate_grades, settings)
    candidate_idcg = candidate_ideal[-1].cumulative if candidate_ideal else 0.0
    candidate_only = dcg / candidate_idcg if candidate_idcg > 0.0 else None

    return QueryResult(
        query_id=query_id,
        settings=settings,
        dcg=dcg,
        idcg=idcg,
        ndcg=ndcg,
        zero_idcg=zero_idcg,
        excluded=excluded,
        positions=tuple(rows),
        ideal=ideal,
        candidate_only_ndcg=candidate_only,
        unjudged_in_top_k=unjudged + unjudged_below_k,
        retrieved=len(docs),
        missing_from_run=missing_from_run,
    )


@dataclass(frozen=True)
class Tail:
    """The positions of a table after the `shown` ones, summed in one row: ranks first..last,
    how many hold a document, what they add to the DCG and where its running total ends."""

    first: int
    last: int
    count: int
    documents: int
    added: float
    cumulative: float


def tail(rows: Sequence[PositionRow], shown: int) -> Tail | None:
    """The rows after the first `shown`, as one `Tail`; None when none is left."""
    hidden = rows[shown:]
    if not hidden:
        return None
    before = rows[shown - 1].cumulative if shown > 0 else 0.0
    return Tail(
        first=hidden[0].rank,
        last=hidden[-1].rank,
        count=len(hidden),
        documents=sum(1 for row in hidden if row.doc_id is not None),
        # The running DCG's own difference: the sum of the hidden terms, added as the total was.
        added=hidden[-1].cumulative - before,
        cumulative=hidden[-1].cumulative,
    )


@dataclass(frozen=True, eq=False)
class Scores:
    """NDCG@K of every pool query (arrays in the pool's query order, read-only): what `batch`
    gives. `ndcg` is NaN for an excluded query; `mean` (macro, the headline) and `micro`
    (sum(DCG)/sum(IDCG)) are None when undefined. `counts`: evaluated, zero_idcg, excluded."""

    dcg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray
    zero_idcg: np.ndarray
    excluded: np.ndarray
    mean: float | None
    micro: float | None
    counts: Mapping[str, int]


def batch(ranked: Ranked) -> Scores:
    """NDCG@K of every pool query of a run ordered once (`ordering.Ranked`)."""
    settings, pool = ranked.settings, ranked.pool
    k = settings.k
    n_queries = len(pool)
    table = np.concatenate(([0.0, 0.0], gain_table(settings.gain)))  # EMPTY and UNJUDGED gain 0
    gains = table[ranked.grades - EMPTY]
    if ranked.ties is not None:
        ranked.ties.average(gains)
    cut = min(k, gains.shape[1])
    dcg = np.zeros(n_queries)
    dcg[ranked.pool_rows] = _dcg(gains[:, :cut], cut)
    idcg = _ideal_dcg(pool, k, settings.gain)

    zero_idcg = ~(idcg > 0.0)
    excluded = zero_idcg & (settings.zero_idcg == "exclude")
    ndcg = np.divide(dcg, idcg, out=np.zeros(n_queries), where=~zero_idcg)
    ndcg[excluded] = np.nan

    evaluated = int((~excluded).sum())
    mean = math.fsum(ndcg[~excluded].tolist()) / evaluated if evaluated else None
    idcg_total = math.fsum(idcg.tolist())
    micro = math.fsum(dcg.tolist()) / idcg_total if idcg_total > 0.0 else None
    return Scores(
        dcg=_readonly(dcg),
        idcg=idcg,
        ndcg=_readonly(ndcg),
        zero_idcg=_readonly(zero_idcg),
        excluded=_readonly(excluded),
        mean=mean,
        micro=micro,
        counts={"evaluated": evaluated, "zero_idcg": int(zero_idcg.sum()), "excluded": int(excluded.sum())},
    )


def _ideal_dcg(pool: Pool, k: int, gain: str) -> np.ndarray:
    """IDCG@k of every pool query, computed once per frozen pool, K and gain (read-only).

    It depends on the pool alone, so it is kept with the pool like pytrec_eval keeps its qrels
    in the evaluator: a second run scored against the same pool reuses it.
    """
    key = ("idcg", k, gain)
    idcg = pool._derived.get(key)
    if idcg is None:
        ideal = pool.ideal_grades(k)
        idcg = _dcg(gain_table(gain)[ideal], ideal.shape[1]) if len(pool) else np.zeros(0)  # type: ignore[arg-type]
        pool._derived[key] = idcg = _readonly(idcg)
    return idcg


def _dcg(gains: np.ndarray, width: int) -> np.ndarray:
    """Row sums of gain / discount, added left to right like the per-query running total."""
    if width == 0:
        return np.zeros(gains.shape[0])
    contributions = gains / discounts(width)
    # cumsum accumulates strictly left to right (np.sum would pair terms and change the last bit).
    return np.cumsum(contributions, axis=1)[:, -1].copy()


def values(scores: Scores) -> MetricValues:
    """NDCG's part of the results shape (results.py)."""
    return MetricValues(
        per_query={
            "dcg": tuple(scores.dcg.tolist()),
            "idcg": tuple(scores.idcg.tolist()),
            "ndcg": tuple(None if math.isnan(v) else v for v in scores.ndcg.tolist()),
            "zero_idcg": tuple(scores.zero_idcg.tolist()),
            "excluded": tuple(scores.excluded.tolist()),
        },
        aggregates={"mean": scores.mean, "micro": scores.micro},
        counts=dict(scores.counts),
    )


METRIC = Metric(
    name="ndcg",
    label="NDCG@K",
    measure=lambda settings: f"ndcg_cut_{settings.k}",
    batch=batch,
    values=values,
    partial="evaluation/metrics/_ndcg.html",
)
