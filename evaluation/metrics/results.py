"""The one results shape: what a comparison stores, what its pages read and what the reports write.

`Results.from_engine(runs, comparisons)` takes the engine's `RunResult`s and `Comparison`s;
`to_dict()` writes the versioned, JSON-ready document and `from_dict()` reads it back, version 1
(the two-system NDCG document stored before several metrics and systems) included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Protocol

from evaluation.metrics.policies import Settings, validate_k

if TYPE_CHECKING:
    from evaluation.metrics.ordering import Ranked

RESULTS_VERSION = 2
READABLE_VERSIONS = (1, 2)
LABELS = "abcdefghijklmnopqrstuvwxyz"

# A system's metric-independent counts, then every count in the order version 1 stored them.
_RUN_COUNTS = ("queries", "missing_from_run", "unjudged_in_top_k", "extra_queries_skipped")
_COUNTS_ORDER = (
    "queries",
    "evaluated",
    "zero_idcg",
    "excluded",
    "missing_from_run",
    "unjudged_in_top_k",
    "extra_queries_skipped",
)


class ResultsVersionError(ValueError):
    """A stored results document of a version this code cannot read (or not a document at all)."""


@dataclass(frozen=True)
class MetricValues:
    """One metric of one system.

    `per_query`: named columns aligned with the query IDs (NDCG: dcg, idcg, ndcg, zero_idcg,
    excluded; a value is None where the query is excluded). `aggregates`: named figures over the
    queries, the first being the headline (NDCG: mean, the macro mean, then micro). `counts`: what
    the metric left out (NDCG: evaluated, zero_idcg, excluded). `definition`: what the numbers
    mean, for a metric asked for at its own K (`Metric.at`): its name, label, trec_eval measure
    and every setting; None for the registry's plain entries, whose settings the document holds
    (their stored documents predate it and keep their bytes).
    """

    per_query: Mapping[str, tuple[Any, ...]]
    aggregates: Mapping[str, float | None]
    counts: Mapping[str, int]
    definition: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        document = {
            "per_query": {name: list(column) for name, column in self.per_query.items()},
            "aggregates": dict(self.aggregates),
            "counts": dict(self.counts),
        }
        if self.definition is not None:
            document["definition"] = dict(self.definition)
        return document

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MetricValues:
        definition = data.get("definition")
        return cls(
            per_query={name: tuple(column) for name, column in data["per_query"].items()},
            aggregates=dict(data["aggregates"]),
            counts=dict(data["counts"]),
            definition=dict(definition) if definition is not None else None,
        )


@dataclass(frozen=True)
class Metric:
    """One entry of `METRICS`: a metric's name in the results shape, its label, its trec_eval
    measure name, its vectorised `batch` on a run ordered once (`ordering.Ranked`), how `values`
    reads that batch's output into the results shape, and the template of its breakdown.

    A registry entry scores at the settings' K; `at(k)` gives the same metric at its own cutoff
    (`k` set), named `name@k` ("recall@100"), which `evaluate_run(..., metrics=...)` computes.
    """

    name: str
    label: str
    measure: Callable[[Settings], str]
    batch: Callable[[Ranked], Any]
    values: Callable[[Any], MetricValues]
    partial: str
    k: int | None = None
    origin: Metric | None = field(default=None, repr=False, compare=False)  # the entry `at` cut

    def at(self, k: int) -> Metric:
        """This metric at cutoff `k`, whatever the settings' K; its values record their definition."""
        k = validate_k(k)
        base = self.base
        label = base.label.replace("@K", f"@{k}")

        def batch_at(ranked: Ranked) -> tuple[Settings, Any]:
            at_k = ranked.at(k)
            return at_k.settings, base.batch(at_k)

        def values_at(output: tuple[Settings, Any]) -> MetricValues:
            settings, scores = output
            definition = {
                "metric": f"{base.name}@{k}",
                "label": label,
                "measure": base.measure(settings),
                "settings": settings.full_dict(),
            }
            return replace(base.values(scores), definition=definition)

        return Metric(
            name=f"{base.name}@{k}",
            label=label,
            measure=lambda settings: base.measure(replace(settings, k=k)),
            batch=batch_at,
            values=values_at,
            partial=base.partial,
            k=k,
            origin=base,
        )

    @property
    def base(self) -> Metric:
        """The registry entry this one was made from (itself for a registry entry)."""
        return self.origin if self.origin is not None else self


