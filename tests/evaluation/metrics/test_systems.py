"""Two or more systems compared: Holm-Bonferroni adjusted p-values equal statsmodels' over the
declared family, every pair keeps the two-system figures, and the design is recorded."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from evaluation.metrics import (
    EvaluationError,
    Results,
    Settings,
    compare_results,
    compare_system_runs,
    compare_systems,
    evaluate_run,
    holm,
)
from tests.evaluation.metrics.test_results import POOL, RUN_A, RUN_B, RUN_C
from tests.evaluation.metrics.test_results import SETTINGS as EDGE_SETTINGS


def edge_runs(labels: str) -> list:
    """test_results' runs A, B, C (each case of exclusion, missing and unjudged) evaluated."""
    runs = dict(zip("abc", (RUN_A, RUN_B, RUN_C), strict=True))
    return [evaluate_run(POOL, runs[label], EDGE_SETTINGS, name=label) for label in labels]


FAST = {"n_permutations": 300, "n_resamples": 300}
METRIC_NAMES = ("ndcg@5", "recall@10", "p@5", "rr@10", "ap@10", "judged@5")

# p-values as the tests give them: exact ones repeat (1.0, 0.5, 0.25), sampled ones are (c+1)/(N+1).
pvalue = st.one_of(
    st.sampled_from([1.0, 0.5, 0.25, 0.125, 1 / 301, 2 / 301, 0.0625]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


def statsmodels_holm(pvalues: list[float]) -> list[float]:
    # multipletests runs gc.collect() on every call (~0.2 s inside pytest): hence few examples.
    return multipletests(np.array(pvalues), method="holm")[1].tolist()


@settings(max_examples=80, deadline=None)
@given(st.lists(pvalue, min_size=1, max_size=40))
def test_holm_equals_statsmodels_multipletests(pvalues: list[float]) -> None:
    assert holm(pvalues) == statsmodels_holm(pvalues)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.none(), pvalue), min_size=1, max_size=20))
def test_a_test_without_a_p_stays_none_and_is_not_counted_in_the_family(
    pvalues: list[float | None],
) -> None:
    adjusted = holm(pvalues)
    present = [p for p in pvalues if p is not None]
    expected = iter(statsmodels_holm(present) if present else [])
    assert adjusted == [None if p is None else next(expected) for p in pvalues]


def test_holm_worked_example() -> None:
    # Sorted 0.01, 0.02, 0.04, 0.5: times 4, 3, 2, 1 = 0.04, 0.06, 0.08, 0.5, already increasing.
    assert holm([0.04, 0.5, 0.01, 0.02]) == pytest.approx([0.08, 0.5, 0.04, 0.06], abs=1e-15)


def random_collection(seed: int, n_queries: int, n_systems: int) -> tuple[dict, list[dict]]:
    rng = np.random.default_rng(seed)
    pool: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        grades = rng.choice(4, size=12, p=[0.6, 0.22, 0.12, 0.06]).tolist()
        pool[f"q{q}"] = {f"d{i}": g for i, g in enumerate(grades)}
    runs = []
    for _ in range(n_systems):
        run = {}
        for q, docs in pool.items():
            ids = list(docs) + ["unjudged-1", "unjudged-2"]
            run[q] = rng.permutation(ids)[: int(rng.integers(0, 14))].tolist()
        runs.append(run)
    return pool, runs


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_queries=st.integers(1, 12),
    n_systems=st.integers(2, 4),
    family=st.sampled_from(["pairs-x-metrics", "pairs-per-metric"]),
    use_baseline=st.booleans(),
    zero_idcg=st.sampled_from(["zero", "exclude"]),
)
def test_the_adjusted_p_values_are_statsmodels_holm_over_the_declared_family(
    seed: int, n_queries: int, n_systems: int, family: str, use_baseline: bool, zero_idcg: str
) -> None:
    pool, runs = random_collection(seed, n_queries, n_systems)
    run_settings = Settings(k=5, unjudged="zero", zero_idcg=zero_idcg, seed=seed % 1000)
    baseline = "b" if use_baseline else None
    results = compare_system_runs(
        pool, runs, run_settings, metrics=METRIC_NAMES, baseline=baseline, family=family, **FAST
    )
    assert results.design is not None and results.design.family == family
    pairs = n_systems - 1 if use_baseline else n_systems * (n_systems - 1) // 2
    assert len(results.comparisons) == pairs * len(METRIC_NAMES)
    families = (
        [[c for c in results.comparisons if c.metric == m] for m in METRIC_NAMES]
        if family == "pairs-per-metric"
        else [list(results.comparisons)]
    )
    for members in families:
        present = [c for c in members if c.randomization_p is not None]
        expected = statsmodels_holm([c.randomization_p for c in present]) if present else []
        assert [c.holm_p for c in present] == expected
        assert all(c.holm_p is None for c in members if c.randomization_p is None)


