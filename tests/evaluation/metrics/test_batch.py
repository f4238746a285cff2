"""The batch engine's fast paths give the per-query path's numbers and errors, whatever path a run takes.

Runs in score order use their input order; the other rows are sorted outright or, when rankings
are long, partially (argpartition): every path must give `score_query`'s numbers to 1e-12 and the
same refusals. IDCG is kept with the frozen pool, once per K and gain. Each metric of `METRICS`
reads the run's one order.
"""

from __future__ import annotations

import numpy as np
import pytest

from evaluation import metrics
from evaluation.metrics import EvaluationError, Pool, Run, Settings, evaluate_run, ordering, score_query

TIES = ["error", "docid-desc", "docid-asc", "input-order", "expected"]


def scored_run(
    seed: int, *, n_queries: int = 25, order: str = "mixed", coarse: float = 0.3
) -> tuple[Pool, Run]:
    """Pools of up to 60 graded documents; runs of up to 70 (some unjudged), scores distinct or
    coarse (ties), each query's rows in score order, shuffled, or either."""
    rng = np.random.default_rng(seed)
    grades: dict[str, dict[str, int]] = {}
    scored: dict[str, list[tuple[str, float]]] = {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 61)))]
        grades[f"q{q}"] = {doc: int(g) for doc, g in zip(docs, rng.integers(0, 4, len(docs)), strict=True)}
        if rng.random() < 0.1:
            continue  # missing from the run
        candidates = docs + [f"u{i}" for i in range(int(rng.integers(0, 11)))]
        ranking = [
            str(doc) for doc in rng.permutation(candidates)[: int(rng.integers(0, len(candidates) + 1))]
        ]
        tied = rng.random() < coarse
        scores = rng.integers(0, 5, len(ranking)) if tied else rng.permutation(len(ranking))
        pairs = [(doc, float(score)) for doc, score in zip(ranking, scores, strict=True)]
        in_order = {"sorted": True, "shuffled": False}.get(order, bool(rng.random() < 0.5))
        if in_order:
            pairs.sort(key=lambda pair: -pair[1])  # stable: tied pairs keep their input order
        scored[f"q{q}"] = pairs
    return Pool(grades), Run.from_scores(scored)


def outcome(pool: Pool, run: Run, settings: Settings) -> tuple[str, object]:
    try:
        result = evaluate_run(pool, run, settings)
    except EvaluationError as error:
        return "refused", (str(error), error.query, error.doc_id)
    return "scored", (result.dcg.tolist(), result.idcg.tolist(), result.unjudged.tolist(), result.counts)


