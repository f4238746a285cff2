"""The dispute workflow through its services: unanimity, reasons, the reveal, one revision, review."""

from __future__ import annotations

import pytest

from annotator.disputes.services import (
    AlreadySettled,
    DisputeError,
    dispute_give_reason,
    dispute_revise,
    dispute_settle,
    may_settle,
)
from annotator.models import (
    Dispute,
    DisputeStatus,
    FinalGrade,
    FinalSource,
    Grade,
    GradeHistory,
    Membership,
    Role,
)
from tests.conftest import Cast, make_user
from tests.factories import disputed_pair, grade, in_review, make_pair

REASON = "Explains how to request a change but not the deadline."


def test_equal_grades_make_a_unanimous_final_grade_and_no_dispute(cast: Cast) -> None:
    pair = make_pair(cast.alpha, document="A")
    grade(pair, cast.editor, 3)
    assert not FinalGrade.objects.filter(candidate=pair).exists()  # one grade of two: nothing yet
    grade(pair, cast.editor2, 3)
    final = FinalGrade.objects.get(candidate=pair)
    assert (final.grade, final.source, final.decided_by) == (3, FinalSource.UNANIMOUS, None)
    assert not Dispute.objects.filter(candidate=pair).exists()


@pytest.mark.parametrize(("grades", "severity"), [((2, 3), 1), ((3, 1), 2), ((0, 3), 3)])
def test_different_grades_open_a_dispute_with_severity_max_minus_min(
    cast: Cast, grades: tuple[int, int], severity: int
) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, grades)
    assert dispute.status == DisputeStatus.AWAITING_REASONS
    assert dispute.severity == severity
    assert sorted((s.editor_id, s.original_grade) for s in dispute.statements.all()) == sorted(
        [(cast.editor.pk, grades[0]), (cast.editor2.pk, grades[1])]
    )
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_the_real_grading_service_opens_the_dispute_too(cast: Cast) -> None:
    grading = pytest.importorskip("annotator.grading.services")
    pair = make_pair(cast.alpha)
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2, reason=REASON)
    grading.grade_submit(candidate=pair, editor=cast.editor2, value=3, reason="")
    assert Dispute.objects.get(candidate=pair).severity == 1


def test_reasons_are_required_and_the_reveal_waits_for_the_last_one(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    with pytest.raises(DisputeError, match="basis of your grade"):
        dispute_give_reason(dispute=dispute, editor=cast.editor, reason="   ")
    dispute = dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON, criteria_level=2)
    assert dispute.status == DisputeStatus.AWAITING_REASONS and dispute.revealed_at is None
    # Rewriting one's own reason before the reveal does not reveal anything either.
    dispute = dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON + " Checked twice.")
    assert dispute.status == DisputeStatus.AWAITING_REASONS
    dispute = dispute_give_reason(
        dispute=dispute, editor=cast.editor2, reason="Entry point and field are there."
    )
    assert dispute.status == DisputeStatus.REVEALED and dispute.revealed_at is not None
    mine = dispute.statements.get(editor=cast.editor)
    assert (mine.reason, mine.criteria_level) == (REASON + " Checked twice.", None)


