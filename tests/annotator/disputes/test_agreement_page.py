"""The agreement page: figures from raw grades, checked against outside oracles; honest gaps."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotator.disputes.services import dispute_give_reason, dispute_revise
from annotator.models import Candidate, Dispute, GradingSet
from tests.annotator.disputes.test_agreement_maths import plain_alpha
from tests.conftest import Cast
from tests.factories import grade, make_pair

# (query, document) -> grades by ed, eve and rita (None: not graded by them).
FIXTURE = {
    ("q1", "A"): (3, 3, None),
    ("q1", "B"): (2, 3, 2),
    ("q1", "C"): (1, 1, None),
    ("q1", "D"): (0, 1, None),
    ("q2", "A"): (3, 0, None),
    ("q2", "B"): (2, 2, 2),
}


def build(cast: Cast) -> GradingSet:
    people = (cast.editor, cast.editor2, cast.reviewer)
    for (query, document), grades in FIXTURE.items():
        pair = make_pair(cast.alpha, query=query, document=document, required=2)
        for person, value in zip(people, grades, strict=True):
            if value is not None:
                grade(pair, person, value)
    return GradingSet.objects.get(project=cast.alpha, name="Phone number change")


def page(client: Client, grading_set: GradingSet, **extra: str) -> str:
    response = client.get(
        reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}), **extra
    )
    assert response.status_code == 200
    return response.content.decode()


def test_the_figures_match_hand_counts_and_outside_oracles(cast: Cast, client: Client) -> None:
    grading_set = build(cast)
    client.force_login(cast.owner)  # graded nothing: sees every figure (see the blind test below)
    response = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    report = response.context["report"]

    # Comparisons: 4 two-editor pairs + 2 three-editor pairs (3 comparisons each) = 10 by hand;
    # exact: q1/A, q1/C, q1/B (ed-rita), q2/B (all three) = 1 + 1 + 1 + 3 = 6.
    # Within one: all but q2/A (3 vs 0) = 9.
    assert (report.exact.n, report.exact.value) == (10, pytest.approx(0.6))
    assert report.within_one.value == pytest.approx(0.9)

    units = [[float(g) for g in grades if g is not None] for grades in FIXTURE.values()]
    assert report.alpha.value == pytest.approx(plain_alpha(units, "ordinal", [0.0, 1.0, 2.0, 3.0]))

    pairs = {frozenset((p["a"], p["b"])): p for p in response.context["pairs"]}
    ed = [g[0] for g in FIXTURE.values()]
    eve = [g[1] for g in FIXTURE.values()]
    assert pairs[frozenset(("ed", "eve"))]["kappa"]["value"] == pytest.approx(
        cohen_kappa_score(ed, eve, labels=[0, 1, 2, 3], weights="quadratic")
    )
    # Ed and Rita share q1/B and q2/B: both 2 and 2, no variation -> no kappa, a sentence instead.
    assert pairs[frozenset(("ed", "rita"))]["kappa"]["value"] is None
    ed_eve = pairs[frozenset(("ed", "eve"))]
    assert ed_eve["a"] == "ed"  # rows are the first editor's grades (editors in ID order)
    assert ed_eve["matrix"][3] == (3, (1, 0, 0, 1))  # ed's 3s: eve gave 3 once and 0 once

    html = page(client, grading_set)
    assert f"{report.exact.value * 100:.1f}%" in html
    assert f"{report.alpha.value:.3f}" in html
    assert "every grade involved is the same" in html


def test_the_per_query_alpha_puts_the_most_ambiguous_query_first(cast: Cast, client: Client) -> None:
    grading_set = build(cast)
    client.force_login(cast.owner)
    response = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    rows = list(response.context["query_page"])
    assert [r["external_id"] for r in rows] == ["q2", "q1"]
    q2 = [[3.0, 0.0], [2.0, 2.0, 2.0]]
    assert rows[0]["alpha"]["value"] == pytest.approx(plain_alpha(q2, "ordinal", [0.0, 1.0, 2.0, 3.0]))
    fragment = page(client, grading_set, HTTP_HX_REQUEST="true")
    assert fragment.lstrip().startswith('<div id="query-alpha">')


def test_agreement_is_computed_on_raw_grades_not_on_revisions_or_decisions(
    cast: Cast, client: Client
) -> None:
    grading_set = build(cast)
    client.force_login(cast.owner)
    before = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    dispute = make_pair(cast.alpha, query="q2", document="A").dispute
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="Direct answer.")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Wrong event.")
    dispute_revise(dispute=dispute, editor=cast.editor2, grade=3)  # they now agree on 3 -> settled
    after = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    assert after.context["report"] == before.context["report"]
    assert after.context["settled_count"] == before.context["settled_count"] + 1


def test_dispute_counts_by_status_and_severity(cast: Cast, client: Client) -> None:
    grading_set = build(cast)
    client.force_login(cast.owner)
    response = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    table = {row["status"]: row["by_severity"] for row in response.context["dispute_table"]}
    # q1/B: 2,3 (+ rita's 2 came after the pair was complete) -> severity 1; q1/D 0,1 -> 1; q2/A 3,0 -> 3.
    assert table["Waiting for every editor's reason"] == [2, 0, 1]
    assert response.context["dispute_total"] == 3


def test_a_reviewer_who_graded_a_pair_still_blind_to_them_finds_it_left_out_of_every_figure(
    cast: Cast, client: Client
) -> None:
    """Rita graded q1/B (2) after ed (2) and eve (3) disputed it; the dispute is not revealed. The
    ed-rita confusion matrix and the severity counts must not give her the others' grades."""
    grading_set = build(cast)
    client.force_login(cast.reviewer)
    response = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    report = response.context["report"]
    units = [
        [float(g) for g in grades if g is not None] for key, grades in FIXTURE.items() if key != ("q1", "B")
    ]
    assert report.alpha.value == pytest.approx(plain_alpha(units, "ordinal", [0.0, 1.0, 2.0, 3.0]))
    assert report.units == 5
    pairs = {frozenset((p["a"], p["b"])): p for p in response.context["pairs"]}
    assert pairs[frozenset(("ed", "rita"))]["shared"] == 1  # q2/B only, settled unanimously
    table = {row["status"]: row["by_severity"] for row in response.context["dispute_table"]}
    assert table["Waiting for every editor's reason"] == [1, 0, 1]  # q1/D and q2/A
    html = page(client, grading_set)
    assert (
        "1 pair you graded is left out of every figure here until it is settled or its dispute is revealed"
        in html
    )
    client.force_login(cast.owner)
    assert "you graded is left out" not in page(client, grading_set)


