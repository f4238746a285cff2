"""The scoring contract (../shared/evaluation-contract.md) as a pure library: Python + numpy.

No Django here, ever (a test checks it in a fresh interpreter); scipy is imported lazily. Entry
points: `score_query`, `evaluate_run`, `compare_runs`, and `Results`, the one stored and reported
shape. `METRICS` lists the metrics, the headline first: a new metric is one module and one entry.
"""

from evaluation.metrics import ndcg
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
from evaluation.metrics.results import (
    RESULTS_VERSION,
    ComparisonStats,
    Metric,
    MetricValues,
    Results,
    ResultsVersionError,
    SystemResult,
)

METRICS: tuple[Metric, ...] = (ndcg.METRIC,)

__all__ = [
    "DEFAULT_SETTINGS",
    "EXTRA_QUERIES",
    "GAINS",
    "METRICS",
    "MISSING_QUERIES",
    "RESULTS_VERSION",
    "TIES",
    "UNJUDGED",
    "ZERO_IDCG",
    "Comparison",
    "ComparisonStats",
    "Counts",
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
    "bootstrap_ci",
    "compare_results",
    "compare_runs",
    "discount",
    "evaluate_run",
    "order_scored",
    "paired_t_test",
    "score_query",
    "sign_flip_test",
    "tail",
    "validate_grade",
    "validate_k",
]