@dataclass(frozen=True)
class SystemResult:
    """One system (run) of a results document: per-query columns aligned with the query IDs.

    `run_counts` are the metric-independent counts (queries, missing_from_run, unjudged_in_top_k,
    extra_queries_skipped); `metrics` maps a metric's name to its values, the headline first.
    `name` is None when the document did not record it (version 1: the run's name is on the model).
    """

    label: str
    name: str | None
    missing: tuple[bool, ...]
    unjudged: tuple[int, ...]
    retrieved: tuple[int, ...]
    run_counts: Mapping[str, int]
    extra_queries: tuple[str, ...]
    metrics: Mapping[str, MetricValues]

    @property
    def headline(self) -> MetricValues:
        return next(iter(self.metrics.values()))

    @property
    def mean(self) -> float | None:
        return self.headline.aggregates.get("mean")

    @property
    def micro(self) -> float | None:
        return self.headline.aggregates.get("micro")

    @property
    def counts(self) -> dict[str, int]:
        """The run's counts with the headline metric's, in the order every report lists them."""
        merged = {**self.run_counts, **self.headline.counts}
        return {key: merged[key] for key in _COUNTS_ORDER if key in merged} | merged

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "name": self.name,
            "missing": list(self.missing),
            "unjudged": list(self.unjudged),
            "retrieved": list(self.retrieved),
            "counts": dict(self.run_counts),
            "extra_queries": list(self.extra_queries),
            "metrics": {name: values.to_dict() for name, values in self.metrics.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SystemResult:
        return cls(
            label=data["label"],
            name=data["name"],
            missing=tuple(data["missing"]),
            unjudged=tuple(data["unjudged"]),
            retrieved=tuple(data["retrieved"]),
            run_counts=dict(data["counts"]),
            extra_queries=tuple(data["extra_queries"]),
            metrics={name: MetricValues.from_dict(values) for name, values in data["metrics"].items()},
        )


@dataclass(frozen=True)
class ComparisonStats:
    """System `b` against system `a` (labels) on one metric: deltas b - a per query (None where
    either is excluded) and the paired statistics of `evaluation.metrics.compare`."""

    a: str
    b: str
    metric: str
    delta: tuple[float | None, ...]
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
    # The randomization p adjusted over the comparison's family (`Design`); None outside one,
    # or when the test has no p. Not one of version 1's statistics.
    holm_p: float | None = None

    def _ranked(self, query_ids: Sequence[str], sign: int, n: int) -> list[tuple[str, float]]:
        pairs = zip(query_ids, self.delta, strict=True)
        chosen = [(q, v) for q, v in pairs if v is not None and v * sign > 0]
        # Largest change first; equal changes keep the pool's query order (as Comparison does).
        return sorted(chosen, key=lambda item: -item[1] * sign)[:n]

    def improvements(self, query_ids: Sequence[str], n: int = 5) -> list[tuple[str, float]]:
        """The n queries where b gained most over a, largest first."""
        return self._ranked(query_ids, 1, n)

    def regressions(self, query_ids: Sequence[str], n: int = 5) -> list[tuple[str, float]]:
        """The n queries where b lost most against a, largest loss first."""
        return self._ranked(query_ids, -1, n)

    def stats_dict(self) -> dict[str, Any]:
        """The statistics alone, keys in the order version 1 stored them."""
        values = {key: getattr(self, key) for key in _STATS}
        values["delta_ci95"] = list(self.delta_ci95) if self.delta_ci95 is not None else None
        return values

    def to_dict(self, *, corrected: bool = False) -> dict[str, Any]:
        """`corrected`: the document has a `Design`, so each entry records its `holm_p`."""
        keys = {"a": self.a, "b": self.b, "metric": self.metric, "delta": list(self.delta)}
        return keys | self.stats_dict() | ({"holm_p": self.holm_p} if corrected else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], **keys: Any) -> ComparisonStats:
        """From a version 2 entry, or from version 1's `comparison` section plus `keys` (a, b,
        metric, delta), which version 1 kept elsewhere."""
        values = {key: data[key] for key in ("a", "b", "metric", "delta") if key in data} | keys
        ci = data["delta_ci95"]
        return cls(
            a=values["a"],
            b=values["b"],
            metric=values["metric"],
            delta=tuple(values["delta"]),
            **{key: data[key] for key in _STATS if key != "delta_ci95"},
            delta_ci95=(ci[0], ci[1]) if ci is not None else None,
            holm_p=data.get("holm_p"),
        )