def test_an_empty_set_says_not_enough_data_instead_of_numbers(cast: Cast, client: Client) -> None:
    grading_set = GradingSet.objects.create(project=cast.alpha, name="Empty")
    client.force_login(cast.reviewer)
    html = page(client, grading_set)
    assert "Not enough data: no pair has grades from two editors yet." in html
    assert "No two editors have graded the same pair yet." in html
    assert re.search(r"\bnan\b", html, flags=re.IGNORECASE) is None


def test_a_set_of_another_project_is_not_found(cast: Cast, client: Client) -> None:
    theirs = GradingSet.objects.create(project=cast.beta, name="Theirs")
    client.force_login(cast.owner)
    response = client.get(reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": theirs.pk}))
    assert response.status_code == 404


def test_the_agreement_page_costs_the_same_queries_for_more_grades(cast: Cast, client: Client) -> None:
    grading_set = build(cast)
    client.force_login(cast.reviewer)

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            page(client, grading_set)
        return len(ctx.captured_queries)

    few = queries()
    for i in range(10):
        pair = make_pair(cast.alpha, query=f"q{i + 3}", document="A")
        grade(pair, cast.editor, i % 4)
        grade(pair, cast.editor2, (i + 1) % 4)
    # session, user, membership, set, grades (one query for all), paginator count is in memory,
    # dispute counts, final-grade count, nav: independent of how many grades there are.
    assert queries() == few


def test_the_index_lists_the_projects_sets(cast: Cast, client: Client) -> None:
    grading_set = build(cast)
    GradingSet.objects.create(project=cast.beta, name="Not ours")
    client.force_login(cast.reviewer)
    html = client.get(reverse("agreement_index", kwargs={"slug": "alpha"})).content.decode()
    assert grading_set.name in html and "Not ours" not in html


def test_a_pair_still_being_graded_is_left_out_for_everyone(cast: Cast, client: Client) -> None:
    """With 3 grades required, ed's 3 and eve's 0 showed in the matrix to rita, who still had the
    pair to grade (review)."""
    pair = make_pair(cast.alpha, query="q9", document="Z", required=3, set_name="Three")
    grade(pair, cast.editor, 3)
    grade(pair, cast.editor2, 0)
    assert not Dispute.objects.filter(candidate=pair).exists()  # 2 of 3 grades: still being graded
    for viewer in (cast.reviewer, cast.owner):
        client.force_login(viewer)
        response = client.get(
            reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": pair.grading_set_id})
        )
        assert response.context["report"].units == 0
        assert response.context["pairs"] == []
        assert (
            "1 pair still being graded is left out until it has all its grades." in response.content.decode()
        )


def test_a_continued_set_says_its_copied_pairs_are_left_out(cast: Cast, client: Client) -> None:
    """The index counts a continued set's pairs and its page measures fewer: the page says why."""
    from annotator.pools.freeze import pool_freeze
    from annotator.pools.services import grading_set_create_from_version
    from tests import factories

    graded = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {("q1", "A"): (3, 3), ("q1", "B"): (1, 1)}
    )
    copy = grading_set_create_from_version(
        version=pool_freeze(grading_set=graded, by=cast.reviewer), by=cast.reviewer
    )
    client.force_login(cast.reviewer)
    assert "2 pairs copied from a frozen version are left out" in page(client, copy)
    assert "copied from a frozen version" not in page(client, graded)


