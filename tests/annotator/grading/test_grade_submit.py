"""`grade_submit`: the one way a grade is saved."""

from __future__ import annotations

import pytest

from annotator.documents.models import CriteriaChange
from annotator.documents.services import criteria_publish
from annotator.grading.services import GradingError, PairLocked, grade_submit
from annotator.models import CriteriaVersion, Dispute, FinalGrade, Grade, GradeHistory, Reservation
from tests.conftest import Cast, make_user
from tests.factories import make_pairs


def test_a_grade_records_the_document_version_and_current_criteria_and_history(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    criteria_publish(
        project=cast.alpha,
        levels={3: "a", 2: "b", 1: "c", 0: "d"},
        change=CriteriaChange.WORDING,
        note="",
        by=cast.owner,
    )
    grade = grade_submit(
        candidate=candidate, editor=cast.editor, value=3, reason="  has all three conditions "
    )
    assert (grade.grade, grade.reason) == (3, "has all three conditions")
    assert grade.criteria_version == CriteriaVersion.objects.current_for(cast.alpha)
    assert grade.criteria_version.number == 2
    assert grade.document_version == candidate.document.current_version
    [entry] = GradeHistory.objects.filter(grade=grade)
    assert (entry.kind, entry.old_grade, entry.new_grade, entry.changed_by) == (
        "created",
        None,
        3,
        cast.editor,
    )


def test_a_double_submitted_grade_stores_one_grade_and_one_history_entry(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    first = grade_submit(candidate=candidate, editor=cast.editor, value=2, reason="no deadline")
    second = grade_submit(candidate=candidate, editor=cast.editor, value=2, reason="no deadline")
    assert first.pk == second.pk
    assert Grade.objects.count() == 1
    assert GradeHistory.objects.count() == 1


def test_changing_a_grade_updates_it_and_appends_history(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=candidate, editor=cast.editor, value=2, reason="first")
    grade = grade_submit(candidate=candidate, editor=cast.editor, value=1, reason="second")
    assert Grade.objects.get().grade == 1
    kinds = list(
        GradeHistory.objects.filter(grade=grade).values_list("kind", "old_grade", "new_grade", "old_reason")
    )
    assert kinds == [("created", None, 2, ""), ("changed", 2, 1, "first")]


@pytest.mark.parametrize("value", [4, -1, True, False, 1.5, "2", None])
def test_anything_but_an_integer_0_to_3_is_refused_with_a_clear_error(cast: Cast, value: object) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    with pytest.raises(GradingError, match="A grade is a whole number from 0 to 3"):
        grade_submit(candidate=candidate, editor=cast.editor, value=value)  # type: ignore[arg-type]
    assert not Grade.objects.exists()


def test_two_equal_grades_settle_the_pair_and_lock_it(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=candidate, editor=cast.editor, value=3)
    assert not FinalGrade.objects.exists()
    grade_submit(candidate=candidate, editor=cast.editor2, value=3)
    assert FinalGrade.objects.get(candidate=candidate).grade == 3
    with pytest.raises(PairLocked, match="settled"):
        grade_submit(candidate=candidate, editor=cast.editor, value=2)
    assert Grade.objects.get(candidate=candidate, editor=cast.editor).grade == 3


def test_two_different_grades_open_a_dispute_and_lock_the_pair(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "B", required=2)
    grade_submit(candidate=candidate, editor=cast.editor, value=2)
    grade_submit(candidate=candidate, editor=cast.editor2, value=3)
    assert Dispute.objects.get(candidate=candidate).severity == 1
    with pytest.raises(PairLocked, match="dispute"):
        grade_submit(candidate=candidate, editor=cast.editor, value=3)


def test_an_editor_who_never_graded_a_pair_is_not_told_whether_the_others_agreed(cast: Cast) -> None:
    """A third editor's save (a stale page, or a plain POST) is refused alike, not "settled" for one
    pair and "in dispute" for another, which would leak how the others graded to a blind editor."""
    agreed, split = make_pairs(cast.alpha, "AB", required=2)
    for candidate, (first, second) in ((agreed, (3, 3)), (split, (3, 0))):
        grade_submit(candidate=candidate, editor=cast.editor, value=first)
        grade_submit(candidate=candidate, editor=cast.editor2, value=second)
    messages = set()
    for candidate in (agreed, split):
        with pytest.raises(PairLocked) as refused:
            grade_submit(candidate=candidate, editor=cast.reviewer, value=1)
        messages.add(str(refused.value))
    assert messages == {"This pair already has all the grades it needs."}
    assert not Grade.objects.filter(editor=cast.reviewer).exists()


def test_grading_a_closed_set_or_as_an_outsider_is_refused(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    with pytest.raises(GradingError, match="Only members"):
        grade_submit(candidate=candidate, editor=cast.outsider, value=1)
    candidate.grading_set.is_open = False
    candidate.grading_set.save()
    with pytest.raises(GradingError, match="closed"):
        grade_submit(candidate=candidate, editor=cast.editor, value=1)
    assert not Grade.objects.exists()


def test_a_document_changed_since_it_was_read_is_not_graded_blindly(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    candidate.document.upsert(project=cast.alpha, external_id="A", title="New", body="Rewritten body")
    with pytest.raises(GradingError, match="you saw version 1, it is now version 2"):
        grade_submit(candidate=candidate, editor=cast.editor, value=1, document_version=1)
    grade = grade_submit(candidate=candidate, editor=cast.editor, value=1, document_version=2)
    assert grade.document_version.version == 2


def test_regrading_a_stale_grade_clears_the_flag_and_is_logged_as_a_recheck(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=candidate, editor=cast.editor, value=2)
    Grade.objects.update(stale=True, stale_reason="document")
    grade = grade_submit(candidate=candidate, editor=cast.editor, value=2)
    assert grade.stale is False
    assert list(GradeHistory.objects.values_list("kind", flat=True)) == ["created", "rechecked"]


def test_a_pair_waits_for_a_stale_grade_to_be_rechecked_before_it_settles_or_disputes(cast: Cast) -> None:
    """A grade given on the old text (or criteria) compared with one on the new would open disputes
    between grades of different things, and settle equal ones."""
    (candidate, other) = make_pairs(cast.alpha, "AB", required=2)
    grade_submit(candidate=candidate, editor=cast.editor2, value=1)
    grade_submit(candidate=other, editor=cast.editor2, value=2)
    Grade.objects.update(stale=True, stale_reason="document")  # the documents were re-imported
    grade_submit(candidate=candidate, editor=cast.editor, value=3)
    grade_submit(candidate=other, editor=cast.editor, value=2)
    assert not Dispute.objects.exists() and not FinalGrade.objects.exists()
    # The re-checks settle each pair on grades of the same text.
    grade_submit(candidate=candidate, editor=cast.editor2, value=3)
    grade_submit(candidate=other, editor=cast.editor2, value=0)
    assert FinalGrade.objects.get(candidate=candidate).grade == 3
    assert Dispute.objects.get(candidate=other).severity == 2


def test_a_pair_with_all_its_grades_refuses_a_further_editor_while_one_awaits_its_recheck(cast: Cast) -> None:
    """As the page says "already has all the grades it needs", a POST is refused too: the re-check
    would open a three-editor dispute with the reviewer as a disputant."""
    (candidate,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=candidate, editor=cast.editor2, value=1)
    Grade.objects.update(stale=True, stale_reason="document")
    grade_submit(candidate=candidate, editor=cast.editor, value=3)
    with pytest.raises(PairLocked, match="all the grades it needs"):
        grade_submit(candidate=candidate, editor=cast.reviewer, value=2)
    assert Grade.objects.filter(candidate=candidate).count() == 2
    grade_submit(candidate=candidate, editor=cast.editor2, value=1)  # the re-check
    assert Dispute.objects.get(candidate=candidate).statements.count() == 2


def test_saving_a_grade_releases_the_editors_reservation(cast: Cast) -> None:
    from datetime import timedelta

    from django.utils import timezone

    (candidate,) = make_pairs(cast.alpha, "A")
    Reservation.objects.create(
        candidate=candidate, editor=cast.editor, expires_at=timezone.now() + timedelta(minutes=5)
    )
    grade_submit(candidate=candidate, editor=cast.editor, value=0)
    assert not Reservation.objects.exists()


def test_a_reviewer_or_owner_may_grade_too_since_their_roles_include_editing(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A", required=3)
    for user in (cast.reviewer, cast.owner, make_user("newcomer")):
        if user.username == "newcomer":
            with pytest.raises(GradingError):
                grade_submit(candidate=candidate, editor=user, value=1)
        else:
            grade_submit(candidate=candidate, editor=user, value=1)
    assert Grade.objects.count() == 2


def test_editing_only_the_reason_is_logged_as_a_reason_edit_not_as_a_change_of_grade(cast: Cast) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=candidate, editor=cast.editor, value=2)
    grade_submit(candidate=candidate, editor=cast.editor, value=2, reason="no deadline")
    grade_submit(candidate=candidate, editor=cast.editor, value=3, reason="no deadline")
    history = list(
        GradeHistory.objects.values_list("kind", "old_grade", "new_grade", "old_reason", "new_reason")
    )
    assert history == [
        ("created", None, 2, "", ""),
        ("reason_edited", 2, 2, "", "no deadline"),
        ("changed", 2, 3, "no deadline", "no deadline"),
    ]


@pytest.mark.parametrize("version", [99, 2, 0, -1, 10**30])
def test_a_document_version_that_does_not_exist_is_refused_not_taken_for_a_changed_document(
    cast: Cast, version: int
) -> None:
    (candidate,) = make_pairs(cast.alpha, "A")
    with pytest.raises(GradingError, match=f"Version {version} of this document does not exist"):
        grade_submit(candidate=candidate, editor=cast.editor, value=1, document_version=version)
    assert not Grade.objects.exists() and not GradeHistory.objects.exists()
