"""The timeline of a pair: every grade, reason, reveal, revision and decision, in time order."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotator.disputes.services import dispute_give_reason, dispute_revise, dispute_settle
from annotator.disputes.timeline import pair_timeline
from annotator.grading import services as grading
from annotator.models import Dispute, GradeHistory
from tests.conftest import Cast
from tests.factories import grade, make_pair


def whole_story(cast: Cast) -> Dispute:
    pair = make_pair(cast.alpha)
    grade(pair, cast.editor, 1, reason="Background only.")
    grade(pair, cast.editor2, 3, reason="")
    dispute = Dispute.objects.get(candidate=pair)
    dispute_give_reason(
        dispute=dispute, editor=cast.editor2, reason="Entry point and field are named.", criteria_level=3
    )
    dispute_give_reason(
        dispute=dispute, editor=cast.editor, reason="It never mentions the deadline.", criteria_level=1
    )
    dispute_revise(dispute=dispute, editor=cast.editor, grade=2, note="The steps are there.")
    dispute_revise(dispute=dispute, editor=cast.editor2, grade=3)
    dispute_settle(
        dispute=dispute, by=cast.reviewer, grade=2, note="Steps without the deadline: 2 by the criteria."
    )
    return dispute


def test_the_timeline_tells_the_whole_dispute_in_order(cast: Cast) -> None:
    dispute = whole_story(cast)
    membership = cast.reviewer.memberships.get(project=cast.alpha)
    timeline = pair_timeline(candidate=dispute.candidate, viewer=cast.reviewer, membership=membership)
    story = [(e.kind, e.actor.username if e.actor else None, e.grade) for e in timeline.events]
    assert story == [
        ("graded", "ed", 1),
        ("graded", "eve", 3),
        ("opened", None, None),
        ("reason", "eve", 3),
        ("reason", "ed", 1),
        ("revealed", None, None),
        ("revised", "ed", 2),
        ("kept", "eve", 3),
        ("in_review", None, None),
        ("decided", "rita", 2),
    ]
    times = [e.at for e in timeline.events]
    assert times == sorted(times)
    assert timeline.hidden == ""
    assert timeline.events[2].severity == 2


def test_the_timeline_page_shows_reasons_revision_and_the_reviewers_note(cast: Cast, client: Client) -> None:
    dispute = whole_story(cast)
    client.force_login(cast.editor)  # an editor of the pair: everything is revealed by now
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": dispute.candidate_id})
    ).content.decode()
    for text in (
        "ed graded 1.",
        "eve graded 3.",
        "dispute opened (severity 2)",
        "It never mentions the deadline.",
        "Rests on criteria level 1.",
        "revealed to the editors",
        "ed revised the grade from 1 to 2 after the reveal.",
        "The steps are there.",
        "eve kept the grade 3 after the reveal.",
        "sent to the review queue",
        "rita settled it: final grade 2.",
        "Steps without the deadline: 2 by the criteria.",
    ):
        assert text in html, text
    assert html.index("ed graded 1.") < html.index("revealed to the editors") < html.index("rita settled it")


def test_a_unanimous_pair_has_a_short_timeline(cast: Cast) -> None:
    pair = make_pair(cast.alpha, document="A")
    grade(pair, cast.editor, 3)
    grade(pair, cast.editor2, 3)
    membership = cast.editor.memberships.get(project=cast.alpha)
    timeline = pair_timeline(candidate=pair, viewer=cast.editor, membership=membership)
    assert [(e.kind, e.grade, e.source) for e in timeline.events] == [
        ("graded", 3, ""),
        ("graded", 3, ""),
        ("decided", 3, "unanimous"),
    ]


def test_a_pair_of_another_project_has_no_timeline_here(cast: Cast, client: Client) -> None:
    theirs = make_pair(cast.beta)
    client.force_login(cast.owner)
    response = client.get(reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": theirs.pk}))
    assert response.status_code == 404


def test_a_reason_added_edited_or_removed_on_the_grading_page_is_told_as_such_not_as_a_change_of_grade(
    cast: Cast, client: Client
) -> None:
    pair = make_pair(cast.alpha, document="A", required=3)
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2)
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2, reason="No deadline.")
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2, reason="No deadline, no field.")
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2, reason="")
    grading.grade_submit(candidate=pair, editor=cast.editor, value=1, reason="")
    membership = cast.editor.memberships.get(project=cast.alpha)
    timeline = pair_timeline(candidate=pair, viewer=cast.editor, membership=membership)
    assert [(e.kind, e.old_grade, e.grade) for e in timeline.events] == [
        ("graded", None, 2),
        ("reason_added", 2, 2),
        ("reason_edited", 2, 2),
        ("reason_removed", 2, 2),
        ("changed", 2, 1),
    ]
    client.force_login(cast.editor)
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    ).content.decode()
    assert "from 2 to 2" not in html
    for text in (
        "ed graded 2.",
        "ed added a reason to the grade 2.",
        "ed edited the reason for the grade 2.",
        "ed removed the reason from the grade 2.",
        "ed changed the grade from 2 to 1.",
    ):
        assert text in html, text


def test_a_reason_edit_logged_as_a_change_before_the_fix_is_told_as_a_reason_edit_too(cast: Cast) -> None:
    pair = make_pair(cast.alpha, document="A", required=3)
    g = grade(pair, cast.editor, 2)
    GradeHistory.objects.create(  # what grade_submit wrote for a reason added to a 2
        grade=g,
        changed_by=cast.editor,
        kind=GradeHistory.Kind.CHANGED,
        old_grade=2,
        new_grade=2,
        new_reason="No deadline.",
    )
    membership = cast.editor.memberships.get(project=cast.alpha)
    timeline = pair_timeline(candidate=pair, viewer=cast.editor, membership=membership)
    assert [(e.kind, e.grade, e.text) for e in timeline.events] == [
        ("graded", 2, ""),
        ("reason_added", 2, "No deadline."),
    ]


def test_undoing_a_change_says_which_grade_is_back_instead_of_a_withdrawal(
    cast: Cast, client: Client
) -> None:
    pair = make_pair(cast.alpha, document="A", required=3)
    grading.grade_submit(candidate=pair, editor=cast.editor, value=2, reason="No deadline.")
    grading.grade_submit(candidate=pair, editor=cast.editor, value=3, reason="No deadline.")
    grading.grade_undo(editor=cast.editor, grading_set=pair.grading_set, query=pair.query)
    grading.grade_undo(editor=cast.editor, grading_set=pair.grading_set, query=pair.query)
    client.force_login(cast.editor)
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    ).content.decode()
    assert "ed undid their last change: the grade is 2 again." in html
    assert (
        html.count("withdrew") == 1 and "ed withdrew the grade 2." in html
    )  # the second undo: no grade left


def test_an_editors_re_check_says_whether_it_changed_the_grade_and_from_what(
    cast: Cast, client: Client
) -> None:
    """A re-check that changed the grade says what it was: not "editor-c re-checked the grade: 1."."""
    from annotator.models import StaleReason

    pair = make_pair(cast.alpha, document="R")
    for value in (2, 1, 1):  # graded 2; re-checked to 1; re-checked again, kept
        grading.grade_submit(candidate=pair, editor=cast.editor, value=value)
        grading.flag_for_recheck(StaleReason.CRITERIA, candidate=pair)
    assert list(
        GradeHistory.objects.filter(kind=GradeHistory.Kind.RECHECKED).values_list("old_grade", "new_grade")
    ) == [(2, 1), (1, 1)]
    client.force_login(cast.editor)
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    ).content.decode()
    assert "ed re-checked the grade and changed it from 2 to 1." in html
    assert "ed re-checked the grade and kept it: 1." in html


def test_a_closed_sets_unfinished_pair_is_shown_to_a_reviewer_and_stays_blind_for_its_editors(
    cast: Cast, client: Client
) -> None:
    """A pair left unfinished when its set was frozen does not say "still being graded" for good."""
    from annotator.models import GradingSet

    pair = make_pair(cast.alpha, required=3)
    grade(pair, cast.editor, 3)
    grade(pair, cast.editor2, 1)
    url = reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    client.force_login(cast.reviewer)
    assert "This pair is still being graded" in client.get(url).content.decode()
    GradingSet.objects.filter(pk=pair.grading_set_id).update(is_open=False)
    pair.refresh_from_db()
    reviewer = pair_timeline(
        candidate=pair, viewer=cast.reviewer, membership=cast.reviewer.memberships.get(project=cast.alpha)
    )
    assert reviewer.hidden == "" and [(e.actor.username, e.grade) for e in reviewer.events] == [
        ("ed", 3),
        ("eve", 1),
    ]
    html = client.get(url).content.decode()
    assert "still being graded" not in html and "eve graded 1." in html
    editor = pair_timeline(
        candidate=pair, viewer=cast.editor, membership=cast.editor.memberships.get(project=cast.alpha)
    )
    assert editor.hidden == "unfinished" and [e.actor.username for e in editor.events] == ["ed"]
    client.force_login(cast.editor)
    html = client.get(url).content.decode()
    assert "This set was closed before every required grade of this pair was in." in html
    assert "eve graded" not in html
