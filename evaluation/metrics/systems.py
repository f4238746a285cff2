"""Two or more systems compared on one pool, under one set of settings, on several metrics.

Each pair (every pair, or every system against a baseline) gets, on every metric, the paired
statistics of two systems (`compare.paired_statistics`: the same figures `compare_results` gives
a pair on NDCG) and its randomization p adjusted by Holm-Bonferroni over a declared family:
every pair on every metric ("pairs-x-metrics") or every pair on one metric ("pairs-per-metric").
Holm controls the family-wise error rate under any dependence between the tests, which the
pairs of one set of systems certainly have.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from evaluation.metrics.batch import RunResult, evaluate_run
from evaluation.metrics.compare import N_PERMUTATIONS, N_RESAMPLES, check_comparable, paired_statistics
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import DEFAULT_SETTINGS, EvaluationError, Settings, gettext_noop
from evaluation.metrics.results import (
    FAMILIES,
    LABELS,
    ComparisonStats,
    Design,
    Metric,
    Results,
)


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in the order given; None (a test without a p) stays
    None and is not counted in the family.

    With the m p-values sorted ascending, p_(i) (i from 0) becomes max over j <= i of
    min(1, (m - j) * p_(j)): the step-down of Holm (1979), computed as
    `statsmodels.stats.multitest.multipletests(method="holm")` computes it (a test holds the
    two equal). Equal p-values get the same adjusted value whatever their order.
    """
    present = [i for i, p in enumerate(pvalues) if p is not None]
    values = np.array([pvalues[i] for i in present], dtype=np.float64)
    order = np.argsort(values, kind="stable")
    m = len(values)
    steps = values[order] * np.arange(m, 0, -1)
    adjusted_sorted = np.minimum(np.maximum.accumulate(steps), 1.0) if m else steps
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    result: list[float | None] = [None] * len(pvalues)
    for i, value in zip(present, adjusted.tolist(), strict=True):
        result[i] = value
    return result


def pairs_of(labels: Sequence[str], baseline: str | None) -> list[tuple[str, str]]:
    """(a, b) of every comparison, deltas b - a: each pair in label order, or each other system
    against the baseline (system - baseline, a win being a query where it beats the baseline)."""
    if baseline is None:
        return [(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :]]
    return [(baseline, label) for label in labels if label != baseline]


def _check_design(labels: Sequence[str], baseline: str | None, family: str) -> None:
    if family not in FAMILIES:
        raise EvaluationError(
            gettext_noop("unknown family %(family)r for the correction; the families are %(families)s"),
            {"family": family, "families": ", ".join(FAMILIES)},
        )
    if len(labels) < 2:
        raise EvaluationError(
            gettext_noop("a comparison needs two or more runs, got %(count)s"), {"count": len(labels)}
        )
    if len(set(labels)) != len(labels):
        raise EvaluationError(
            gettext_noop("the runs' labels must differ, got %(labels)s"), {"labels": ", ".join(labels)}
        )
    if baseline is not None and baseline not in labels:
        raise EvaluationError(
            gettext_noop("baseline %(baseline)r is not one of the runs; the runs are %(labels)s"),
            {"baseline": baseline, "labels": ", ".join(labels)},
        )


def default_labels(count: int) -> list[str]:
    """a, b, c, ... for `count` runs, in their order; more runs than letters are refused."""
    if count > len(LABELS):
        raise EvaluationError(
            gettext_noop("at most %(most)s runs can be compared at once, got %(count)s"),
            {"most": len(LABELS), "count": count},
        )
    return list(LABELS[:count])


def _values(column: Sequence[float | None]) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in column], dtype=np.float64)


def compare_systems(
    runs: Sequence[RunResult],
    *,
    baseline: str | None = None,
    family: str = "pairs-x-metrics",
    labels: Sequence[str] | None = None,
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> Results:
    """Two or more evaluated runs compared in the results shape, its `design` recorded.

    The metrics are the ones the runs were evaluated with (`evaluate_run(..., metrics=...)`,
    the same for every run), else the plain registry's (NDCG at the settings' K). `labels`
    default to a, b, c, ... in the order of `runs`; `baseline` is one of them, or None for
    every pair. Runs scored under different settings or pools are refused.
    """
    from evaluation.metrics import METRICS  # the package imports this module

    labels = list(labels) if labels is not None else default_labels(len(runs))
    if len(labels) != len(runs):
        raise EvaluationError(
            gettext_noop("%(runs)s runs need as many labels, got %(labels)s"),
            {"runs": len(runs), "labels": len(labels)},
        )
    _check_design(labels, baseline, family)
    first = runs[0]
    for run in runs[1:]:
        check_comparable(first, run)
        if [m.name for m in run.metrics] != [m.name for m in first.metrics]:
            raise EvaluationError(
                gettext_noop("cannot compare %(a)r with %(b)r: they were scored on different metrics"),
                {"a": first.name, "b": run.name},
            )
    metrics: Sequence[Metric] = first.metrics or METRICS
    systems = tuple(run.to_system(label, metrics) for run, label in zip(runs, labels, strict=True))
    by_label = {system.label: system for system in systems}
    pairs = pairs_of(labels, baseline)
    stats: list[ComparisonStats] = []
    for metric in metrics:
        column = metric.base.name  # a metric's per-query value is its base name's column
        values = {label: _values(by_label[label].metrics[metric.name].per_query[column]) for label in labels}
        for a, b in pairs:
            paired = ~np.isnan(values[a]) & ~np.isnan(values[b])
            computed = paired_statistics(
                first.query_ids,
                values[a],
                values[b],
                paired,
                seed=first.settings.seed,
                n_permutations=n_permutations,
                n_resamples=n_resamples,
            )
            stats.append(computed.to_stats(a, b, metric.name))
    return Results(
        query_ids=tuple(first.query_ids),
        settings=first.settings,
        systems=systems,
        comparisons=_adjusted(stats, family),
        design=Design(pairing="baseline" if baseline else "all-pairs", baseline=baseline, family=family),
    )


def _adjusted(stats: Sequence[ComparisonStats], family: str) -> tuple[ComparisonStats, ...]:
    """Each comparison with its `holm_p` over its family."""
    groups: dict[str | None, list[int]] = {}
    for i, comparison in enumerate(stats):
        groups.setdefault(comparison.metric if family == "pairs-per-metric" else None, []).append(i)
    adjusted: list[float | None] = [None] * len(stats)
    for members in groups.values():
        for i, value in zip(members, holm([stats[i].randomization_p for i in members]), strict=True):
            adjusted[i] = value
    return tuple(replace(c, holm_p=p) for c, p in zip(stats, adjusted, strict=True))


def compare_system_runs(
    pool: Pool | Mapping[str, Mapping[str, int]],
    runs: Sequence[Run | Mapping[str, Sequence[str]]],
    settings: Settings = DEFAULT_SETTINGS,
    *,
    metrics: Sequence[str | Metric] | None = None,
    baseline: str | None = None,
    family: str = "pairs-x-metrics",
    n_permutations: int = N_PERMUTATIONS,
    n_resamples: int = N_RESAMPLES,
) -> Results:
    """Evaluate every run on the same pool, settings and metrics, then `compare_systems`."""
    pool = pool if isinstance(pool, Pool) else Pool(pool)
    labels = default_labels(len(runs))
    results = [
        evaluate_run(pool, run, settings, name=label, metrics=metrics)
        for run, label in zip(runs, labels, strict=True)
    ]
    return compare_systems(
        results, baseline=baseline, family=family, n_permutations=n_permutations, n_resamples=n_resamples
    )
