"""Two people freezing at the same moment: one version, never two (real row locks: PostgreSQL)."""

from __future__ import annotations

from annotator.models import Pool, PoolVersion
from annotator.services.pools import FreezeError, pool_freeze, pool_version_create
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast
from tests.pools import factories

pytestmark = postgres_only


def test_two_reviewers_freezing_one_set_at_once_make_one_version(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3), ("q1", "B"): (1, 1)})

    results = at_once(
        lambda: pool_freeze(grading_set=grading_set, by=cast.reviewer),
        lambda: pool_freeze(grading_set=grading_set, by=cast.owner),
    )

    assert PoolVersion.objects.count() == 1
    assert sorted(type(r).__name__ for r in results) == ["FreezeError", "PoolVersion"]
    refusal = next(r for r in results if isinstance(r, FreezeError))
    assert "already frozen as" in str(refusal)


def test_two_versions_written_to_one_pool_at_once_take_consecutive_numbers(cast: Cast) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Busy")

    results = at_once(
        lambda: pool_version_create(pool=pool, judgments=[("q", "a", 1, "")], source="imported", by=cast.owner),
        lambda: pool_version_create(pool=pool, judgments=[("q", "b", 2, "")], source="imported", by=cast.owner),
    )

    assert all(isinstance(r, PoolVersion) for r in results), results
    assert sorted(pool.versions.values_list("number", flat=True)) == [1, 2]
