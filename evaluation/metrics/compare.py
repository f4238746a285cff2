"""Comparing two systems on the same pool under the same settings: a paired randomization test,
a bootstrap CI (BCa) and a paired t-test, each answering its own question.

Both resampling statistics take the paired queries sorted by query ID, so they depend on the pool
and the seed only, never on a file's order; degenerate cases give None, never NaN.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from evaluation.metrics.batch import RunResult, evaluate_run
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import DEFAULT_SETTINGS, EvaluationError, Settings, gettext_noop
from evaluation.metrics.results import ComparisonStats

N_PERMUTATIONS = 10_000
N_RESAMPLES = 10_000
CONFIDENCE = 0.95  # of the bootstrap interval
BOOTSTRAP_CHUNK = 2**19  # deltas drawn per chunk of resamples (about 8 MB of work arrays)
MAX_THREADS = 2  # worker threads of a comparison's statistics (at most the CPUs available)
SIGN_TABLE_LIMIT = 2**22  # entries (32 MB) of the randomization test's byte tables, at most
# Sums of the same terms in another order may differ in the last bits; like scipy, treat null
# statistics within this relative distance of the observed one as equal to it (or within the
# rounding bound of the sums, whichever is larger: see _tie_tolerance).
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

    def to_stats(self, a: str, b: str, metric: str) -> ComparisonStats:
        """This comparison in the results shape (results.py); `a` and `b` label its systems."""
        return ComparisonStats(
            a=a,
            b=b,
            metric=metric,
            delta=tuple(None if math.isnan(v) else v for v in self.delta.tolist()),
            paired=self.paired,
            mean_delta=self.mean_delta,
            wins=self.wins,
            ties=self.ties,
            losses=self.losses,
            randomization_p=self.randomization_p,
            randomization_exact=self.randomization_exact,
            n_permutations=self.n_permutations,
            t_statistic=self.t_statistic,
            t_test_p=self.t_test_p,
            delta_ci95=self.delta_ci95,
            n_resamples=self.n_resamples,
            seed=self.seed,
        )


def _tie_tolerance(d: np.ndarray, observed: float) -> float:
    """How close to the observed statistic a null statistic counts as a tie (as extreme).

    A sign pattern that reproduces the observed |sum| exactly (common when deltas repeat, e.g.
    0.25 and -0.25) is summed in a different order than the observed sum, so the two may differ
    by rounding. Bounding that error makes the count independent of the order of summation:
    each sum is accurate to (depth of its rounding chain) * eps * sum |d|, and the chains here
    (numpy's pairwise sums, BLAS, the 8-delta tables) are far shorter than 2 * log2(n) + 64.
    """
    eps = float(np.finfo(np.float64).eps)
    rounding = (2.0 * math.log2(len(d) + 1) + 64.0) * eps * float(np.abs(d).sum())
    return max(RELATIVE_TOLERANCE * observed, rounding)


def sign_flip_test(deltas: Sequence[float] | np.ndarray, *, n_permutations: int, seed: int) -> SignFlipResult:
    """Two-sided paired randomization (sign-flip) test of the mean delta; see the module docstring."""
    d = np.asarray(deltas, dtype=np.float64)
    n = len(d)
    if n == 0:
        return SignFlipResult(None, False, 0)
    total = float(d.sum())
    observed = abs(total)
    threshold = observed - _tie_tolerance(d, observed)
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
    # Each random byte flips 8 consecutive deltas (most significant bit first, numpy's unpackbits
    # order). The flipped sum of a byte is looked up in a table of the 256 possible sums of its 8
    # deltas, so a pattern costs n / 8 lookups instead of n multiplications. (Past a million or
    # so deltas the table would outgrow its use; the bits are then unpacked and multiplied.)
    n_bytes = (n + 7) // 8
    with_table = n_bytes * 256 <= SIGN_TABLE_LIMIT
    if with_table:
        padded = np.zeros(n_bytes * 8)
        padded[:n] = d  # the unused bits of the last byte flip zeros
        byte_bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.float64)
        table = (padded.reshape(n_bytes, 8) @ byte_bits.T).ravel()  # row j: the 256 sums of byte j
        row_start = np.arange(n_bytes, dtype=np.intp) * 256
    count = 0
    done = 0
    while done < n_permutations:
        size = min(batch, n_permutations - done)
        packed = rng.integers(0, 256, size=(size, n_bytes), dtype=np.uint8)
        if with_table:
            # Table positions, then their sums gathered in place (one work array, as in
            # _resample_means).
            lookups = np.add(packed, row_start, dtype=np.intp)
            flipped = np.take(table, lookups, out=lookups.view(np.float64), mode="clip").sum(axis=1)
        else:
            flipped = np.unpackbits(packed, axis=1, count=n).astype(np.float64) @ d
        null = np.abs(total - 2.0 * flipped)
        count += int(np.count_nonzero(null >= threshold))
        done += size
    return SignFlipResult((count + 1) / (n_permutations + 1), False, n_permutations)


def _resample_means(
    d: np.ndarray, *, n_resamples: int, seed: int, pool: ThreadPoolExecutor | None = None
) -> np.ndarray:
    """Means of `n_resamples` bootstrap resamples of `d` (n draws with replacement each).

    The resamples are drawn in chunks of about BOOTSTRAP_CHUNK deltas; chunk i has its own random
    stream, child i of `numpy.random.SeedSequence(seed)`, so every mean depends only on (d,
    n_resamples, seed): never on the order in which chunks run, nor on how many threads run them
    (numpy releases the GIL while it draws and averages, so `pool` runs chunks in parallel).
    Each mean is `np.mean` of the resampled deltas, as `scipy.stats.bootstrap` computes it.
    """
    n = len(d)
    rows = max(1, min(n_resamples, BOOTSTRAP_CHUNK // n))
    starts = list(range(0, n_resamples, rows))
    streams = np.random.SeedSequence(seed).spawn(len(starts))
    means = np.empty(n_resamples)

    def fill(chunk: int) -> None:
        start = starts[chunk]
        stop = min(start + rows, n_resamples)
        rng = np.random.Generator(np.random.PCG64(streams[chunk]))
        drawn = rng.integers(0, n, size=(stop - start, n))
        # Gather in place (each index is read before its slot is overwritten): one work array
        # per chunk, which the allocator hands back chunk after chunk instead of fresh pages.
        # The indices are in range, so mode="clip" never clips; it only skips a bounds check.
        values = np.take(d, drawn, out=drawn.view(np.float64), mode="clip")
        np.mean(values, axis=1, out=means[start:stop])

    if pool is None or len(starts) == 1:
        for chunk in range(len(starts)):
            fill(chunk)
    else:
        for _ in pool.map(fill, range(len(starts))):
            pass
    return means


def _thread_pool() -> ThreadPoolExecutor | None:
    """Up to MAX_THREADS worker threads, or None on a single-CPU machine."""
    cpus = os.process_cpu_count() if hasattr(os, "process_cpu_count") else os.cpu_count()
    workers = min(MAX_THREADS, cpus or 1)
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="statistics") if workers > 1 else None


def bootstrap_ci(
    deltas: Sequence[float] | np.ndarray, *, n_resamples: int, seed: int
) -> tuple[float, float] | None:
    """95% BCa bootstrap interval of the mean delta, None when n < 2; see the module docstring.

    The bias-corrected and accelerated (BCa) interval of Efron & Tibshirani (1993, 14.3), with the
    formulas of `scipy.stats.bootstrap(method="BCa")`: z0 from the share of resample means below
    the observed mean (ties count half), the acceleration from the jackknife, the endpoints as
    linear-interpolated quantiles of the resample means. For the mean the jackknife is analytic
    (leave-one-out mean = (sum - x_i) / (n - 1)), so it costs O(n), not scipy's O(n^2). When BCa
    is undefined (every resample mean on one side of the observed mean) the percentile interval
    of the same resamples is returned.
    """
    pool = _thread_pool()
    try:
        return _bootstrap_ci(np.asarray(deltas, dtype=np.float64), n_resamples, seed, pool)
    finally:
        if pool is not None:
            pool.shutdown()


def _bootstrap_ci(
    d: np.ndarray, n_resamples: int, seed: int, pool: ThreadPoolExecutor | None
) -> tuple[float, float] | None:
    n = len(d)
    if n < 2:
        return None
    if bool(np.all(d == d[0])):
        value = float(d[0])
        return (value, value)
    from scipy.special import ndtr, ndtri

    means = _resample_means(d, n_resamples=n_resamples, seed=seed, pool=pool)
    theta = float(np.mean(d))
    below = np.count_nonzero(means < theta) + np.count_nonzero(means <= theta)
    z0 = float(ndtri(below / (2 * n_resamples)))
    jackknife = (float(d.sum()) - d) / (n - 1)
    u = (n - 1) * (jackknife.mean() - jackknife)
    acceleration = float((u**3).sum() / n**3 / (6 * ((u**2).sum() / n**2) ** 1.5))
    z_alpha = float(ndtri((1 - CONFIDENCE) / 2))
    levels = []
    for z in (z_alpha, -z_alpha):
        with np.errstate(all="ignore"):
            levels.append(float(ndtr(z0 + (z0 + z) / (1 - acceleration * (z0 + z)))))
    if not all(0.0 <= level <= 1.0 for level in levels):  # NaN when z0 is infinite
        levels = [(1 - CONFIDENCE) / 2, (1 + CONFIDENCE) / 2]
    low, high = np.quantile(means, levels).tolist()
    return (low, high)


def paired_t_test(a: np.ndarray, b: np.ndarray) -> tuple[float | None, float | None]:
    """(t, p) of `scipy.stats.ttest_rel(b, a)`, two-sided; (None, None) when n < 2 or every
    delta is equal (no variance: the test has no answer, where scipy gives NaN or infinity).

    Computed as scipy does, step for step, so the figures are the same to the last bit (a test
    holds them equal), but without importing `scipy.stats`, which costs 1-2 s of every
    comparison: t = mean(d) / sqrt(var(d, ddof=1) / n), p = 2 * stdtr(n - 1, -|t|), with
    `scipy.special.stdtr`, the Student t CDF that scipy's own test calls (the bootstrap loads
    `scipy.special` anyway).
    """
    deltas = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    n = len(deltas)
    if n < 2 or bool(np.all(deltas == deltas[0])):
        return None, None
    from scipy.special import stdtr

    mean = np.mean(deltas)
    variance = np.mean((deltas - mean) ** 2) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(variance / np.float64(n))
    if np.isnan(t):  # deltas so close that their spread underflows: no answer either
        return None, None
    p = 2 * stdtr(np.float64(n - 1), -np.abs(t))
    return float(t), float(p)


def check_comparable(a: RunResult, b: RunResult) -> None:
    """Refuse two runs scored under different settings or against different pools."""
    differences = a.settings.differences(b.settings)
    if differences:
        raise EvaluationError(
            gettext_noop(
                "cannot compare %(a)r with %(b)r: they were scored under different settings: %(differences)s"
            ),
            {"a": a.name, "b": b.name, "differences": ", ".join(differences)},
        )
    if a.pool is not b.pool and a.pool.fingerprint != b.pool.fingerprint:
        raise EvaluationError(
            gettext_noop(
                "cannot compare %(a)r with %(b)r: they were scored against different judgment pools "
                "(%(pool_a)s vs %(pool_b)s)"
            ),
            {"a": a.name, "b": b.name, "pool_a": a.pool.fingerprint[:12], "pool_b": b.pool.fingerprint[:12]},
        )


@dataclass(frozen=True, eq=False)
class PairedStatistics:
    """B against A on one per-query metric: `delta` aligned with the queries (NaN where a query
    is not paired), then the statistics of the paired queries (see `Comparison`)."""

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

    def to_stats(self, a: str, b: str, metric: str) -> ComparisonStats:
        """These statistics in the results shape; `a` and `b` label the systems."""
        return ComparisonStats(
            a=a,
            b=b,
            metric=metric,
            delta=tuple(None if math.isnan(v) else v for v in self.delta.tolist()),
            **{name: getattr(self, name) for name in _STATISTICS},
        )


_STATISTICS = tuple(name for name in PairedStatistics.__dataclass_fields__ if name != "delta")


def paired_statistics(
    query_ids: Sequence[str],
    a_values: np.ndarray,
    b_values: np.ndarray,
    paired_mask: np.ndarray,
    *,
    seed: int,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> PairedStatistics:
    """Deltas b - a of the queries in `paired_mask` (both systems scored them) and their paired
    statistics; any metric's per-query values, aligned with `query_ids`."""
    delta = np.where(paired_mask, b_values - a_values, np.nan)
    delta.flags.writeable = False
    # The resampling statistics draw queries by position, so they take the paired queries in one
    # canonical order, sorted by ID: the same pool gives the same p and interval whatever the
    # order of its file, and the command line and the app agree.
    paired_ids = np.flatnonzero(paired_mask).tolist()
    order = sorted(paired_ids, key=query_ids.__getitem__)
    deltas = delta[order] if paired_ids else delta[paired_mask]
    n = len(deltas)
    pool = _thread_pool()
    try:
        # The randomization test runs in a worker while the bootstrap's chunks fill the others.
        if pool is not None:
            flip_future = pool.submit(sign_flip_test, deltas, n_permutations=n_permutations, seed=seed)
        ci = _bootstrap_ci(deltas, n_resamples, seed, pool)
        if pool is not None:
            flip = flip_future.result()
        else:
            flip = sign_flip_test(deltas, n_permutations=n_permutations, seed=seed)
    finally:
        if pool is not None:
            pool.shutdown()
    # The same order for the t-test: its sums, too, change in the last digit with the order.
    t_statistic, t_p = paired_t_test(a_values[order], b_values[order])
    return PairedStatistics(
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
        delta_ci95=ci,
        n_resamples=n_resamples,
        seed=seed,
    )


def compare_results(
    a: RunResult,
    b: RunResult,
    *,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> Comparison:
    """Compare two evaluated runs on NDCG; refuses runs scored on different pools or settings."""
    check_comparable(a, b)
    stats = paired_statistics(
        a.query_ids,
        a.ndcg,
        b.ndcg,
        ~a.excluded & ~b.excluded,
        seed=a.settings.seed,
        n_permutations=n_permutations,
        n_resamples=n_resamples,
    )
    return Comparison(
        settings=a.settings,
        a=a,
        b=b,
        query_ids=a.query_ids,
        **{name: getattr(stats, name) for name in ("delta", *_STATISTICS)},
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