def test_nobody_outside_the_dispute_can_give_a_reason_and_reasons_close_at_the_reveal(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    with pytest.raises(DisputeError, match="not one of the editors"):
        dispute_give_reason(dispute=dispute, editor=cast.reviewer, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    with pytest.raises(DisputeError, match="no longer change"):
        dispute_give_reason(dispute=dispute, editor=cast.editor, reason="Changed my mind")


def test_revision_waits_for_the_reveal(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    with pytest.raises(DisputeError, match="every editor has given a reason"):
        dispute_revise(dispute=dispute, editor=cast.editor, grade=3)


def test_a_revision_is_kept_beside_the_original_and_the_raw_grade_is_never_overwritten(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    dispute = dispute_revise(
        dispute=dispute, editor=cast.editor, grade=2, note="The steps are there after all."
    )
    statement = dispute.statements.get(editor=cast.editor)
    assert (statement.original_grade, statement.revised_grade) == (1, 2)
    assert statement.revision_note == "The steps are there after all."
    raw = Grade.objects.get(candidate=dispute.candidate, editor=cast.editor)
    assert raw.grade == 1
    revised = GradeHistory.objects.get(grade=raw, kind=GradeHistory.Kind.REVISED)
    assert (revised.old_grade, revised.new_grade, revised.changed_by) == (1, 2, cast.editor)
    assert dispute.status == DisputeStatus.REVEALED  # editor2 has not responded yet


def test_each_editor_revises_at_most_once(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    dispute_revise(dispute=dispute, editor=cast.editor, grade=1)
    with pytest.raises(DisputeError, match="at most once"):
        dispute_revise(dispute=dispute, editor=cast.editor, grade=2)


def test_agreement_after_the_reveal_settles_the_pair_by_discussion(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="The deadline is missing, agreed.")
    dispute = dispute_revise(dispute=dispute, editor=cast.editor2, grade=2, note="Missed the deadline part.")
    assert dispute.status == DisputeStatus.SETTLED and dispute.settled_at is not None
    final = FinalGrade.objects.get(candidate=dispute.candidate)
    assert (final.grade, final.source, final.decided_by) == (2, FinalSource.DISCUSSION, None)
    # The raw grades still disagree: that is what the agreement statistics are about.
    assert sorted(Grade.objects.filter(candidate=dispute.candidate).values_list("grade", flat=True)) == [2, 3]


def test_still_different_after_everyone_responded_goes_to_the_review_queue(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    dispute = dispute_revise(dispute=dispute, editor=cast.editor, grade=1)
    assert dispute.status == DisputeStatus.REVEALED
    dispute = dispute_revise(dispute=dispute, editor=cast.editor2, grade=3)  # keeps 3
    assert dispute.status == DisputeStatus.IN_REVIEW and dispute.escalated_at is not None
    assert dispute.statements.get(editor=cast.editor2).changed_grade is False
    assert list(Dispute.objects.in_project(cast.alpha).review_queue()) == [dispute]


def test_the_review_queue_orders_by_severity_then_age(cast: Cast) -> None:
    older_mild = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3), document="B")
    wide = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3), document="C")
    newer_mild = in_review(cast.alpha, cast.editor, cast.editor2, (1, 2), document="D")
    assert list(Dispute.objects.in_project(cast.alpha).review_queue()) == [wide, older_mild, newer_mild]
    assert not Dispute.objects.in_project(cast.beta).review_queue().exists()


def test_a_reviewer_adopts_an_editors_grade_without_a_note(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    final = dispute_settle(dispute=dispute, by=cast.reviewer, grade=2)
    assert (final.grade, final.source, final.decided_by, final.note) == (
        2,
        FinalSource.ADJUDICATED,
        cast.reviewer,
        "",
    )
    dispute.refresh_from_db()
    assert dispute.status == DisputeStatus.SETTLED


def test_a_grade_that_overrides_every_editor_needs_a_note(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3))
    with pytest.raises(DisputeError, match="override"):
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="  ")
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()
    final = dispute_settle(dispute=dispute, by=cast.owner, grade=2, note="Steps without the deadline: 2.")
    assert (final.grade, final.decided_by, final.note) == (2, cast.owner, "Steps without the deadline: 2.")


def test_a_revised_grade_counts_as_an_editors_grade_for_the_reviewer(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    dispute_revise(dispute=dispute, editor=cast.editor, grade=1)
    dispute_revise(dispute=dispute, editor=cast.editor2, grade=3)
    assert dispute_settle(dispute=dispute, by=cast.reviewer, grade=1).grade == 1


def test_a_reviewer_who_graded_the_pair_cannot_settle_it(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.reviewer, cast.editor, (2, 3))
    assert not may_settle(dispute=dispute, user=cast.reviewer)
    with pytest.raises(DisputeError, match="You graded this pair"):
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=2)
    assert may_settle(dispute=dispute, user=cast.owner)
    assert dispute_settle(dispute=dispute, by=cast.owner, grade=3).decided_by == cast.owner


def test_an_owner_who_graded_the_pair_cannot_settle_it_either(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.owner, cast.editor, (2, 3))
    with pytest.raises(DisputeError, match="You graded this pair"):
        dispute_settle(dispute=dispute, by=cast.owner, grade=2)


def test_editors_and_outsiders_cannot_settle(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    third = make_user("ivy")
    Membership.objects.create(project=cast.alpha, user=third, role=Role.EDITOR)
    for person in (third, cast.outsider):
        assert not may_settle(dispute=dispute, user=person)
        with pytest.raises(DisputeError, match="Only a reviewer or an owner"):
            dispute_settle(dispute=dispute, by=person, grade=2)


def test_a_dispute_cannot_be_settled_before_it_reaches_the_queue(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    with pytest.raises(DisputeError, match="not waiting for a reviewer"):
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=2)


def test_settling_twice_reports_who_settled_it_and_how(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="Deadline missing.")
    with pytest.raises(AlreadySettled) as caught:
        dispute_settle(dispute=dispute, by=cast.owner, grade=3)
    assert caught.value.final_grade.decided_by == cast.reviewer
    assert "rita" in caught.value.message and "grade 2" in caught.value.message
    assert FinalGrade.objects.filter(candidate=dispute.candidate).count() == 1


def test_a_grade_outside_0_to_3_is_refused_everywhere(cast: Cast) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    with pytest.raises(ValueError, match="0 to 3"):
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=4, note="x")
    with pytest.raises(ValueError, match="0 to 3"):
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=True, note="x")  # type: ignore[arg-type]


@pytest.mark.parametrize("settled_by", ["discussion", "reviewer"])
def test_a_decision_records_the_criteria_the_grades_were_given_under_not_newer_ones(
    cast: Cast, settled_by: str
) -> None:
    from annotator.documents.services import criteria_publish
    from annotator.models import CriteriaChange

    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3))
    graded_under = Grade.objects.filter(candidate=dispute.candidate).first().criteria_version  # type: ignore[union-attr]
    levels = {3: "All of it.", 2: "Most of it.", 1: "A little.", 0: "Nothing."}
    newer, _flagged = criteria_publish(
        project=cast.alpha, levels=levels, change=CriteriaChange.MEANING, note="Stricter.", by=cast.owner
    )
    assert newer.number > graded_under.number
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=REASON)
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=REASON)
    if settled_by == "discussion":
        dispute_revise(dispute=dispute, editor=cast.editor, grade=3)
    else:
        dispute_revise(dispute=dispute, editor=cast.editor, grade=1)
        dispute_revise(dispute=dispute, editor=cast.editor2, grade=3)
        dispute_settle(dispute=dispute, by=cast.reviewer, grade=3)
    final = FinalGrade.objects.get(candidate=dispute.candidate)
    assert final.criteria_version == graded_under
