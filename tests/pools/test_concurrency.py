"""Two people freezing at the same moment: one version, never two (real row locks: PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

from annotator.models import Pool, PoolVersion
from annotator.services.pools import FreezeError, pool_freeze, pool_version_create
from tests.conftest import Cast
from tests.pools import factories

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite serialises writers; the race needs row locks"),
]


def race(*calls: Callable[[], object]) -> list[object]:
    """Run the calls in threads released together; each result is a value or the exception raised."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(i: int, call: Callable[[], object]) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except Exception as exc:  # noqa: BLE001 -- the test inspects what each thread got
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_reviewers_freezing_one_set_at_once_make_one_version(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3), ("q1", "B"): (1, 1)})

    results = race(
        lambda: pool_freeze(grading_set=grading_set, by=cast.reviewer),
        lambda: pool_freeze(grading_set=grading_set, by=cast.owner),
    )

    assert PoolVersion.objects.count() == 1
    assert sorted(type(r).__name__ for r in results) == ["FreezeError", "PoolVersion"]
    refusal = next(r for r in results if isinstance(r, FreezeError))
    assert "already frozen as" in str(refusal)


def test_two_versions_written_to_one_pool_at_once_take_consecutive_numbers(cast: Cast) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Busy")

    results = race(
        lambda: pool_version_create(pool=pool, judgments=[("q", "a", 1, "")], source="imported", by=cast.owner),
        lambda: pool_version_create(pool=pool, judgments=[("q", "b", 2, "")], source="imported", by=cast.owner),
    )

    assert all(isinstance(r, PoolVersion) for r in results), results
    assert sorted(pool.versions.values_list("number", flat=True)) == [1, 2]
