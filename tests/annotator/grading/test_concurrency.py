"""Concurrent saves on PostgreSQL: real row locks, real threads, no grade lost or doubled."""

from __future__ import annotations

from annotator.grading.services import grade_submit
from annotator.models import Dispute, FinalGrade, Grade, GradeHistory
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast
from tests.factories import make_pairs

pytestmark = postgres_only


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
            "ed": 2,
            "eve": 3,
        }
        # Exactly one settlement: the second save saw the first and opened the dispute.
        assert Dispute.objects.filter(candidate=candidate).count() == 1
        assert not FinalGrade.objects.filter(candidate=candidate).exists()


def test_a_grade_submitted_twice_at_once_is_stored_once(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A", required=2)
    results = at_once(
        *[
            (lambda: grade_submit(candidate=candidate, editor=cast.editor, value=1, reason="same"))
            for _ in range(4)
        ]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    assert Grade.objects.filter(candidate=candidate).count() == 1
    assert GradeHistory.objects.filter(candidate=candidate).count() == 1
