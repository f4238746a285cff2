"""The database guards grades: a check constraint for 0..3 and one grade per pair and editor."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from annotator.grading.models import StaleReason
from annotator.grading.services import grade_submit
from annotator.models import Candidate, CriteriaVersion, Grade, GradeHistory
from tests.conftest import Cast
from tests.factories import make_pairs


def raw_grade(candidate: Candidate, editor: AbstractBaseUser, value: int) -> Grade:
    return Grade.objects.create(
        candidate=candidate,
        editor=editor,
        grade=value,
        criteria_version=CriteriaVersion.objects.current_for(candidate.grading_set.project),
        document_version=candidate.document.current_version,
    )


@pytest.mark.parametrize("value", [4, -1, 100])
def test_the_database_refuses_a_grade_outside_0_to_3(cast: Cast, value: int) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_grade(candidate, cast.editor, value)
    assert not Grade.objects.exists()


def test_the_database_refuses_a_second_grade_by_the_same_editor_for_a_pair(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    raw_grade(candidate, cast.editor, 2)
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_grade(candidate, cast.editor, 3)
    raw_grade(candidate, cast.editor2, 3)  # another editor may grade the same pair
    assert Grade.objects.filter(candidate=candidate).count() == 2


def test_grade_history_is_append_only_and_names_pair_and_editor(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    grade = grade_submit(candidate=candidate, editor=cast.editor, value=2)
    entry = GradeHistory.objects.get(grade=grade)
    assert (entry.candidate_id, entry.editor_id) == (candidate.pk, cast.editor.pk)
    entry.new_reason = "rewritten"
    with pytest.raises(ValueError, match="append-only"):
        entry.save()


def test_progress_counts_pairs_with_all_their_grades(cast: Cast) -> None:
    a, b, c = make_pairs(cast.alpha, "ABC", required=2)
    grade_submit(candidate=a, editor=cast.editor, value=3)
    grade_submit(candidate=a, editor=cast.editor2, value=3)
    grade_submit(candidate=b, editor=cast.editor, value=1)
    grading_set = a.grading_set
    assert (grading_set.progress().done, grading_set.progress().total) == (1, 3)
    assert (grading_set.progress_of(cast.editor).done, grading_set.progress_of(cast.editor2).done) == (2, 1)
    annotated = type(grading_set).objects.with_progress(cast.editor).get(pk=grading_set.pk)
    whole, mine = annotated.annotated_progress()
    assert (whole.done, whole.total, mine.done, mine.percent) == (1, 3, 2, 67)


def test_marking_stale_keeps_every_reason_once(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=candidate, editor=cast.editor, value=2)
    grades = Grade.objects.filter(candidate=candidate)
    assert grades.mark_stale(StaleReason.DOCUMENT) == 1
    assert grades.mark_stale(StaleReason.CRITERIA) == 1
    assert grades.mark_stale(StaleReason.DOCUMENT) == 0
    grade = grades.get()
    assert grade.stale and grade.stale_reason == "document,criteria"
    assert grade.stale_reasons() == [
        "The document changed since you graded it.",
        "The criteria changed meaningfully since you graded it.",
    ]
