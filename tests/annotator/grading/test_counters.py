"""The grading counters that the database's triggers keep, against counts made from the rows."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Count

from annotator.grading import counters
from annotator.grading.services import grade_submit, grade_undo
from annotator.models import Candidate, Dispute, EditorProgress, FinalGrade, Grade, GradingSet
from tests.conftest import Cast
from tests.factories import make_pairs


def recounted(grading_set: GradingSet) -> dict[str, object]:
    """What the counters must say, counted from the rows with the ORM (no counter read)."""
    pairs = Candidate.objects.filter(grading_set=grading_set).annotate(n=Count("grades"))
    done = [
        p
        for p in pairs
        if p.n >= grading_set.required_grades
        or FinalGrade.objects.filter(candidate=p).exists()
        or Dispute.objects.filter(candidate=p).exists()
    ]
    per_editor = (
        Grade.objects.filter(candidate__grading_set=grading_set).values("editor").annotate(n=Count("pk"))
    )
    return {
        "pairs": {p.pk: p.n for p in pairs},
        "done": {p.pk for p in done},
        "set": (len(pairs), len(done)),
        "editors": {row["editor"]: row["n"] for row in per_editor},
    }


def stored(grading_set: GradingSet) -> dict[str, object]:
    grading_set.refresh_from_db()
    pairs = Candidate.objects.filter(grading_set=grading_set)
    progress = EditorProgress.objects.filter(grading_set=grading_set, graded__gt=0)
    return {
        "pairs": dict(pairs.values_list("pk", "grade_count")),
        "done": set(pairs.filter(done=True).values_list("pk", flat=True)),
        "set": (grading_set.pair_count, grading_set.done_count),
        "editors": dict(progress.values_list("editor", "graded")),
    }


def test_the_counters_follow_grades_undos_settlements_and_disputes(cast: Cast) -> None:
    a, b, c = make_pairs(cast.alpha, "ABC", required=2)
    grading_set = a.grading_set
    assert stored(grading_set) == recounted(grading_set) and grading_set.pair_count == 3

    grade_submit(candidate=a, editor=cast.editor, value=2, reason="")
    assert stored(grading_set)["set"] == (3, 0)
    grade_submit(candidate=a, editor=cast.editor2, value=2, reason="")  # agreed: settled
    grade_submit(candidate=b, editor=cast.editor, value=0, reason="")
    grade_submit(candidate=b, editor=cast.editor2, value=3, reason="")  # disagreed: a dispute
    grade_submit(candidate=c, editor=cast.editor, value=1, reason="")
    assert FinalGrade.objects.filter(candidate=a).exists() and Dispute.objects.filter(candidate=b).exists()
    assert stored(grading_set) == recounted(grading_set)
    assert stored(grading_set)["set"] == (3, 2)
    assert stored(grading_set)["editors"] == {cast.editor.pk: 3, cast.editor2.pk: 2}

    grade_undo(editor=cast.editor, grading_set=grading_set, query=c.query)  # c's first grade is gone
    assert stored(grading_set) == recounted(grading_set)
    assert stored(grading_set)["pairs"][c.pk] == 0
    assert stored(grading_set)["editors"] == {cast.editor.pk: 2, cast.editor2.pk: 2}


def test_a_stale_copy_of_a_set_or_pair_saved_later_keeps_the_counts(cast: Cast) -> None:
    (pair,) = make_pairs(cast.alpha, "A", required=1)
    grading_set = GradingSet.objects.get(pk=pair.grading_set_id)
    stale_pair = Candidate.objects.get(pk=pair.pk)
    grade_submit(candidate=pair, editor=cast.editor, value=3, reason="")
    grading_set.name = "Renamed"
    grading_set.save()
    stale_pair.source_detail = "edited"
    stale_pair.save()
    assert stored(grading_set) == recounted(grading_set)
    assert stored(grading_set)["set"] == (1, 1)
    assert GradingSet.objects.get(pk=grading_set.pk).name == "Renamed"


def test_pairs_added_and_removed_and_a_new_required_count_move_the_set(cast: Cast) -> None:
    a, b = make_pairs(cast.alpha, "AB", required=2)
    grading_set = a.grading_set
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="")
    # One grade is enough once the set asks for one: `a` is done, `b` is not.
    GradingSet.objects.filter(pk=grading_set.pk).update(required_grades=1)
    assert stored(grading_set)["set"] == (2, 1) == recounted(grading_set)["set"]
    GradingSet.objects.filter(pk=grading_set.pk).update(required_grades=2)
    assert stored(grading_set)["set"] == (2, 0)
    b.delete()
    (c,) = make_pairs(cast.alpha, "C", required=2)
    assert stored(grading_set) == recounted(grading_set)
    assert stored(grading_set)["set"] == (2, 0) and c.grading_set_id == grading_set.pk


def test_drift_names_a_count_that_disagrees_and_recount_repairs_it(cast: Cast) -> None:
    (pair,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=pair, editor=cast.editor, value=2, reason="")
    assert counters.drift(connection) == []
    Candidate.objects.filter(pk=pair.pk).update(grade_count=5)
    EditorProgress.objects.filter(editor=cast.editor).update(graded=9)
    found = counters.drift(connection)
    assert any(line.startswith(f"pair ({pair.pk}, 5, 1,") for line in found), found
    assert any(line.startswith("editor (") and ", 9, 1)" in line for line in found), found
    counters.recount(connection)
    assert counters.drift(connection) == []
    assert stored(pair.grading_set) == recounted(pair.grading_set)


def test_a_count_that_would_go_below_zero_refuses_the_change(cast: Cast) -> None:
    (pair,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=pair, editor=cast.editor, value=2, reason="")
    Candidate.objects.filter(pk=pair.pk).update(grade_count=0)  # drifted: the grade is not counted
    with pytest.raises(IntegrityError), transaction.atomic():
        Grade.objects.filter(candidate=pair).delete()
    counters.recount(connection)


def test_both_databases_keep_the_counters_on_the_same_tables_and_events() -> None:
    """Each database has its own trigger text, but both must fire on every change that moves a
    count: a table or event missing from one would let that database's counts drift. PostgreSQL's
    statement triggers over transition tables cannot name columns (UPDATE OF done), so an UPDATE
    there counts as the UPDATE OF on SQLite; their bodies compare old and new rows instead."""

    def fired_on(event: str) -> str:
        return event.split(" OF ")[0]

    sqlite = {
        name: (table, fired_on(event)) for name, (table, event, _c, _b) in counters._ROW_TRIGGERS.items()
    }
    postgres = {name: (table, fired_on(event)) for name, table, event, _t, _b in counters._STATEMENT_TRIGGERS}
    assert postgres == sqlite
    # The column-level triggers keep their column where PostgreSQL allows it (row triggers).
    columns = {event for _name, _table, event, _t, _b in counters._STATEMENT_TRIGGERS if " OF " in event}
    assert columns == {"UPDATE OF required_grades"}
