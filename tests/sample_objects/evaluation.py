"""Sample URL kwargs for the evaluation (runs and comparisons) views (see tests/samples.py)."""

from typing import Any

from annotator.models import Membership, Pool, PoolVersionSource, Project, Role
from annotator.pools.services import pool_version_create
from evaluation import metrics
from evaluation.comparisons import comparison_create
from evaluation.models import Comparison, Run
from evaluation.runs import run_upload

# The contract's E1 example: pool A3 B2 C1 D0, run A = [B, C], run B = [A, B], K = 2.
SAMPLE_JUDGMENTS = [
    ("q1", "A", 3, "unanimous"),
    ("q1", "B", 2, "unanimous"),
    ("q1", "C", 1, "unanimous"),
    ("q1", "D", 0, "unanimous"),
]


def sample_kwargs(project: Project) -> dict[str, Any]:
    owner = Membership.objects.filter(project=project, role=Role.OWNER).select_related("user").first()
    assert owner is not None, f"sample project {project} needs an owner"
    comparison = Comparison.objects.filter(project=project, name="Sample comparison").first()
    if comparison is None:
        pool, created = Pool.objects.get_or_create(project=project, name="Sample pool (comparisons)")
        version = pool.versions.order_by("-number").first()
        if version is None:
            version = pool_version_create(
                pool=pool, judgments=SAMPLE_JUDGMENTS, source=PoolVersionSource.FROZEN, by=owner.user
            )
        runs = []
        for name, text in (("Sample run A", "q1: B, C\n"), ("Sample run B", "q1: A, B\n")):
            run = Run.objects.filter(project=project, name=name).first() or run_upload(
                project=project,
                name=name,
                notes="",
                fmt="lists",
                file_name="pasted.txt",
                data=text.encode(),
                by=owner.user,
            )
            runs.append(run)
        comparison = comparison_create(
            project=project,
            pool_version=version,
            run_a=runs[0],
            run_b=runs[1],
            settings=metrics.Settings(k=2),
            by=owner.user,
            name="Sample comparison",
        )
    return {"run_id": comparison.run_a_id, "comparison_id": comparison.pk}
