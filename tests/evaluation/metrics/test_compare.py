"""Comparing two systems: same pool and settings only, reproducible statistics, no NaN surprises."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from evaluation.metrics import (
    EvaluationError,
    Settings,
    compare,
    compare_results,
    compare_runs,
    evaluate_run,
    sign_flip_test,
)
from evaluation.metrics.compare import _resample_means, bootstrap_ci

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


def test_the_statistics_do_not_depend_on_the_order_of_the_pools_queries() -> None:
    """The same pool and seed give the same interval and sampled p whatever the order of the qrels
    file, so the command line and the app agree."""
    pool, run_a, run_b = random_systems(40, seed=3)
    backwards = dict(reversed(list(pool.items())))
    assert list(backwards) != list(pool)
    first = compare_runs(pool, run_a, run_b, SETTINGS)
    second = compare_runs(backwards, run_a, run_b, SETTINGS)
    assert not first.randomization_exact
    assert first.randomization_p == second.randomization_p
    assert first.delta_ci95 == second.delta_ci95
    assert first.t_test_p == second.t_test_p
    # The t-test's sums too: a reversed order may give the same bits where a shuffled one differs
    # in the last digit.
    rng = np.random.default_rng(11)
    items = list(pool.items())
    for _ in range(20):
        shuffled = dict(items[i] for i in rng.permutation(len(items)))
        again = compare_runs(shuffled, run_a, run_b, SETTINGS)
        assert (again.t_statistic, again.t_test_p) == (first.t_statistic, first.t_test_p)


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


# --- The fast statistics against their references -------------------------------------------------


def skewed_deltas(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).exponential(0.2, n) - 0.1


def test_the_bootstrap_interval_is_scipys_bca_of_the_same_resample_means() -> None:
    # Same bootstrap distribution in, same interval out: z0, the jackknife acceleration and the
    # quantiles follow scipy.stats.bootstrap(method="BCa") exactly (scipy's jackknife is O(n^2),
    # ours is the analytic one of the mean).
    for n, seed in ((2, 0), (7, 1), (40, 2), (300, 3)):
        deltas = skewed_deltas(n, seed)
        means = _resample_means(deltas, n_resamples=4000, seed=seed)
        theirs = stats.bootstrap(
            (deltas,),
            np.mean,
            n_resamples=0,
            bootstrap_result=SimpleNamespace(bootstrap_distribution=means),
            method="BCa",
        ).confidence_interval
        ours = bootstrap_ci(deltas, n_resamples=4000, seed=seed)
        assert ours == pytest.approx((theirs.low, theirs.high), rel=1e-12, abs=1e-15)


def test_the_bootstrap_interval_agrees_with_scipys_within_monte_carlo_error() -> None:
    # Different random streams, same method: the endpoints differ by Monte-Carlo noise only
    # (with 20,000 resamples its standard deviation is a few hundredths of the bootstrap standard
    # error), while the percentile method is visibly elsewhere on these skewed samples.
    ours_off, percentile_off = [], []
    for n in (25, 60):
        for seed in range(4):
            deltas = skewed_deltas(n, 100 * n + seed)
            standard_error = float(deltas.std(ddof=1)) / math.sqrt(n)
            ours = bootstrap_ci(deltas, n_resamples=20_000, seed=seed)
            assert ours is not None
            bca, percentile = (
                stats.bootstrap(
                    (deltas,), np.mean, n_resamples=20_000, method=method, rng=np.random.default_rng(seed)
                ).confidence_interval
                for method in ("BCa", "percentile")
            )
            ours_off.append(max(abs(ours[0] - bca.low), abs(ours[1] - bca.high)) / standard_error)
            percentile_off.append(
                max(abs(percentile.low - bca.low), abs(percentile.high - bca.high)) / standard_error
            )
    assert max(ours_off) < 0.15
    assert sum(ours_off) < sum(percentile_off) / 4


def test_the_resample_means_are_plain_bootstrap_means_of_each_chunks_stream(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The in-place gather must not change a single mean: rebuild them the obvious way.
    monkeypatch.setattr(compare, "BOOTSTRAP_CHUNK", 1000)
    deltas = skewed_deltas(97, 4)
    means = _resample_means(deltas, n_resamples=55, seed=9)
    rows = 1000 // 97
    streams = np.random.SeedSequence(9).spawn(math.ceil(55 / rows))
    expected = np.concatenate(
        [
            deltas[
                np.random.Generator(np.random.PCG64(stream)).integers(0, 97, size=(min(rows, 55 - start), 97))
            ].mean(axis=1)
            for start, stream in zip(range(0, 55, rows), streams, strict=True)
        ]
    )
    assert np.array_equal(means, expected)


def test_the_statistics_do_not_depend_on_the_number_of_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    pool, run_a, run_b = random_systems(300, seed=12)
    monkeypatch.setattr(compare, "BOOTSTRAP_CHUNK", 2000)  # many chunks, run in any order
    results = []
    for threads in (1, 2, 4):
        monkeypatch.setattr(compare, "MAX_THREADS", threads)
        comparison = compare_runs(pool, run_a, run_b, Settings(k=5, unjudged="zero", seed=3))
        results.append((comparison.randomization_p, comparison.delta_ci95))
    assert results[0] == results[1] == results[2]


def exact_sign_flip_p(units: np.ndarray, n_permutations: int, seed: int) -> float:
    """The sampled test on integer deltas, in exact integer arithmetic, drawing the same patterns
    (the same bytes of the same stream, most significant bit first) as sign_flip_test."""
    n = len(units)
    rng = np.random.default_rng(seed)
    batch = max(1, min(n_permutations, 2**22 // n))
    observed = abs(int(units.sum()))
    count = done = 0
    while done < n_permutations:
        size = min(batch, n_permutations - done)
        packed = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        signs = 1 - 2 * np.unpackbits(packed, axis=1, count=n).astype(np.int64)
        count += int(np.count_nonzero(np.abs(signs @ units) >= observed))
        done += size
    return (count + 1) / (n_permutations + 1)


def test_a_sampled_sign_flip_p_counts_exact_ties_whatever_the_order_of_summation() -> None:
    # Deltas that repeat (0.1, -0.3, ...) make many sign patterns reach exactly the observed |sum|,
    # which floating-point sums in different orders may miss by a rounding. Scaled to integers,
    # the same patterns are counted exactly; the p-values must be identical.
    rng = np.random.default_rng(13)
    for n, seed in ((20, 0), (64, 1), (301, 2), (2000, 3)):
        units = rng.choice(np.array([-3, -1, 0, 1, 2, 3]), n)
        ours = sign_flip_test(units / 10, n_permutations=3000, seed=seed)
        assert not ours.exact
        assert ours.p == exact_sign_flip_p(units, 3000, seed)


def test_a_sampled_sign_flip_p_is_the_share_of_the_drawn_patterns_as_extreme() -> None:
    # Continuous deltas: the byte tables give the count of the plain computation, pattern by pattern.
    deltas = np.random.default_rng(14).normal(0.01, 0.2, 333)
    rng = np.random.default_rng(5)
    packed = rng.integers(0, 256, size=(5000, 42), dtype=np.uint8)  # one batch: 5000 <= 2**22 // 333
    bits = np.unpackbits(packed, axis=1, count=333).astype(np.float64)
    null = np.abs(deltas.sum() - 2.0 * (bits @ deltas))
    count = int(np.count_nonzero(null >= abs(deltas.sum()) * (1 - 1e-12)))
    assert sign_flip_test(deltas, n_permutations=5000, seed=5).p == (count + 1) / 5001


def test_without_byte_tables_the_sampled_sign_flip_p_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # Very many queries: the tables would be too large, and the bits are multiplied instead.
    rng = np.random.default_rng(15)
    for deltas in (rng.normal(0.0, 0.2, 500), rng.choice([-0.3, -0.1, 0.0, 0.1, 0.2], 500)):
        with_tables = sign_flip_test(deltas, n_permutations=4000, seed=6)
        monkeypatch.setattr(compare, "SIGN_TABLE_LIMIT", 0)
        assert sign_flip_test(deltas, n_permutations=4000, seed=6) == with_tables
        monkeypatch.undo()
