"""Builders for the comparisons tests: pools, runs and comparisons of a project, in one call each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from annotator.models import Pool, PoolVersion, PoolVersionSource, Project
from annotator.pools.services import pool_version_create
from evaluation import metrics
from evaluation.comparisons import comparison_create
from evaluation.models import Comparison, Run
from evaluation.runs import run_upload

# The contract's worked examples (../shared/evaluation-contract.md).
E9_POOL = {"q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}}
E9_DCG = 2.8927892607143724
E9_IDCG = 4.7618595071429155
E9_NDCG = 0.6074915180456525
E1_NDCG = 0.617319681505689


def make_pool(
    project: Project, grades: dict[str, dict[str, int]], *, by: AbstractBaseUser, name: str = "Pool"
) -> PoolVersion:
    pool, _ = Pool.objects.get_or_create(project=project, name=name)
    rows = [(q, d, g, "unanimous") for q, docs in grades.items() for d, g in docs.items()]
    return pool_version_create(pool=pool, judgments=rows, source=PoolVersionSource.FROZEN, by=by)


def lists_text(rankings: dict[str, Iterable[str]]) -> str:
    return "".join(f"{q}: {', '.join(docs)}\n" for q, docs in rankings.items())


def make_run(
    project: Project,
    name: str,
    rankings: dict[str, Iterable[str]] | None = None,
    *,
    by: AbstractBaseUser,
    text: str | None = None,
    fmt: str = "lists",
    file_name: str = "pasted.txt",
) -> Run:
    data = text if text is not None else lists_text(rankings or {})
    return run_upload(
        project=project, name=name, notes="", fmt=fmt, file_name=file_name, data=data.encode(), by=by
    )


def make_comparison(
    project: Project, version: PoolVersion, run_a: Run, run_b: Run, *, by: AbstractBaseUser, **settings: Any
) -> Comparison:
    return comparison_create(
        project=project,
        pool_version=version,
        run_a=run_a,
        run_b=run_b,
        settings=metrics.Settings(**settings),
        by=by,
    )


def stored_column(comparison: Comparison, label: str, column: str = "ndcg") -> list[Any]:
    """A per-query NDCG column of system `label` as stored (the results shape's current layout)."""
    system = next(s for s in comparison.results["systems"] if s["label"] == label)
    return system["metrics"]["ndcg"]["per_query"][column]


def stored_stats(comparison: Comparison) -> dict[str, Any]:
    """The stored comparison of B against A: per-query deltas and the paired statistics."""
    return next(c for c in comparison.results["comparisons"] if (c["a"], c["b"]) == ("a", "b"))


def make_e9(project: Project, *, owner: AbstractBaseUser, reviewer: AbstractBaseUser) -> Comparison:
    """The contract's E9 / E10: run 甲 (C, A, D, B, E) against run 乙 (A, B, C, D, E), K = 3."""
    version = make_pool(project, E9_POOL, by=owner)
    a = make_run(project, "甲", {"q1": "CADBE"}, by=reviewer)
    b = make_run(project, "乙", {"q1": "ABCDE"}, by=reviewer)
    return make_comparison(project, version, a, b, by=reviewer, k=3)
