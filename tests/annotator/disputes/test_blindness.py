"""Blindness: before the reveal, an editor of a dispute sees their own grade and reason and nothing else.

Ed grades 2 and Eve 3. Until both reasons are in, Ed's pages must not show Eve's grade, her
reason, or the severity (which would tell Ed how far off the other grade is).
"""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from annotator.disputes.services import dispute_give_reason
from annotator.models import Dispute, Membership, Role
from tests.conftest import Cast, make_user
from tests.factories import disputed_pair, grade, make_pair

ED_REASON = "Ed: explains how to request a change but gives no deadline."
EVE_REASON = "Eve: the entry point and the phone field are both named."


def pages_of(client: Client, dispute: Dispute) -> str:
    """Everything an editor can open about the dispute: the list, the dispute, the pair's timeline."""
    slug = dispute.candidate.grading_set.project.slug
    urls = [
        reverse("dispute_list", kwargs={"slug": slug}),
        reverse("dispute_detail", kwargs={"slug": slug, "dispute_id": dispute.pk}),
        reverse("pair_timeline", kwargs={"slug": slug, "candidate_id": dispute.candidate_id}),
    ]
    html = ""
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        html += response.content.decode()
    return html


def mentions_eve(html: str) -> bool:
    return re.search(r"\beve\b", html) is not None


def shown_grades(html: str) -> list[str]:
    return re.findall(r'class="grade-chip grade-(\d)"', html)


def test_an_editor_sees_only_their_own_side_until_every_reason_is_in(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3))
    client.force_login(cast.editor)

    html = pages_of(client, dispute)
    assert shown_grades(html) == ["2"]
    assert not mentions_eve(html)
    assert "Severity 1" not in html and "severity 1" not in html
    assert "Shown after the reveal" in html  # the list keeps the severity column blank for Ed

    # Eve gives her reason first: still nothing of hers for Ed.
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=EVE_REASON)
    html = pages_of(client, dispute)
    assert EVE_REASON not in html and not mentions_eve(html)
    assert shown_grades(html) == ["2"]
    assert "Reasons in: 1 of 2." in html

    # Ed's own reason is the last one: now, and only now, everything is revealed.
    response = client.post(
        reverse("dispute_reason", kwargs={"slug": "alpha", "dispute_id": dispute.pk}), {"reason": ED_REASON}
    )
    assert response.status_code == 302
    html = pages_of(client, dispute)
    assert EVE_REASON in html and ED_REASON in html
    assert sorted(set(shown_grades(html))) == ["2", "3"]
    assert "Severity 1" in html


def test_the_list_order_tells_an_editor_nothing_of_hidden_severities(cast: Cast, client: Client) -> None:
    """Ordered by severity, a newer dispute listed above an older one would say its hidden
    severity is the larger: the other editor's grade is further from Ed's."""
    near = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3), document="NEAR")  # severity 1, older
    far = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 3), document="FAR")  # severity 3, newer
    assert (near.severity, far.severity) == (1, 3) and near.opened_at <= far.opened_at
    client.force_login(cast.editor)
    html = client.get(reverse("dispute_list", kwargs={"slug": cast.alpha.slug})).content.decode()
    assert html.index("q1 / NEAR") < html.index("q1 / FAR")  # opened first, listed first


def test_the_reveal_never_happens_before_the_last_reason(cast: Cast) -> None:
    third = make_user("ivy")
    Membership.objects.create(project=cast.alpha, user=third, role=Role.EDITOR)
    pair = make_pair(cast.alpha, required=3)
    grade(pair, cast.editor, 1)
    grade(pair, cast.editor2, 3)
    assert not Dispute.objects.filter(candidate=pair).exists()  # two of three grades: no dispute yet
    grade(pair, third, 3)
    dispute = Dispute.objects.get(candidate=pair)
    for i, editor in enumerate((cast.editor, cast.editor2, third)):
        dispute.refresh_from_db()
        assert not dispute.is_revealed and dispute.revealed_at is None
        dispute_give_reason(dispute=dispute, editor=editor, reason=f"reason {i}")
    dispute.refresh_from_db()
    assert dispute.is_revealed and dispute.revealed_at is not None