@pytest.mark.parametrize("order", ["sorted", "shuffled", "mixed"])
@pytest.mark.parametrize("ties", TIES)
def test_every_ordering_path_gives_the_per_query_numbers_and_errors(
    order: str, ties: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for seed in range(6):
        pool, run = scored_run(seed, order=order, coarse=0.3 if seed < 3 else 0.0)
        for k in (1, 3, 10):
            settings = Settings(k=k, unjudged="zero" if seed % 2 else "error", ties=ties)  # type: ignore[arg-type]
            outcomes = []
            for ratio in (1, 10**9):  # partial sort of every unsorted row, or full sorts only
                monkeypatch.setattr(ordering, "PARTIAL_SORT_RATIO", ratio)
                outcomes.append(outcome(pool, run, settings))
            assert outcomes[0] == outcomes[1]
            kind, _ = outcomes[0]
            singles = []
            for query in pool:
                try:
                    singles.append(
                        score_query(
                            run.ranking(query),
                            pool[query],
                            settings,
                            scores=run.scores_of(query),
                            query_id=query,
                        )
                    )
                except EvaluationError:
                    singles.append(None)
            if kind == "refused":
                assert None in singles
                continue
            assert None not in singles
            result = evaluate_run(pool, run, settings)
            for i, single in enumerate(singles):
                assert single is not None
                assert abs(result.dcg[i] - single.dcg) <= 1e-12
                assert abs(result.idcg[i] - single.idcg) <= 1e-12
                assert result.unjudged[i] == single.unjudged_in_top_k


def test_a_tie_reaching_into_the_top_k_of_a_run_in_score_order_is_still_refused() -> None:
    pool = Pool({"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"a": 1, "b": 0, "c": 2}})
    run = Run.from_scores(
        {"q1": [("a", 3.0), ("b", 2.0), ("c", 1.0)], "q2": [("a", 9.0), ("b", 5.0), ("c", 5.0)]}
    )
    with pytest.raises(
        EvaluationError, match=r"query 'q2': documents 'b', 'c' share the score 5.0 at ranks 2-3"
    ):
        evaluate_run(pool, run, Settings(k=2))
    # Below K the tie cannot change NDCG@K: the input order stands.
    assert evaluate_run(pool, run, Settings(k=1)).ndcg.tolist() == [1.0, 0.5]


def test_idcg_is_computed_once_per_pool_k_and_gain_and_is_read_only() -> None:
    pool, run = scored_run(1, order="sorted")
    settings = Settings(k=5, unjudged="zero", ties="docid-desc")
    first, second = evaluate_run(pool, run, settings), evaluate_run(pool, run, settings)
    assert first.idcg is second.idcg and not first.idcg.flags.writeable
    other_k = evaluate_run(pool, run, Settings(k=3, unjudged="zero", ties="docid-desc"))
    other_gain = evaluate_run(
        pool, run, Settings(k=5, unjudged="zero", ties="docid-desc", gain="exponential")
    )
    assert other_k.idcg is not first.idcg and other_gain.idcg is not first.idcg
    for result in (first, other_k, other_gain):
        for i, query in enumerate(result.query_ids):
            assert result.idcg[i] == score_query([], pool[query], result.settings).idcg
    # An equal pool rebuilt from the same grades computes its own.
    copy = Pool({query: dict(grades) for query, grades in pool.items()})
    assert np.array_equal(evaluate_run(copy, run, settings).idcg, first.idcg)


def test_under_expected_ties_the_unjudged_count_covers_what_the_error_policy_refuses() -> None:
    # X (unjudged) ties with B across K = 2: its gain 0 is averaged into rank 2, so it counts.
    pool = Pool({"q": {"A": 3, "B": 2, "C": 1}})
    run = Run.from_scores({"q": {"A": 3.0, "B": 2.0, "X": 2.0}})
    zero = Settings(k=2, unjudged="zero", ties="expected")
    single = score_query(run.ranking("q"), pool["q"], zero, scores=run.scores_of("q"), query_id="q")
    result = evaluate_run(pool, run, zero)
    assert single.unjudged_in_top_k == 1
    assert result.unjudged.tolist() == [1] and result.counts.unjudged_in_top_k == 1
    with pytest.raises(EvaluationError, match="'X' has no grade in the pool"):
        evaluate_run(pool, run, Settings(k=2, unjudged="error", ties="expected"))
    # Without the tie reaching into the top K, an ID below K is neither refused nor counted.
    below = Run.from_scores({"q": {"A": 3.0, "B": 2.0, "X": 1.0}})
    assert evaluate_run(pool, below, Settings(k=2, ties="expected")).counts.unjudged_in_top_k == 0


def test_every_metric_of_the_registry_reads_the_one_order_of_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[ordering.Ranked] = []

    def batch(ranked: ordering.Ranked) -> np.ndarray:
        seen.append(ranked)
        return ranked.grades.copy()

    def values(grades: np.ndarray) -> metrics.MetricValues:
        return metrics.MetricValues(per_query={"top": tuple(grades.tolist())}, aggregates={}, counts={})

    grades = metrics.Metric(
        name="grades", label="grades", measure=str, batch=batch, values=values, partial="grades.html"
    )
    pool = Pool({"q1": {"A": 3, "B": 0}, "q2": {"C": 1}})
    run = Run.from_scores({"q1": {"A": 1.0, "X": 2.0}, "q2": {"C": 5.0}})
    settings = Settings(k=2, unjudged="zero")
    alone = evaluate_run(pool, run, settings)
    registry = metrics.METRICS
    monkeypatch.setattr(metrics, "METRICS", (*registry, grades))
    result = evaluate_run(pool, run, settings)
    # Ordered once by score, grades looked up once: X (unjudged) above A; q2 one document short.
    assert len(seen) == 1 and seen[0].grades.tolist() == [[ordering.UNJUDGED, 3], [1, ordering.EMPTY]]
    assert result.ndcg.tolist() == alone.ndcg.tolist() and result.counts == alone.counts
    system = metrics.Results.from_engine([result]).system("a")
    assert list(system.metrics) == [*(metric.name for metric in registry), "grades"]
    assert system.metrics["grades"].per_query["top"] == ([-1, 3], [1, -2])
