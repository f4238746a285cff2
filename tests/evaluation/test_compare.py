"""Comparing two systems: same pool and settings only, reproducible statistics, no NaN surprises."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from evaluation.metrics import (
    EvaluationError,
    Settings,
    compare_results,
    compare_runs,
    evaluate_run,
    sign_flip_test,
)

SETTINGS = Settings(k=5, unjudged="zero")


def random_systems(
    n_queries: int, seed: int
) -> tuple[dict[str, dict[str, int]], dict[str, list[str]], dict[str, list[str]]]:
    rng = np.random.default_rng(seed)
    pool, run_a, run_b = {}, {}, {}
    for q in range(n_queries):
        docs = [f"d{i}" for i in range(12)]
        pool[f"q{q}"] = dict(zip(docs, rng.integers(0, 4, len(docs)).tolist(), strict=True))
        run_a[f"q{q}"] = rng.permutation(docs)[:8].tolist()
        run_b[f"q{q}"] = rng.permutation(docs)[:8].tolist()
    return pool, run_a, run_b


def test_deltas_are_b_minus_a_with_wins_ties_and_losses_counted_for_b() -> None:
    pool, run_a, run_b = random_systems(30, seed=1)
    run_b["q0"] = run_a["q0"]  # at least one tie
    comparison = compare_runs(pool, run_a, run_b, SETTINGS)
    a = evaluate_run(pool, run_a, SETTINGS)
    b = evaluate_run(pool, run_b, SETTINGS)
    deltas = b.ndcg - a.ndcg
    assert np.array_equal(comparison.delta, deltas)
    assert (comparison.wins, comparison.ties, comparison.losses) == (
        int((deltas > 0).sum()),
        int((deltas == 0).sum()),
        int((deltas < 0).sum()),
    )
    assert comparison.ties >= 1
    assert comparison.mean_delta == pytest.approx(b.mean - a.mean, abs=1e-12)  # type: ignore[operator]
    improvements = comparison.improvements(3)
    assert [d for _, d in improvements] == sorted(deltas[deltas > 0].tolist(), reverse=True)[:3]
    assert [d for _, d in comparison.regressions(3)] == sorted(deltas[deltas < 0].tolist())[:3]


def test_the_same_seed_gives_the_same_p_value_to_the_last_digit() -> None:
    pool, run_a, run_b = random_systems(40, seed=2)  # 2^40 sign patterns: sampled, not enumerated
    first = compare_runs(pool, run_a, run_b, Settings(k=5, unjudged="zero", seed=7))
    second = compare_runs(pool, run_a, run_b, Settings(k=5, unjudged="zero", seed=7))
    assert not first.randomization_exact
    assert first.randomization_p == second.randomization_p
    assert first.delta_ci95 == second.delta_ci95
    assert first.seed == 7


def test_a_sampled_p_value_uses_the_plus_one_correction() -> None:
    deltas = np.linspace(-0.2, 0.3, 40)
    result = sign_flip_test(deltas, n_permutations=999, seed=3)
    assert not result.exact and result.n_permutations == 999
    count = round(result.p * 1000) - 1  # type: ignore[operator]
    assert result.p == (count + 1) / 1000
    assert result.p > 0


def test_an_enumerated_sign_flip_test_equals_scipys_exact_permutation_test() -> None:
    rng = np.random.default_rng(4)
    for n in (2, 5, 9, 12):
        deltas = rng.normal(0.05, 0.2, n)
        ours = sign_flip_test(deltas, n_permutations=10_000, seed=0)
        theirs = stats.permutation_test(
            (deltas,),
            lambda x, axis: np.abs(np.mean(x, axis=axis)),
            permutation_type="samples",
            alternative="greater",
            n_resamples=10_000,
            vectorized=True,
        )
        assert ours.exact
        assert ours.p == theirs.pvalue


def test_a_sampled_sign_flip_test_approximates_the_exact_one() -> None:
    rng = np.random.default_rng(5)
    deltas = rng.normal(0.04, 0.2, 16)
    exact = sign_flip_test(deltas, n_permutations=2**16, seed=0)
    sampled = sign_flip_test(deltas, n_permutations=20_000, seed=0)
    assert exact.exact and not sampled.exact
    assert abs(exact.p - sampled.p) < 0.02  # type: ignore[operator]


def test_the_t_test_is_scipys_paired_t_test_of_b_against_a() -> None:
    pool, run_a, run_b = random_systems(25, seed=6)
    comparison = compare_runs(pool, run_a, run_b, SETTINGS)
    expected = stats.ttest_rel(comparison.b.ndcg, comparison.a.ndcg)
    assert comparison.t_test_p == expected.pvalue
    assert comparison.t_statistic == expected.statistic


def test_the_bootstrap_interval_brackets_the_mean_delta() -> None:
    pool, run_a, run_b = random_systems(50, seed=8)
    comparison = compare_runs(pool, run_a, run_b, SETTINGS)
    assert comparison.delta_ci95 is not None and comparison.mean_delta is not None
    low, high = comparison.delta_ci95
    assert low < comparison.mean_delta < high


def test_identical_systems_give_p_one_and_no_t_statistic_instead_of_nan() -> None:
    pool, run_a, _ = random_systems(10, seed=9)
    comparison = compare_runs(pool, run_a, run_a, SETTINGS)
    assert comparison.ties == 10 and comparison.mean_delta == 0.0
    assert comparison.randomization_p == 1.0
    assert comparison.t_test_p is None and comparison.t_statistic is None
    assert comparison.delta_ci95 == (0.0, 0.0)


def test_a_single_query_has_a_p_value_but_no_t_test_or_interval() -> None:
    comparison = compare_runs({"q": {"A": 3, "B": 1}}, {"q": ["B"]}, {"q": ["A"]}, SETTINGS)
    assert comparison.paired == 1
    assert comparison.randomization_p == 1.0  # both sign patterns are as extreme
    assert comparison.t_test_p is None and comparison.delta_ci95 is None


def test_no_paired_query_gives_none_everywhere() -> None:
    comparison = compare_runs({"q": {"Z": 0}}, {"q": ["Z"]}, {"q": []}, Settings(k=1, zero_idcg="exclude"))
    assert comparison.paired == 0
    assert comparison.mean_delta is None and comparison.randomization_p is None
    assert comparison.t_test_p is None and comparison.delta_ci95 is None
    assert comparison.delta_of("q") is None
    assert math.isnan(comparison.delta[0])


def test_systems_scored_under_different_settings_are_not_compared() -> None:
    pool, run_a, run_b = random_systems(5, seed=10)
    a = evaluate_run(pool, run_a, Settings(k=10, unjudged="zero"))
    b = evaluate_run(pool, run_b, Settings(k=5, unjudged="zero", gain="exponential"))
    with pytest.raises(
        EvaluationError, match=r"different settings: k \(10 vs 5\), gain \('linear' vs 'exponential'\)"
    ):
        compare_results(a, b)


def test_systems_scored_against_different_pools_are_not_compared() -> None:
    pool, run_a, run_b = random_systems(5, seed=11)
    other = {q: dict(grades) for q, grades in pool.items()}
    other["q0"]["d0"] = (other["q0"]["d0"] + 1) % 4
    with pytest.raises(EvaluationError, match="different judgment pools"):
        compare_results(evaluate_run(pool, run_a, SETTINGS), evaluate_run(other, run_b, SETTINGS))
    # An equal pool rebuilt from the same judgments is the same pool.
    copy = {q: dict(grades) for q, grades in pool.items()}
    compare_results(evaluate_run(pool, run_a, SETTINGS), evaluate_run(copy, run_b, SETTINGS))
