"""Every metric the engine knows, and the names that ask for one at a cutoff ("recall@100").

`ALL_METRICS` is the registry, NDCG first. `METRICS` (in the package) is the part a plain
`evaluate_run` computes and a comparison stores: NDCG, the headline. Any metric at any K is
asked for by name: `evaluate_run(pool, run, settings, metrics=("ndcg@10", "recall@100"))`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evaluation.metrics import binary, ndcg
from evaluation.metrics.policies import EvaluationError, gettext_noop
from evaluation.metrics.results import Metric

ALL_METRICS: tuple[Metric, ...] = (
    ndcg.METRIC,
    binary.RECALL,
    binary.PRECISION,
    binary.RECIPROCAL_RANK,
    binary.AVERAGE_PRECISION,
    binary.JUDGED,
)
_BY_NAME = {metric.name: metric for metric in ALL_METRICS}
# name@K with K in ASCII digits: "@+5", "@1.5", "@1e3" and full-width digits are refused.
_SPEC = re.compile(r"([A-Za-z]+)@([0-9]+)")


def _names() -> str:
    return ", ".join(f"{name}@K" for name in _BY_NAME)


def metric_named(name: str) -> Metric:
    """The registry entry called `name` ("recall"); an EvaluationError for any other name."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise EvaluationError(
            gettext_noop("unknown metric %(name)r; the metrics are %(names)s"),
            {"name": name, "names": _names()},
        ) from None


def metric_at(spec: object) -> Metric:
    """The metric a name such as "ndcg@10" or "recall@100" asks for (the name in any case)."""
    if not isinstance(spec, str):
        raise EvaluationError(
            gettext_noop("a metric is named as a string such as 'ndcg@10', got %(type)s"),
            {"type": type(spec).__name__},
        )
    match = _SPEC.fullmatch(spec.strip())
    if match is None:
        raise EvaluationError(
            gettext_noop(
                "metric %(spec)r: write a metric and its cutoff K, a positive integer, as name@K "
                "(e.g. ndcg@10); the metrics are %(names)s"
            ),
            {"spec": spec, "names": _names()},
        )
    name, k = match.group(1).lower(), int(match.group(2))
    if name not in _BY_NAME:
        raise EvaluationError(
            gettext_noop("metric %(spec)r: unknown metric %(name)r; the metrics are %(names)s"),
            {"spec": spec, "name": name, "names": _names()},
        )
    if k < 1:
        raise EvaluationError(
            gettext_noop("metric %(spec)r: the cutoff K must be a positive integer, got %(k)s"),
            {"spec": spec, "k": k},
        )
    return _BY_NAME[name].at(k)


def parse_metrics(specs: Iterable[str | Metric]) -> tuple[Metric, ...]:
    """The metrics asked for, in order: names ("p@10") or `Metric.at` results. Refuses none at
    all, a bare string (it would be read letter by letter) and any metric asked for twice."""
    if isinstance(specs, str):
        raise EvaluationError(
            gettext_noop(
                "metrics are a list of names such as ['ndcg@10', 'recall@100'], got the string %(spec)r"
            ),
            {"spec": specs},
        )
    chosen = tuple(
        spec if isinstance(spec, Metric) and spec.k is not None else metric_at(spec) for spec in specs
    )
    if not chosen:
        raise EvaluationError(
            gettext_noop("no metric asked for; the metrics are %(names)s"), {"names": _names()}
        )
    seen: set[str] = set()
    for metric in chosen:
        if metric.name in seen:
            raise EvaluationError(gettext_noop("metric %(name)r is asked for twice"), {"name": metric.name})
        seen.add(metric.name)
    return chosen