def test_every_pair_of_the_n_has_the_two_system_figures() -> None:
    a, b, c = edge_runs("abc")
    results = compare_systems([a, b, c])
    assert [(s.a, s.b) for s in results.comparisons] == [("a", "b"), ("a", "c"), ("b", "c")]
    for first, second in (("a", "b"), ("a", "c"), ("b", "c")):
        runs = {"a": a, "b": b, "c": c}
        alone = compare_results(runs[first], runs[second]).to_stats(first, second, "ndcg")
        stats = results.comparison(first, second)
        assert stats is not None and stats.holm_p is not None
        assert dataclasses.replace(stats, holm_p=None) == alone


def test_ndcg_asked_for_at_the_settings_k_gives_the_same_pair_figures() -> None:
    pool, (run_a, run_b) = random_collection(3, 30, 2)
    run_settings = Settings(k=5, unjudged="zero", zero_idcg="exclude")
    results = compare_system_runs(pool, [run_a, run_b], run_settings, metrics=("ndcg@5", "p@5"))
    alone = compare_results(
        evaluate_run(pool, run_a, run_settings), evaluate_run(pool, run_b, run_settings)
    ).to_stats("a", "b", "ndcg@5")
    stats = results.comparison("a", "b", "ndcg@5")
    assert stats is not None and dataclasses.replace(stats, holm_p=None) == alone


def test_against_a_baseline_each_other_system_minus_the_baseline() -> None:
    pool, runs = random_collection(4, 20, 3)
    results = compare_system_runs(pool, runs, Settings(k=5, unjudged="zero"), baseline="b", **FAST)
    assert [(c.a, c.b) for c in results.comparisons] == [("b", "a"), ("b", "c")]
    assert results.design is not None and results.design.pairing == "baseline"
    ndcg = {s.label: s.metrics["ndcg"].per_query["ndcg"] for s in results.systems}
    for stats in results.comparisons:
        assert stats.delta == tuple(y - x for x, y in zip(ndcg["b"], ndcg[stats.b], strict=True))


def test_the_design_and_adjusted_p_values_round_trip_through_the_stored_document() -> None:
    pool, runs = random_collection(5, 15, 3)
    results = compare_system_runs(
        pool,
        runs,
        Settings(k=5, unjudged="zero"),
        metrics=("ndcg@5", "rr@10"),
        family="pairs-per-metric",
        **FAST,
    )
    document = json.loads(json.dumps(results.to_dict()))
    assert document["design"] == {
        "pairing": "all-pairs",
        "baseline": None,
        "family": "pairs-per-metric",
        "correction": "holm",
        "adjusted": "randomization_p",
    }
    assert all("holm_p" in c for c in document["comparisons"])
    assert Results.from_dict(document) == results


def test_a_two_system_document_keeps_its_keys() -> None:
    a, b = edge_runs("ab")
    document = Results.from_engine([a, b], [compare_results(a, b)]).to_dict()
    assert "design" not in document and all("holm_p" not in c for c in document["comparisons"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"baseline": "d"}, "baseline 'd' is not one of the runs; the runs are a, b, c"),
        ({"family": "pairs"}, "unknown family 'pairs' for the correction; the families are pairs-x-metrics"),
        ({"labels": ["a", "a", "b"]}, "the runs' labels must differ"),
        ({"labels": ["a", "b"]}, "3 runs need as many labels, got 2"),
    ],
)
def test_a_bad_design_is_refused_naming_the_value(kwargs: dict, message: str) -> None:
    runs = edge_runs("abc")
    with pytest.raises(EvaluationError, match=message):
        compare_systems(runs, **kwargs)


def test_one_run_is_not_a_comparison() -> None:
    with pytest.raises(EvaluationError, match="a comparison needs two or more runs, got 1"):
        compare_systems([evaluate_run(POOL, RUN_A, EDGE_SETTINGS)])


def test_runs_scored_differently_are_refused() -> None:
    a = evaluate_run(POOL, RUN_A, EDGE_SETTINGS, name="a", metrics=("ndcg@3",))
    b = evaluate_run(POOL, RUN_B, EDGE_SETTINGS, name="b", metrics=("p@3",))
    with pytest.raises(EvaluationError, match="scored on different metrics"):
        compare_systems([a, b])
    c = evaluate_run(POOL, RUN_C, dataclasses.replace(EDGE_SETTINGS, k=4), name="c", metrics=("ndcg@3",))
    with pytest.raises(EvaluationError, match="different settings"):
        compare_systems([a, c])
