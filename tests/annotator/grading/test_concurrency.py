"""Concurrent saves on PostgreSQL: real row locks, real threads, no grade lost or doubled."""

from __future__ import annotations

from annotator.grading.services import PairLocked, grade_submit
from annotator.grading.settlement import Settled, query_grades_settle
from annotator.models import Dispute, FinalGrade, Grade, GradeHistory, OpenQuery
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


def test_both_editors_leaving_a_query_at_once_settle_each_pair_once(cast: Cast) -> None:
    pairs = make_pairs(cast.alpha, [f"P{i}" for i in range(5)], required=2)
    for i, candidate in enumerate(pairs):
        grade_submit(candidate=candidate, editor=cast.editor, value=1, settle_now=False)
        grade_submit(candidate=candidate, editor=cast.editor2, value=1 + i % 2, settle_now=False)
    first = pairs[0]
    results = at_once(
        *[
            (
                lambda e=editor: query_grades_settle(
                    grading_set_id=first.grading_set_id, query_id=first.query_id, editor_id=e.pk
                )
            )
            for editor in (cast.editor, cast.editor2)
        ]
    )
    assert not [r for r in results if isinstance(r, Exception)], results
    # Together the two settles did each pair once: 3 agree, 2 disputes, none twice.
    assert sum(results, Settled()) == Settled(pairs=3, disputes=2)
    assert FinalGrade.objects.count() == 3 and Dispute.objects.count() == 2
    assert not OpenQuery.objects.exists()


def test_a_grade_changed_while_its_query_settles_is_either_settled_on_or_refused(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=candidate, editor=cast.editor, value=1)
    grade_submit(candidate=candidate, editor=cast.editor2, value=1, settle_now=False)
    results = at_once(
        lambda: query_grades_settle(
            grading_set_id=candidate.grading_set_id, query_id=candidate.query_id, editor_id=cast.editor2.pk
        ),
        lambda: grade_submit(candidate=candidate, editor=cast.editor, value=3, settle_now=False),
    )
    settled, saved = results
    assert not isinstance(settled, Exception), settled
    if isinstance(saved, Exception):  # the settle came first: the pair is final, the change refused
        assert isinstance(saved, PairLocked)
        assert FinalGrade.objects.get(candidate=candidate).grade == 1
    else:  # the change came first: the settle compared 3 with 1
        assert Dispute.objects.get(candidate=candidate).severity == 2
