"""Concurrent saves on PostgreSQL: real row locks, real threads, no grade lost or doubled."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection

from annotator.models import Dispute, FinalGrade, Grade, GradeHistory
from annotator.services.grading import grade_submit
from tests.conftest import Cast
from tests.grading.factories import make_pairs

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL row locks; SQLite serialises writers"),
    pytest.mark.django_db(transaction=True),
]


def at_once(*calls: Callable[[], object]) -> list[object]:
    """Run the calls in threads released together; return results (or raised exceptions)."""
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(i: int, call: Callable[[], object]) -> None:
        try:
            barrier.wait()
            results[i] = call()
        except Exception as error:  # reported to the test, which asserts there is none
            results[i] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_two_editors_grading_the_same_pair_at_once_both_keep_their_grades(cast: Cast) -> None:
    # Five pairs, five races: an unlucky interleaving is likely if the locking were wrong.
    pairs = make_pairs(cast.alpha, [f"P{i}" for i in range(5)], required=2)
    for candidate in pairs:
        results = at_once(
            lambda c=candidate: grade_submit(candidate=c, editor=cast.editor, value=2, reason="ed"),
            lambda c=candidate: grade_submit(candidate=c, editor=cast.editor2, value=3, reason="eve"),
        )
        assert not [r for r in results if isinstance(r, Exception)], results
        assert dict(Grade.objects.filter(candidate=candidate).values_list("editor__username", "grade")) == {
            "ed": 2, "eve": 3
        }
        # Exactly one settlement: the second save saw the first and opened the dispute.
        assert Dispute.objects.filter(candidate=candidate).count() == 1
        assert not FinalGrade.objects.filter(candidate=candidate).exists()


def test_a_grade_submitted_twice_at_once_is_stored_once(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A", required=2)
    results = at_once(*[
        (lambda: grade_submit(candidate=candidate, editor=cast.editor, value=1, reason="same")) for _ in range(4)
    ])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert Grade.objects.filter(candidate=candidate).count() == 1
    assert GradeHistory.objects.filter(candidate=candidate).count() == 1