# The statistics: every field after the keys and the deltas, in the order version 1 stored them.
_STATS = tuple(field.name for field in fields(ComparisonStats))[4:-1]

PAIRINGS = ("all-pairs", "baseline")
FAMILIES = ("pairs-x-metrics", "pairs-per-metric")


@dataclass(frozen=True)
class Design:
    """How several systems were compared: `pairing` "all-pairs" (every pair, b - a in label
    order) or "baseline" (every other system against `baseline`: system - baseline), and the
    family over which each randomization p is Holm-Bonferroni adjusted (`holm_p`):
    "pairs-x-metrics" (one family of every pair on every metric) or "pairs-per-metric" (one
    family per metric). Recorded with the results: the adjusted p means nothing without it."""

    pairing: str
    baseline: str | None
    family: str
    correction: str = "holm"
    adjusted: str = "randomization_p"

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairing": self.pairing,
            "baseline": self.baseline,
            "family": self.family,
            "correction": self.correction,
            "adjusted": self.adjusted,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Design:
        return cls(**{key: data[key] for key in ("pairing", "baseline", "family", "correction", "adjusted")})


class EngineRun(Protocol):
    """What `Results.from_engine` reads of an evaluated run (`batch.RunResult`, which imports
    this module: the engine converts itself)."""

    @property
    def query_ids(self) -> tuple[str, ...]: ...

    @property
    def settings(self) -> Settings: ...

    def to_system(self, label: str, metrics: Sequence[Metric]) -> SystemResult: ...


class EngineComparison(Protocol):
    """What `Results.from_engine` reads of a comparison (`compare.Comparison`)."""

    @property
    def a(self) -> object: ...

    @property
    def b(self) -> object: ...

    def to_stats(self, a: str, b: str, metric: str) -> ComparisonStats: ...


