"""Two people freezing at the same moment: one version, never two (real row locks: PostgreSQL)."""

from __future__ import annotations

import pytest

from annotator.models import Pool, PoolVersion
from annotator.pools.files import pool_import
from annotator.pools.freeze import pool_freeze
from annotator.pools.services import FreezeError, PoolImportError, pool_version_create
from tests import factories
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast

pytestmark = postgres_only


def test_two_reviewers_freezing_one_set_at_once_make_one_version(cast: Cast) -> None:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3), ("q1", "B"): (1, 1)}
    )

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
        lambda: pool_version_create(
            pool=pool, judgments=[("q", "a", 1, "")], source="imported", by=cast.owner
        ),
        lambda: pool_version_create(
            pool=pool, judgments=[("q", "b", 2, "")], source="imported", by=cast.owner
        ),
    )

    assert all(isinstance(r, PoolVersion) for r in results), results
    assert sorted(pool.versions.values_list("number", flat=True)) == [1, 2]


def test_a_pair_added_while_the_set_freezes_never_lands_in_the_closed_set(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The closed-set check did not lock the set: an import checked, a freeze closed the set, and
    the import then inserted an ungraded pair into it that no pool version holds (review)."""
    import time

    from annotator.grading.pooling import PooledPair
    from annotator.grading.services import candidates_add
    from annotator.models import Candidate

    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3)})
    factories.document(cast.alpha, "NEW")
    original = type(Candidate.objects).bulk_create

    def slow_bulk_create(manager: object, objs: object, *args: object, **kwargs: object) -> object:
        time.sleep(0.5)  # between the check and the insert: where the freeze got in
        return original(manager, objs, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(type(Candidate.objects), "bulk_create", slow_bulk_create)
    pair = PooledPair(query_id="q1", doc_id="NEW", line=1, source="run.trec")

    results = at_once(
        lambda: candidates_add(grading_set=grading_set, pairs=[pair], by=cast.owner),
        lambda: (time.sleep(0.1), pool_freeze(grading_set=grading_set, by=cast.reviewer))[1],
    )

    grading_set.refresh_from_db()
    added = Candidate.objects.filter(grading_set=grading_set, document__external_id="NEW").exists()
    # Either the import went first (the freeze then refuses the ungraded pair) or the freeze did
    # (the import is refused): never a closed set holding a pair its version does not.
    assert not (added and not grading_set.is_open), results
    assert added != (not grading_set.is_open), results


def test_one_file_imported_twice_at_once_makes_one_version(cast: Cast) -> None:
    """A double click on Import must not make two versions with one hash."""
    pool = Pool.objects.create(project=cast.alpha, name="Imported")
    data = b"q1 0 A 3\nq1 0 B 1\n"

    def send() -> PoolVersion:
        return pool_import(
            project=cast.alpha, by=cast.owner, data=data, file_name="j.qrels", fmt="qrels", pool=pool
        )

    results = at_once(send, send)

    assert sorted(type(r).__name__ for r in results) == ["PoolImportError", "PoolVersion"], results
    assert list(pool.versions.values_list("number", flat=True)) == [1]
    refusal = next(r for r in results if isinstance(r, PoolImportError))
    assert "exactly those of Imported version 1" in str(refusal)


def test_a_grade_saved_while_the_set_freezes_is_either_refused_or_frozen(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grade saved just after the freeze must not settle a pair the new version left out as
    ungraded: the save reads whether the set is open under its lock."""
    import threading
    import time

    from annotator.grading.services import GradingError, grade_submit
    from annotator.models import CriteriaVersion, FinalGrade

    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3), ("q1", "B"): (2, None)}
    )
    pair = grading_set.candidates.get(document__external_id="B")
    manager = type(CriteriaVersion.objects)
    original = manager.current_for
    grading = threading.local()

    def slow_current_for(self: object, project: object) -> object:
        if getattr(grading, "on", False):
            time.sleep(0.5)  # after the save read the set as open, before it writes: where the freeze got in
        return original(self, project)  # type: ignore[arg-type]

    monkeypatch.setattr(manager, "current_for", slow_current_for)

    def grade() -> object:
        grading.on = True
        return grade_submit(candidate=pair, editor=cast.editor2, value=2)

    results = at_once(
        grade,
        lambda: (
            time.sleep(0.1),
            pool_freeze(grading_set=grading_set, by=cast.reviewer, exclude_unsettled=True, reason="late"),
        )[1],
    )

    version = PoolVersion.objects.get()
    settled = FinalGrade.objects.filter(candidate=pair).exists()
    frozen = version.judgments.filter(query_id="q1", doc_id="B").exists()
    # Either the save went first (the freeze then froze its final grade) or the freeze did (the
    # save is refused: the set is closed): never a final grade the version left out.
    assert settled == frozen, results
    assert settled or isinstance(results[0], GradingError), results
