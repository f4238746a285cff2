"""Sample URL kwargs for the pools views (see tests/samples.py)."""

from typing import Any

from annotator.models import GradingSet, Membership, Pool, PoolVersionSource, Project, Role
from annotator.pools.services import pool_version_create


def sample_kwargs(project: Project) -> dict[str, Any]:
    owner = Membership.objects.filter(project=project, role=Role.OWNER).select_related("user").first()
    assert owner is not None, f"sample project {project} needs an owner"
    pool, created = Pool.objects.get_or_create(project=project, name="Sample pool")
    if created:
        pool_version_create(
            pool=pool,
            judgments=[("q1", "A", 3, "unanimous"), ("q1", "B", 1, "unanimous")],
            source=PoolVersionSource.FROZEN,
            by=owner.user,
        )
        pool_version_create(
            pool=pool,
            judgments=[
                ("q1", "A", 3, "unanimous"),
                ("q1", "B", 2, "adjudicated"),
                ("q2", "C", 0, "unanimous"),
            ],
            source=PoolVersionSource.FROZEN,
            by=owner.user,
        )
    v1, v2 = pool.versions.order_by("number")[:2]
    samples: dict[str, Any] = {"pool_id": pool.pk, "version_id": v2.pk, "other_id": v1.pk}
    # `set_id` is the grading area's kwarg too: their sample (made earlier) wins, since any grading
    # set of the project suits the freeze page. Only a project without one gets a set from here.
    if not GradingSet.objects.filter(project=project).exists():
        samples["set_id"] = GradingSet.objects.create(project=project, name="Sample set (pools)").pk
    return samples