@dataclass(frozen=True)
class Results:
    """Every system's per-query results on one query set, and the comparisons between them.

    An A/B comparison is the two-system case (labels "a" and "b", one comparison b - a).
    `settings` is None when the document did not record them (version 1: they are on the model).
    """

    query_ids: tuple[str, ...]
    settings: Settings | None
    systems: tuple[SystemResult, ...]
    comparisons: tuple[ComparisonStats, ...] = ()
    design: Design | None = None  # several systems compared (systems.compare_systems), else None

    def system(self, label: str) -> SystemResult:
        for system in self.systems:
            if system.label == label:
                return system
        raise KeyError(label)

    def comparison(self, a: str = "a", b: str = "b", metric: str | None = None) -> ComparisonStats | None:
        """b against a, on `metric` (by default the first metric they were compared on)."""
        return next(
            (c for c in self.comparisons if (c.a, c.b) == (a, b) and metric in (None, c.metric)), None
        )

    @classmethod
    def from_engine(
        cls,
        runs: Sequence[EngineRun],
        comparisons: Sequence[EngineComparison] = (),
        *,
        labels: Sequence[str] | None = None,
        metrics: Sequence[Metric] | None = None,
    ) -> Results:
        """The engine's results; each comparison's systems must be among `runs` (the same objects)."""
        if metrics is None:
            from evaluation.metrics import METRICS

            metrics = METRICS
        labels = list(labels) if labels is not None else list(LABELS[: len(runs)])
        label_of = {id(run): label for run, label in zip(runs, labels, strict=True)}
        headline = metrics[0].name
        return cls(
            query_ids=tuple(runs[0].query_ids),
            settings=runs[0].settings,
            systems=tuple(run.to_system(label, metrics) for run, label in zip(runs, labels, strict=True)),
            comparisons=tuple(
                c.to_stats(label_of[id(c.a)], label_of[id(c.b)], headline) for c in comparisons
            ),
        )

    def to_dict(self, version: int = RESULTS_VERSION) -> dict[str, Any]:
        """The JSON-ready document (full precision; NaN written as None). Version 1 only holds
        two systems a and b, NDCG and their comparison: what comparisons stored before version 2."""
        if version == 1:
            return self._to_v1()
        if version != RESULTS_VERSION:
            raise ResultsVersionError(
                f"results can be written as version 1 or {RESULTS_VERSION}, not {version!r}"
            )
        corrected = self.design is not None
        document = {
            "version": RESULTS_VERSION,
            "query_ids": list(self.query_ids),
            "settings": self.settings.as_dict() if self.settings is not None else None,
            "systems": [system.to_dict() for system in self.systems],
            "comparisons": [comparison.to_dict(corrected=corrected) for comparison in self.comparisons],
        }
        # Only several systems compared have a design: the two-system documents keep their bytes.
        if self.design is not None:
            document["design"] = self.design.to_dict()
        return document

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Results:
        """Read a stored document of any readable version; anything else is refused, clearly."""
        version = data.get("version") if isinstance(data, Mapping) else None
        if version == 1:
            return cls._from_v1(data)
        if version != RESULTS_VERSION:
            raise ResultsVersionError(
                f"stored results have version {version!r}; this code reads versions "
                f"{', '.join(map(str, READABLE_VERSIONS))}"
            )
        settings = data["settings"]
        return cls(
            query_ids=tuple(data["query_ids"]),
            settings=Settings.from_mapping(settings) if settings is not None else None,
            systems=tuple(SystemResult.from_dict(system) for system in data["systems"]),
            comparisons=tuple(ComparisonStats.from_dict(c) for c in data["comparisons"]),
            design=Design.from_dict(data["design"]) if data.get("design") is not None else None,
        )

    # ---- Version 1: two systems, NDCG, the pool's columns once, no names and no settings ----

    @classmethod
    def _from_v1(cls, data: Mapping[str, Any]) -> Results:
        pool_columns = {key: tuple(data[key]) for key in ("idcg", "zero_idcg", "excluded")}

        def system(label: str) -> SystemResult:
            stored = data[label]
            counts = stored["counts"]
            ndcg = MetricValues(
                per_query={
                    "dcg": tuple(stored["dcg"]),
                    "idcg": pool_columns["idcg"],
                    "ndcg": tuple(stored["ndcg"]),
                    "zero_idcg": pool_columns["zero_idcg"],
                    "excluded": pool_columns["excluded"],
                },
                aggregates={"mean": stored["mean"], "micro": stored["micro"]},
                counts={key: counts[key] for key in ("evaluated", "zero_idcg", "excluded")},
            )
            return SystemResult(
                label=label,
                name=None,
                missing=tuple(stored["missing"]),
                unjudged=tuple(stored["unjudged"]),
                retrieved=tuple(stored["retrieved"]),
                run_counts={key: counts[key] for key in _RUN_COUNTS},
                extra_queries=tuple(stored["extra_queries"]),
                metrics={"ndcg": ndcg},
            )

        return cls(
            query_ids=tuple(data["query_ids"]),
            settings=None,
            systems=(system("a"), system("b")),
            comparisons=(
                ComparisonStats.from_dict(
                    data["comparison"], a="a", b="b", metric="ndcg", delta=data["delta"]
                ),
            ),
        )

    def _to_v1(self) -> dict[str, Any]:
        comparison = self.comparison("a", "b")
        if len(self.systems) != 2 or comparison is None or comparison.metric != "ndcg":
            raise ResultsVersionError("version 1 holds two systems a and b compared on NDCG only")
        a, b = self.system("a"), self.system("b")
        pool = a.metrics["ndcg"].per_query

        def system(result: SystemResult) -> dict[str, Any]:
            ndcg = result.metrics["ndcg"]
            return {
                "dcg": list(ndcg.per_query["dcg"]),
                "ndcg": list(ndcg.per_query["ndcg"]),
                "missing": list(result.missing),
                "unjudged": list(result.unjudged),
                "retrieved": list(result.retrieved),
                "mean": ndcg.aggregates["mean"],
                "micro": ndcg.aggregates["micro"],
                "counts": {key: result.counts[key] for key in _COUNTS_ORDER},
                "extra_queries": list(result.extra_queries),
            }

        return {
            "version": 1,
            "query_ids": list(self.query_ids),
            # IDCG, zero-IDCG and exclusion depend on the pool only: the same for both systems.
            "idcg": list(pool["idcg"]),
            "zero_idcg": list(pool["zero_idcg"]),
            "excluded": list(pool["excluded"]),
            "a": system(a),
            "b": system(b),
            "delta": list(comparison.delta),
            "comparison": comparison.stats_dict(),
        }


__all__ = [
    "LABELS",
    "READABLE_VERSIONS",
    "RESULTS_VERSION",
    "FAMILIES",
    "PAIRINGS",
    "ComparisonStats",
    "Design",
    "EngineComparison",
    "EngineRun",
    "Metric",
    "MetricValues",
    "Results",
    "ResultsVersionError",
    "SystemResult",
]
