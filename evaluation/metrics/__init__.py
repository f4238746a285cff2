"""The scoring contract (../shared/evaluation-contract.md) as a pure library: Python + numpy.

No Django here, ever (a test checks it in a fresh interpreter); scipy (`scipy.special` only) is
imported lazily. Entry points: `score_query`, `evaluate_run`, `compare_runs`, `compare_systems`
(two or more runs, Holm-adjusted), and `Results`, the one stored and reported shape.
`ALL_METRICS` is the registry, NDCG first: a new metric is one module and one entry.
`METRICS` is what a plain `evaluate_run` computes and a comparison stores (NDCG, the headline);
`evaluate_run(..., metrics=("ndcg@10", "recall@100"))` adds any registered metric at its own K.
"""

from evaluation.metrics import binary, ndcg
from evaluation.metrics.batch import Counts, QueryScore, RunResult, evaluate_run
from evaluation.metrics.compare import (
    Comparison,
    SignFlipResult,
    bootstrap_ci,
    compare_results,
    compare_runs,
    paired_t_test,
    sign_flip_test,
)
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.ndcg import PositionRow, QueryResult, Tail, discount, score_query, tail
from evaluation.metrics.ordering import order_scored
from evaluation.metrics.policies import (
    DEFAULT_RELEVANT,
    DEFAULT_SETTINGS,
    EXTRA_QUERIES,
    GAINS,
    MISSING_QUERIES,
    TIES,
    UNJUDGED,
    ZERO_IDCG,
    EvaluationError,
    Listed,
    Settings,
    validate_grade,
    validate_k,
)
from evaluation.metrics.registry import ALL_METRICS, metric_at, metric_named, parse_metrics
from evaluation.metrics.results import (
    FAMILIES,
    PAIRINGS,
    RESULTS_VERSION,
    ComparisonStats,
    Design,
    Metric,
    MetricValues,
    Results,
    ResultsVersionError,
    SystemResult,
)
from evaluation.metrics.systems import compare_system_runs, compare_systems, holm

# The comparison pages include each entry's breakdown partial and store each entry's values:
# the binary metrics join them when those pages list them (they have no partial yet).
METRICS: tuple[Metric, ...] = (ndcg.METRIC,)

__all__ = [
    "ALL_METRICS",
    "DEFAULT_RELEVANT",
    "DEFAULT_SETTINGS",
    "EXTRA_QUERIES",
    "FAMILIES",
    "GAINS",
    "METRICS",
    "MISSING_QUERIES",
    "PAIRINGS",
    "RESULTS_VERSION",
    "TIES",
    "UNJUDGED",
    "ZERO_IDCG",
    "Comparison",
    "ComparisonStats",
    "Counts",
    "Design",
    "EvaluationError",
    "Listed",
    "Metric",
    "MetricValues",
    "Pool",
    "PositionRow",
    "QueryResult",
    "QueryScore",
    "Results",
    "ResultsVersionError",
    "Run",
    "RunResult",
    "Settings",
    "SignFlipResult",
    "SystemResult",
    "Tail",
    "binary",
    "bootstrap_ci",
    "compare_results",
    "compare_runs",
    "compare_system_runs",
    "compare_systems",
    "discount",
    "evaluate_run",
    "holm",
    "metric_at",
    "metric_named",
    "order_scored",
    "paired_t_test",
    "parse_metrics",
    "score_query",
    "sign_flip_test",
    "tail",
    "validate_grade",
    "validate_k",
]
