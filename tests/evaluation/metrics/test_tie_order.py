"""The batch engine's vectorised tie policies against `ranked_indices`, the per-query reference.

Random runs with many ties (scores from a few values, out of score order or in it) and IDs that
exercise every way two IDs are compared: sharing long prefixes, past 8 bytes (several words),
past 64 bytes (compared as strings), non-ASCII (UTF-8's byte order must be code point order),
lone surrogates, and runs whose IDs hold NUL (no words at all). The order must be the same,
position by position, for every policy, and ties="error" must refuse the same query with the
same message.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from evaluation.metrics import EvaluationError, Run, Settings, evaluate_run
from evaluation.metrics.ordering import _order_by_score, ranked_indices

POLICIES = ["error", "docid-desc", "docid-asc", "input-order", "expected"]
STEMS = [
    "a",
    "b",
    "B",
    "Z9",
    "ä",
    "文档",
    "\U0001f600",
    "\ud800",
    "msmarco_passage_",
    "msmarco_passage_0",
    "clueweb09-en0000-",
    "x" * 70,
    "x" * 70 + "y",
]

ids = st.builds(
    lambda stem, tail: stem + tail,
    st.sampled_from(STEMS),
    st.text(alphabet="01aé", max_size=3),
)


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict[str, list[tuple[str, float]]], bool]:
    """{query: [(doc, score), ...]} with ties, and whether an ID holds NUL (a run without words)."""
    with_nul = draw(st.booleans())
    scored = {}
    for q in range(draw(st.integers(1, 6))):
        docs = draw(st.lists(ids, min_size=1, max_size=14, unique=True))
        if with_nul and q == 0:
            docs[0] = docs[0] + "\x00"
        values = st.integers(0, draw(st.integers(0, 4))).map(float)
        scores = draw(st.lists(values, min_size=len(docs), max_size=len(docs)))
        if draw(st.booleans()):  # in score order, as most files are
            scores.sort(reverse=True)
        scored[f"q{q}"] = list(zip(docs, scores, strict=True))
    return scored, with_nul


def batch_order(run: Run, config: Settings, *, expected: bool) -> np.ndarray | None:
    """`_order_by_score` called as `evaluate_run` calls it, every query of the run kept."""
    n = len(run.query_ids)
    lengths = run._lengths
    longest = int(lengths.max())
    width = longest if expected else min(config.k, longest)
    top, _tied = _order_by_score(
        run,
        np.arange(n),
        np.zeros(n, dtype=bool),
        run._offsets[:-1],
        lengths,
        longest,
        width,
        config,
    )
    return top


@settings(max_examples=400, deadline=None)
@given(runs(), st.integers(1, 12), st.sampled_from(POLICIES))
def test_the_batch_order_is_the_per_query_reference_order(
    data: tuple[dict[str, list[tuple[str, float]]], bool], k: int, ties: str
) -> None:
    scored, with_nul = data
    run = Run.from_scores(scored)
    assert (run._id_words is None) == with_nul
    assert run._scores is not None
    config = Settings(k=k, unjudged="zero", ties=ties)  # type: ignore[arg-type]
    expected = ties == "expected"
    reference: dict[str, list[int]] = {}
    refusal = None
    for query in run.query_ids:
        start, end = run._span(query)
        try:
            reference[query] = ranked_indices(
                run._docs[start:end], run._scores[start:end].tolist(), config.ties, k=k, query_id=query
            )
        except EvaluationError as error:
            refusal = refusal or error
    if refusal is not None:
        event("refused")
        with pytest.raises(EvaluationError) as raised:
            batch_order(run, config, expected=expected)
        assert str(raised.value) == str(refusal)
        return
    top = batch_order(run, config, expected=expected)
    width = int(run._lengths.max()) if expected else min(k, int(run._lengths.max()))
    for row, query in enumerate(run.query_ids):
        start, end = run._span(query)
        want = [start + i for i in reference[query][:width]]
        want += [-1] * (width - len(want))
        if top is None:  # every ranking in order and untied in its top K: the input order
            got = [start + i if i < end - start else -1 for i in range(width)]
        else:
            got = top[row].tolist()
        # Below K only a tied group reaching into the top K enters a score (ties="expected"
        # averages over it); a ranking with no tie there is compared in its top K.
        ordered = sorted(run._scores[start:end].tolist(), reverse=True)
        tied = any(a == b for a, b in zip(ordered[:k], ordered[1 : k + 1], strict=False))
        compared = width if tied else min(k, width)
        assert got[:compared] == want[:compared]


@settings(max_examples=150, deadline=None)
@given(runs(), st.integers(1, 12), st.sampled_from(POLICIES[1:]))
def test_every_metric_is_the_same_bits_as_one_query_at_a_time(
    data: tuple[dict[str, list[tuple[str, float]]], bool], k: int, ties: str
) -> None:
    """Each query evaluated alone (where no other query's ties can shift the batch's arrays)
    gives the same floating-point values as the whole run at once."""
    scored, _ = data
    pool = {query: {doc: len(doc) % 4 for doc, _ in ranking[::2]} for query, ranking in scored.items()}
    config = Settings(k=k, unjudged="zero", ties=ties)  # type: ignore[arg-type]
    metrics = [f"{name}@{k}" for name in ("ndcg", "recall", "p", "rr", "ap", "judged")]
    whole = evaluate_run(pool, Run.from_scores(scored), config, metrics=metrics)
    for i, query in enumerate(whole.query_ids):
        alone = evaluate_run(
            {query: pool[query]}, Run.from_scores({query: scored[query]}), config, metrics=metrics
        )
        assert whole.dcg[i] == alone.dcg[0]
        for metric in whole.metrics:
            mine = metric.values(whole.scores[metric.name]).per_query
            theirs = metric.values(alone.scores[metric.name]).per_query
            assert mine.keys() == theirs.keys()
            for column, values in mine.items():
                assert values[i] == theirs[column][0], (metric.name, column)
