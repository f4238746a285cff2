"""Comparing two systems on the same pool under the same settings.

Three different questions, three different tools:

* **Paired randomization test** (`sign_flip_test`): under the null hypothesis the two systems
  are exchangeable on every query, so each per-query delta is as likely to carry either sign.
  The statistic is |sum of deltas|; p is the share of sign patterns at least as extreme. With
  2^n <= n_permutations every pattern is enumerated and p is exact (count / 2^n, the observed
  pattern included); otherwise `n_permutations` random patterns are drawn from
  `numpy.random.default_rng(seed)` and p = (count + 1) / (n_permutations + 1), the +1 counting
  the observed pattern so p is never 0. The same seed gives the same p to the last digit. This is
  the sign-flip test of `scipy.stats.permutation_test(permutation_type="samples")` on one sample
  (a test checks they agree exactly when enumerated); it is implemented here with packed random
  bits because scipy's general version takes seconds on 10,000 queries.
* **Bootstrap CI** (`scipy.stats.bootstrap`, BCa, 95%): the uncertainty of the mean delta when
  queries are resampled with replacement, seeded with the same seed.
* **Paired t-test** (`scipy.stats.ttest_rel`): the parametric counterpart, for readers used to it.

Degenerate cases never produce NaN: with no paired query every statistic is None; with one, the
t-test and the CI are None; when every delta is equal the t statistic is undefined (None) and the
CI is that single value.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics.batch import RunResult, evaluate_run
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import DEFAULT_SETTINGS, EvaluationError, Settings

N_PERMUTATIONS = 10_000
N_RESAMPLES = 10_000
# Sums of the same terms in another order may differ in the last bits; like scipy, treat null
# statistics within this relative distance of the observed one as equal to it.
RELATIVE_TOLERANCE = 100 * np.finfo(np.float64).eps


@dataclass(frozen=True)
class SignFlipResult:
    p: float | None
    exact: bool
    n_permutations: int


@dataclass(frozen=True, eq=False)
class Comparison:
    """System B against system A (deltas are B - A: a win is a query where B scores higher).

    `delta` is aligned with `query_ids` (NaN for excluded queries); the statistics use the
    `paired` queries in the mean of both systems.
    """

    settings: Settings
    a: RunResult
    b: RunResult
    query_ids: tuple[str, ...]
    delta: np.ndarray
    paired: int
    mean_delta: float | None
    wins: int
    ties: int
    losses: int
    randomization_p: float | None
    randomization_exact: bool
    n_permutations: int
    t_statistic: float | None
    t_test_p: float | None
    delta_ci95: tuple[float, float] | None
    n_resamples: int
    seed: int

    def delta_of(self, query_id: str) -> float | None:
        value = float(self.delta[self.a._position(query_id)])
        return None if math.isnan(value) else value

    def _ranked(self, sign: int, n: int) -> list[tuple[str, float]]:
        values = self.delta.tolist()
        chosen = [(q, v) for q, v in zip(self.query_ids, values, strict=True) if v * sign > 0]
        # Largest change first; equal changes keep the pool's query order.
        return sorted(chosen, key=lambda item: -item[1] * sign)[:n]

    def improvements(self, n: int = 5) -> list[tuple[str, float]]:
        """The n queries where B gained most over A, largest first."""
        return self._ranked(1, n)

    def regressions(self, n: int = 5) -> list[tuple[str, float]]:
        """The n queries where B lost most against A, largest loss first."""
        return self._ranked(-1, n)


def sign_flip_test(deltas: Sequence[float] | np.ndarray, *, n_permutations: int, seed: int) -> SignFlipResult:
    """Two-sided paired randomization (sign-flip) test of the mean delta; see the module docstring."""
    d = np.asarray(deltas, dtype=np.float64)
    n = len(d)
    if n == 0:
        return SignFlipResult(None, False, 0)
    total = float(d.sum())
    observed = abs(total)
    threshold = observed - RELATIVE_TOLERANCE * observed
    # A pattern flips the deltas where its bit is 1: sum = total - 2 * (bits @ d).
    if n < 63 and 2**n <= n_permutations:
        patterns = np.arange(2**n, dtype=np.int64)
        bits = ((patterns[:, None] >> np.arange(n)) & 1).astype(np.float64)
        null = np.abs(total - 2.0 * (bits @ d))
        count = int(np.count_nonzero(null >= threshold))
        return SignFlipResult(count / 2**n, True, 2**n)
    rng = np.random.default_rng(seed)
    # The batch size depends on n only, so the random stream, hence p, depends on (d, n_perm, seed).
    batch = max(1, min(n_permutations, 2**22 // n))
    count = 0
    done = 0
    while done < n_permutations:
        size = min(batch, n_permutations - done)
        packed = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(packed, axis=1, count=n).astype(np.float64)
        null = np.abs(total - 2.0 * (bits @ d))
        count += int(np.count_nonzero(null >= threshold))
        done += size
    return SignFlipResult((count + 1) / (n_permutations + 1), False, n_permutations)


def bootstrap_ci(deltas: np.ndarray, *, n_resamples: int, seed: int) -> tuple[float, float] | None:
    """95% BCa bootstrap interval of the mean delta (scipy.stats.bootstrap), None when n < 2."""
    n = len(deltas)
    if n < 2:
        return None
    if bool(np.all(deltas == deltas[0])):
        value = float(deltas[0])
        return (value, value)
    from scipy import stats

    batch = max(1, min(n_resamples, 2**22 // n))
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            # BCa is undefined for some degenerate samples; scipy warns and returns NaN, and we
            # fall back to the percentile interval instead.
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                (deltas,),
                np.mean,
                confidence_level=0.95,
                n_resamples=n_resamples,
                method=method,
                batch=batch,
                rng=np.random.default_rng(seed),
            )
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return (low, high)
    return None


def paired_t_test(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    """(t, p) of scipy.stats.ttest_rel(b, a); (None, None) when n < 2 or every delta is equal."""
    deltas = b - a
    if len(deltas) < 2 or bool(np.all(deltas == deltas[0])):
        return None, None
    from scipy import stats

    result = stats.ttest_rel(b, a)
    return float(result.statistic), float(result.pvalue)


def compare_results(
    a: RunResult,
    b: RunResult,
    *,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> Comparison:
    """Compare two evaluated runs; refuses runs scored on different pools or settings."""
    differences = a.settings.differences(b.settings)
    if differences:
        raise EvaluationError(
            f"cannot compare {a.name!r} with {b.name!r}: they were scored under different settings: "
            + ", ".join(differences)
        )
    if a.pool is not b.pool and a.pool.fingerprint != b.pool.fingerprint:
        raise EvaluationError(
            f"cannot compare {a.name!r} with {b.name!r}: they were scored against different judgment pools "
            f"({a.pool.fingerprint[:12]} vs {b.pool.fingerprint[:12]})"
        )
    paired_mask = ~a.excluded & ~b.excluded
    delta = np.where(paired_mask, b.ndcg - a.ndcg, np.nan)
    delta.flags.writeable = False
    deltas = delta[paired_mask]
    n = len(deltas)
    flip = sign_flip_test(deltas, n_permutations=n_permutations, seed=a.settings.seed)
    t_statistic, t_p = paired_t_test(a.ndcg[paired_mask], b.ndcg[paired_mask])
    return Comparison(
        settings=a.settings,
        a=a,
        b=b,
        query_ids=a.query_ids,
        delta=delta,
        paired=n,
        mean_delta=math.fsum(deltas.tolist()) / n if n else None,
        wins=int(np.count_nonzero(deltas > 0)),
        ties=int(np.count_nonzero(deltas == 0)),
        losses=int(np.count_nonzero(deltas < 0)),
        randomization_p=flip.p,
        randomization_exact=flip.exact,
        n_permutations=flip.n_permutations,
        t_statistic=t_statistic,
        t_test_p=t_p,
        delta_ci95=bootstrap_ci(deltas, n_resamples=n_resamples, seed=a.settings.seed),
        n_resamples=n_resamples,
        seed=a.settings.seed,
    )


def compare_runs(
    pool: Pool | Mapping[str, Mapping[str, int]],
    run_a: Run | Mapping[str, Sequence[str]],
    run_b: Run | Mapping[str, Sequence[str]],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> Comparison:
    """Evaluate both runs on the same pool and settings, then compare them (B - A)."""
    pool = pool if isinstance(pool, Pool) else Pool(pool)
    a = evaluate_run(pool, run_a, settings, name="a")
    b = evaluate_run(pool, run_b, settings, name="b")
    return compare_results(a, b, n_permutations=n_permutations, n_resamples=n_resamples)