def closed_three_editor_set(cast: Cast) -> tuple[Candidate, Candidate]:
    """Three grades required; q9/Z got two (ed, eve) and q9/Y one (rita), then the set closed."""
    unfinished = make_pair(cast.alpha, query="q9", document="Z", required=3, set_name="Three")
    grade(unfinished, cast.editor, 3)
    grade(unfinished, cast.editor2, 1)
    mine = make_pair(cast.alpha, query="q9", document="Y", required=3, set_name="Three")
    grade(mine, cast.reviewer, 2)
    grade(mine, cast.editor, 2)
    make_pair(cast.alpha, query="q9", document="X", required=3, set_name="Three")  # never graded
    GradingSet.objects.filter(pk=unfinished.grading_set_id).update(is_open=False)
    return unfinished, mine


def test_a_closed_sets_unfinished_pairs_count_except_for_who_graded_them(cast: Cast, client: Client) -> None:
    """A set frozen with pairs left unfinished does not call them "still being graded", and counts
    their grades in the figures."""
    unfinished, mine = closed_three_editor_set(cast)
    client.force_login(cast.owner)  # graded nothing here
    response = client.get(
        reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": unfinished.grading_set_id})
    )
    html = response.content.decode()
    assert response.context["report"].units == 2 and response.context["report"].grades == 4
    assert "still being graded" not in html
    assert "2 pairs were left unfinished when this set was closed (not all their grades were in)" in html
    client.force_login(cast.reviewer)  # graded q9/Y: it stays hidden from her
    response = client.get(
        reverse("agreement_detail", kwargs={"slug": "alpha", "set_id": unfinished.grading_set_id})
    )
    assert response.context["report"].units == 1
    assert {frozenset((p["a"], p["b"])) for p in response.context["pairs"]} == {frozenset(("ed", "eve"))}
    html = response.content.decode()
    assert "the set was closed before it was settled or its dispute revealed" in html
    # Her own is not also said to be counted: no pair is named by both notes.
    assert response.context["unfinished_count"] == 1
    assert "1 pair was left unfinished when this set was closed" in html


def test_only_graded_pairs_are_said_to_be_left_out_and_the_empty_state_says_why(
    cast: Cast, client: Client
) -> None:
    """A set with nothing graded does not say "3 pairs still being graded are left out", nor a set
    whose grades are all held back "No grades in this set yet"."""
    for document in "ABC":
        make_pair(cast.alpha, query="q7", document=document, set_name="Nothing graded")
    nothing = GradingSet.objects.get(name="Nothing graded")
    client.force_login(cast.reviewer)
    html = page(client, nothing)
    assert "left out" not in html and "No grades in this set yet." in html
    held = make_pair(cast.alpha, query="q8", document="A", set_name="One editor")
    grade(held, cast.editor, 2)  # one of the two grades required
    html = page(client, held.grading_set)
    assert "1 pair still being graded is left out until it has all its grades." in html
    assert "Nothing can be counted yet: the pairs graded so far are left out, as said above." in html
    assert "No grades in this set yet." not in html
