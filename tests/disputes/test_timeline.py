"""The timeline of a pair: every grade, reason, reveal, revision and decision, in time order."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotator.models import Dispute
from annotator.services.disputes import dispute_give_reason, dispute_revise, dispute_settle, pair_timeline
from tests.conftest import Cast
from tests.disputes.factories import grade, make_pair


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
