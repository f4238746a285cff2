"""Demo data for runs and comparisons, the last demo step: the seeds' two comparisons (the
contract's E9/E10 and E1/E2) on the pool versions the pools step froze.

Idempotent: runs and comparisons are found by name; without those versions it logs why and skips.
"""

from __future__ import annotations

import logging

from annotator.demo import DemoContext
from annotator.models import PoolVersion
from evaluation import metrics
from evaluation.comparisons import comparison_create
from evaluation.models import Comparison, Run
from evaluation.runs import run_upload

log = logging.getLogger(__name__)

# (pool name, K, (run A name, pasted text), (run B name, pasted text), comparison name)
COMPARISONS = [
    (
        "Phone number change",
        3,
        ("甲", "q1: C, A, D, B, E\n"),
        ("乙", "q1: A, B, C, D, E\n"),
        "甲 vs 乙 · phone number change · K=3",
    ),
    (
        "Seed 000",
        2,
        ("Seed 000 · B, C", "q2: J-B, J-C\n"),
        ("Seed 000 · A, B", "q2: J-A, J-B\n"),
        "Seed 000 · [B, C] vs [A, B] · K=2",
    ),
]


def build(ctx: DemoContext) -> None:
    reviewer = ctx.users["reviewer"]
    for pool_name, k, spec_a, spec_b, name in COMPARISONS:
        if Comparison.objects.filter(project=ctx.project, name=name).exists():
            continue
        version = (
            PoolVersion.objects.filter(pool__project=ctx.project, pool__name=pool_name)
            .select_related("pool")
            .order_by("number")
            .first()
        )
        if version is None:
            log.warning("demo: pool %r has no frozen version yet; comparison %r skipped", pool_name, name)
            continue
        runs = []
        for run_name, text in (spec_a, spec_b):
            run = Run.objects.filter(project=ctx.project, name=run_name).first()
            if run is None:
                run = run_upload(
                    project=ctx.project,
                    name=run_name,
                    notes="The seeds' example ranking.",
                    fmt="lists",
                    file_name="pasted.txt",
                    data=text.encode("utf-8"),
                    by=reviewer,
                )
            runs.append(run)
        comparison_create(
            project=ctx.project,
            pool_version=version,
            run_a=runs[0],
            run_b=runs[1],
            settings=metrics.Settings(k=k),
            by=reviewer,
            name=name,
            notes="The seeds' worked example: every number can be checked by hand.",
        )