def test_an_editor_outside_the_dispute_cannot_open_it_and_does_not_see_it_listed(
    cast: Cast, client: Client
) -> None:
    outsider_editor = make_user("ivy")
    Membership.objects.create(project=cast.alpha, user=outsider_editor, role=Role.EDITOR)
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3))
    client.force_login(outsider_editor)
    assert (
        client.get(reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk})).status_code
        == 404
    )
    listing = client.get(reverse("dispute_list", kwargs={"slug": "alpha"})).content.decode()
    assert "You have no disputes" in listing
    timeline = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": dispute.candidate_id})
    ).content.decode()
    assert shown_grades(timeline) == [] and "graded 2" not in timeline and "graded 3" not in timeline
    assert "You did not grade this pair" in timeline
    # Nor that the grades differed: no dispute event, no link to the dispute.
    assert "grades differ" not in timeline and "The dispute" not in timeline
    assert reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk}) not in timeline


def test_an_editor_who_did_not_grade_a_pair_never_sees_its_grades_even_once_settled(
    cast: Cast, client: Client
) -> None:
    """They may have the same query and document to grade in another set, so a settled pair's
    timeline shows its grades, reasons and final grade to no other editor."""
    from annotator.models import FinalGrade

    outsider_editor = make_user("ivy")
    Membership.objects.create(project=cast.alpha, user=outsider_editor, role=Role.EDITOR)
    unanimous = make_pair(cast.alpha, document="U")
    grade(unanimous, cast.editor, 3, reason="All three conditions.")
    grade(unanimous, cast.editor2, 3, reason="Complete answer.")
    assert FinalGrade.objects.filter(candidate=unanimous).exists()
    client.force_login(outsider_editor)
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": unanimous.pk})
    ).content.decode()
    assert "All three conditions." not in html and "Complete answer." not in html
    assert "graded 3" not in html and "Final grade" not in html  # "final 3, unanimous" is both grades
    assert "You did not grade this pair" in html
    # Its editors and the reviewers still read it all.
    for reader in (cast.editor, cast.reviewer):
        client.force_login(reader)
        html = client.get(
            reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": unanimous.pk})
        ).content.decode()
        assert "All three conditions." in html and "Complete answer." in html and "Final grade 3" in html


def test_nobody_sees_grades_of_a_pair_still_being_graded(cast: Cast, client: Client) -> None:
    pair = make_pair(cast.alpha)
    grade(pair, cast.editor, 3, reason="All three conditions.")
    client.force_login(cast.reviewer)  # reviewers grade too: they must not peek either
    html = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    ).content.decode()
    assert "All three conditions." not in html and "ed graded" not in html
    assert "still being graded" in html


def test_a_reviewer_who_graded_the_pair_is_blind_like_any_editor_of_it(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.reviewer, cast.editor, (2, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason=EVE_REASON)
    client.force_login(cast.reviewer)
    review_url = reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": dispute.pk})
    response = client.get(review_url)
    assert response.status_code == 302
    assert response["Location"] == reverse(
        "dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk}
    )
    html = pages_of(client, dispute)
    assert EVE_REASON not in html and shown_grades(html).count("3") == 0
    queue = client.get(reverse("dispute_queue", kwargs={"slug": "alpha"})).content.decode()
    assert EVE_REASON not in queue


def test_a_reviewer_who_did_not_grade_sees_the_whole_dispute_at_once(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason=EVE_REASON)
    client.force_login(cast.reviewer)
    html = client.get(
        reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": dispute.pk})
    ).content.decode()
    assert EVE_REASON in html and sorted(set(shown_grades(html))) == ["2", "3"]
    assert "Settle this dispute" not in html  # not in review yet
