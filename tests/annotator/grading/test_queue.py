"""The editor's queue: `next` opens the query with the most pairs still waiting for this editor."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.utils import timezone

from annotator.grading.queue import queue_candidates, queue_next
from annotator.grading.services import grade_submit
from annotator.models import Reservation
from tests.conftest import Cast, make_user
from tests.factories import make_pairs


def test_next_opens_the_query_with_the_most_pairs_waiting_for_this_editor(cast: Cast) -> None:
    make_pairs(cast.alpha, "AB", query="q1")
    q2 = make_pairs(cast.alpha, "CDE", query="q2")
    grading_set, query = queue_next(project=cast.alpha, editor=cast.editor)
    assert (grading_set, query) == (q2[0].grading_set, q2[0].query)
    # Once this editor graded q2's pairs, q1 is next.
    for candidate in q2:
        grade_submit(candidate=candidate, editor=cast.editor, value=1)
    assert queue_next(project=cast.alpha, editor=cast.editor)[1].external_id == "q1"


def test_pairs_with_their_required_grades_are_no_longer_offered(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=2)
    third = make_user("third")
    cast.alpha.memberships.create(user=third, role="editor")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    grade_submit(candidate=a, editor=cast.editor2, value=1)
    assert queue_next(project=cast.alpha, editor=third) is None
    assert not queue_candidates(project=cast.alpha, editor=third).exists()


def test_a_reservation_stops_a_third_editor_from_taking_the_last_slot_until_it_expires(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=2)
    third = make_user("third")
    cast.alpha.memberships.create(user=third, role="editor")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    assert queue_next(project=cast.alpha, editor=cast.editor2) is not None  # reserves the last slot
    assert queue_next(project=cast.alpha, editor=third) is None
    Reservation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert queue_next(project=cast.alpha, editor=third) is not None


def test_closed_sets_and_other_projects_are_never_offered(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    make_pairs(cast.beta, "Z")
    a.grading_set.is_open = False
    a.grading_set.save()
    assert queue_next(project=cast.alpha, editor=cast.editor) is None


def test_next_can_be_limited_to_one_set(cast: Cast) -> None:
    make_pairs(cast.alpha, "ABC", set_name="Big")
    small = make_pairs(cast.alpha, "D", set_name="Small")
    grading_set, _ = queue_next(project=cast.alpha, editor=cast.editor, grading_set=small[0].grading_set)
    assert grading_set.name == "Small"


postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs real row locks (SKIP LOCKED); SQLite serialises writers"
)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_two_editors_pressing_next_at_once_never_both_take_the_last_slot(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=1)
    barrier = threading.Barrier(2)
    results: dict[str, object] = {}

    def press(editor: AbstractBaseUser) -> None:
        try:
            barrier.wait()
            results[editor.username] = queue_next(project=cast.alpha, editor=editor)
        finally:
            connection.close()

    threads = [threading.Thread(target=press, args=(e,)) for e in (cast.editor, cast.editor2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r is None for r in results.values()) == [False, True]
    assert Reservation.objects.filter(candidate=a).count() == 1


def test_the_queue_counts_without_joining_queries_and_documents(cast: Cast) -> None:
    """The pairs' default order (set, query, document) would join both tables into every count
    made from the queue, even where nothing is sorted: slow at hundreds of thousands of pairs."""
    from django.db.models import Count

    make_pairs(cast.alpha, "AB")
    queue = queue_candidates(project=cast.alpha, editor=cast.editor)
    for sql in (
        str(queue.values("grading_set").annotate(n=Count("pk")).query),
        str(queue.values("pk").query),
    ):
        assert '"annotator_query"' not in sql and '"annotator_document"' not in sql
    assert queue.count() == 2


def test_the_pools_page_counts_each_open_set_without_reading_frozen_texts(cast: Cast) -> None:
    """No DISTINCT count over a join of every pair, and not the whole canonical text of the version
    a set continues, just to show its number: both are slow at hundreds of thousands of pairs."""
    from django.test.utils import CaptureQueriesContext

    from annotator.pools.views import _unfrozen_sets

    a, b = make_pairs(cast.alpha, "AB")
    for candidate in (a, b):
        grade_submit(candidate=candidate, editor=cast.editor, value=2)
        grade_submit(candidate=candidate, editor=cast.editor2, value=2)  # unanimous: a final grade
    make_pairs(cast.alpha, "C", set_name="Other")
    with CaptureQueriesContext(connection) as captured:
        sets = _unfrozen_sets(cast.alpha)
    assert {(s.name, s.pairs, s.final) for s in sets} == {("Set", 2, 2), ("Other", 1, 0)}
    (sql,) = [q["sql"] for q in captured.captured_queries]
    assert "DISTINCT" not in sql and '"canonical"' not in sql
