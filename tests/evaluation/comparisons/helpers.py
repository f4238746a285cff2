"""What the comparisons tests check against: the contract's expected figures and the stored results.

The pools, runs and comparisons themselves are made with tests/factories.py.
"""

from __future__ import annotations

from typing import Any

from evaluation.models import Comparison

# The contract's worked examples (../shared/evaluation-contract.md); E9's pool is factories.E9_POOL.
E9_DCG = 2.8927892607143724
E9_IDCG = 4.7618595071429155
E9_NDCG = 0.6074915180456525
E1_NDCG = 0.617319681505689


def stored_column(comparison: Comparison, label: str, column: str = "ndcg") -> list[Any]:
    """A per-query NDCG column of system `label` as stored (the results shape's current layout)."""
    system = next(s for s in comparison.results["systems"] if s["label"] == label)
    return system["metrics"]["ndcg"]["per_query"][column]


def stored_stats(comparison: Comparison) -> dict[str, Any]:
    """The stored comparison of B against A: per-query deltas and the paired statistics."""
    return next(c for c in comparison.results["comparisons"] if (c["a"], c["b"]) == ("a", "b"))
