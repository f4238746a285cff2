"""The scoring contract (../shared/evaluation-contract.md) as a pure library: Python + numpy.

No Django here, ever: a test imports this package in a fresh interpreter and checks that Django
was not loaded. scipy is imported lazily, only by the comparison statistics.

Entry points:

* `score_query(ranking, pool_grades, settings)` -> `QueryResult`: one query, every term written out.
* `evaluate_run(pool, run, settings)` -> `RunResult`: every query of a pool, vectorised.
* `compare_runs(pool, run_a, run_b, settings)` -> `Comparison`: B against A, with the statistics.
"""

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
from evaluation.metrics.ndcg import PositionRow, QueryResult, discount, order_scored, score_query
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

__all__ = [
    "DEFAULT_SETTINGS",
    "EXTRA_QUERIES",
    "GAINS",
    "MISSING_QUERIES",
    "TIES",
    "UNJUDGED",
    "ZERO_IDCG",
    "Comparison",
    "Counts",
    "EvaluationError",
    "Listed",
    "Pool",
    "PositionRow",
    "QueryResult",
    "QueryScore",
    "Run",
    "RunResult",
    "Settings",
    "SignFlipResult",
    "bootstrap_ci",
    "compare_results",
    "compare_runs",
    "discount",
    "evaluate_run",
    "order_scored",
    "paired_t_test",
    "score_query",
    "sign_flip_test",
    "validate_grade",
    "validate_k",
]
