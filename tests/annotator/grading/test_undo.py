"""Undo (`u` on the grading page): the editor's own last action on the page, recorded as UNDONE."""

from __future__ import annotations

import pytest

from annotator.grading.services import GradingError, PairLocked, UndoResult, grade_submit, grade_undo
from annotator.models import Candidate, Document, Grade, GradeHistory
from tests.conftest import Cast
from tests.factories import make_pairs


def undo(cast: Cast, candidate: Candidate) -> UndoResult:
    return grade_undo(editor=cast.editor, grading_set=candidate.grading_set, query=candidate.query)


def test_undoing_a_first_grade_removes_it_but_keeps_its_history(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2, reason="r")
    result = undo(cast, a)
    assert result.grade is None and result.candidate == a
    assert not Grade.objects.exists()
    history = list(
        GradeHistory.objects.filter(candidate=a).values_list("kind", "old_grade", "new_grade", "editor")
    )
    assert history == [("created", None, 2, cast.editor.pk), ("undone", 2, None, cast.editor.pk)]


def test_undo_steps_back_through_changes_like_a_stack(cast: Cast) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="one")
    grade_submit(candidate=b, editor=cast.editor, value=3)
    grade_submit(candidate=a, editor=cast.editor, value=2, reason="two")
    assert undo(cast, a).grade.grade == 1  # a: 2 -> back to 1
    assert Grade.objects.get(candidate=a).reason == "one"
    assert undo(cast, a).candidate == b  # then b's first grade goes
    assert not Grade.objects.filter(candidate=b).exists()
    assert undo(cast, a).grade is None  # then a's first grade
    with pytest.raises(GradingError, match="nothing of yours to undo"):
        undo(cast, a)


def test_undo_only_touches_the_editors_own_grades(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=3)
    grade_submit(candidate=a, editor=cast.editor2, value=3)
    with pytest.raises(GradingError, match="nothing of yours to undo"):
        undo(cast, a)
    assert Grade.objects.get().editor == cast.editor2


def test_undo_is_refused_once_the_pair_is_settled(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=a, editor=cast.editor, value=3)
    grade_submit(candidate=a, editor=cast.editor2, value=3)
    with pytest.raises(PairLocked):
        undo(cast, a)
    assert Grade.objects.filter(candidate=a).count() == 2


def test_undoing_a_recheck_makes_the_grade_stale_again(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    Grade.objects.update(stale=True, stale_reason="criteria")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    grade = undo(cast, a).grade
    assert (grade.grade, grade.stale) == (2, True)
    assert grade.stale_reason == "criteria"


def test_undoing_a_recheck_puts_the_grade_back_on_the_text_and_criteria_it_was_given_on(cast: Cast) -> None:
    """The re-check moved the grade to version 2 of the document; undoing it puts it back, or the
    re-check list would lose its "you graded v1; now v2"."""
    (a,) = make_pairs(cast.alpha, "A")
    first = grade_submit(candidate=a, editor=cast.editor, value=2)
    Document.upsert(project=cast.alpha, external_id="A", title="A", body="rewritten")
    Grade.objects.update(stale=True, stale_reason="document")
    rechecked = grade_submit(candidate=a, editor=cast.editor, value=1, document_version=2)
    assert rechecked.document_version.version == 2
    grade = undo(cast, a).grade
    assert grade is not None and (grade.grade, grade.stale) == (2, True)
    assert (grade.document_version_id, grade.criteria_version_id) == (
        first.document_version_id,
        first.criteria_version_id,
    )
    assert grade.document_version.version == 1


def test_undoing_a_reason_edit_brings_the_old_reason_back_and_keeps_the_grade(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2, reason="first reading")
    grade_submit(candidate=a, editor=cast.editor, value=2, reason="second reading")
    grade = undo(cast, a).grade
    assert (grade.grade, grade.reason) == (2, "first reading")
    assert undo(cast, a).grade is None  # the next undo takes back the grade itself
