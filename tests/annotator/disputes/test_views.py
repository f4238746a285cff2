"""The dispute pages: roles, methods, full pages and htmx fragments, bad input, the settle race's loser."""

from __future__ import annotations

import html

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.disputes import views as views
from annotator.disputes.services import DisputeError, dispute_give_reason, dispute_settle
from annotator.models import (
    CriteriaVersion,
    Dispute,
    DisputeStatus,
    FinalGrade,
    FinalSource,
    Grade,
    Membership,
    Role,
)
from tests.annotator.grading.accessible import Page, squash
from tests.conftest import Cast
from tests.factories import disputed_pair, in_review

HTMX = {"HTTP_HX_REQUEST": "true"}


def url(name: str, **kwargs: int) -> str:
    return reverse(name, kwargs={"slug": "alpha", **kwargs})


def revealed(cast: Cast, grades: tuple[int, int] = (2, 3), document: str = "B") -> Dispute:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, grades, document=document)
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="Ed's basis")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Eve's basis")
    dispute.refresh_from_db()
    return dispute


# --- an editor's reason ---------------------------------------------------------------------------


def test_an_editor_of_the_dispute_gives_a_reason_without_javascript(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    response = client.post(
        url("dispute_reason", dispute_id=dispute.pk), {"reason": "No deadline", "criteria_level": "2"}
    )
    assert response.status_code == 302 and response["Location"] == url(
        "dispute_detail", dispute_id=dispute.pk
    )
    statement = dispute.statements.get(editor=cast.editor)
    assert (statement.reason, statement.criteria_level) == ("No deadline", 2)
    page = client.get(response["Location"]).content.decode()
    assert "Your reason is saved" in page and "<html" in page


def test_the_reason_from_the_grading_page_is_offered_and_the_page_says_it_is_not_given_yet(
    cast: Cast, client: Client
) -> None:
    """The box holds the grading page's reason, so the page must not read as if it were given."""
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    Grade.objects.filter(candidate=dispute.candidate, editor=cast.editor).update(reason="No deadline given")
    client.force_login(cast.editor)
    page = html.unescape(client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode())
    assert "No deadline given</textarea>" in page
    assert "The box holds the reason you wrote on the grading page. It is not given yet" in page
    assert "Reasons in: 0 of 2." in page
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="No deadline given")
    page = html.unescape(client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode())
    assert "It is not given yet" not in page and "Reasons in: 1 of 2." in page
    # Eve wrote nothing on the grading page: an empty box, and no such note.
    client.force_login(cast.editor2)
    assert (
        "It is not given yet" not in client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode()
    )


def test_an_editor_gives_a_reason_with_htmx_and_gets_the_fragment_back(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    response = client.post(url("dispute_reason", dispute_id=dispute.pk), {"reason": "No deadline"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="dispute-main">') and "<html" not in html
    assert "Your reason is saved" in html


def test_an_empty_reason_is_refused_with_a_clear_message_and_status_200(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    for headers in ({}, HTMX):
        response = client.post(url("dispute_reason", dispute_id=dispute.pk), {"reason": "  "}, **headers)
        assert response.status_code == 200
        assert "Write the basis of your grade" in response.content.decode()
    response = client.post(
        url("dispute_reason", dispute_id=dispute.pk), {"reason": "x", "criteria_level": "7"}
    )
    assert response.status_code == 200 and "“7” is not a grade" in response.content.decode()
    assert not dispute.statements.filter(reason_given_at__isnull=False).exists()


def test_a_reviewer_outside_the_dispute_cannot_give_a_reason(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.reviewer)
    response = client.post(
        url("dispute_reason", dispute_id=dispute.pk), {"reason": "Let me help"}, follow=True
    )
    assert "not one of the editors of this dispute" in response.content.decode()
    assert not dispute.statements.filter(reason_given_at__isnull=False).exists()


def test_the_reason_and_revision_urls_take_only_post(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    # A GET changes nothing: it goes to the dispute's page (annotator.web.http.post_from).
    page = url("dispute_detail", dispute_id=dispute.pk)
    assert client.get(url("dispute_reason", dispute_id=dispute.pk))["Location"] == page
    assert client.get(url("dispute_revision", dispute_id=dispute.pk))["Location"] == page
    assert client.put(url("dispute_reason", dispute_id=dispute.pk)).status_code == 405
    assert client.delete(url("dispute_review", dispute_id=dispute.pk)).status_code in (403, 405)


# --- an editor's revision -------------------------------------------------------------------------


def test_the_revision_form_appears_only_after_the_reveal(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    assert (
        "Revise or keep your grade"
        not in client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode()
    )
    response = client.post(url("dispute_revision", dispute_id=dispute.pk), {"grade": "3"}, follow=True)
    assert "you can revise after that" in response.content.decode()
    dispute = revealed(cast, document="C")  # a second pair, now revealed
    page = client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode()
    assert "Revise or keep your grade" in page
    # The answer is final, so nothing is chosen in advance: a bare click must not record "kept".
    assert 'name="grade" value="2"' in page and "checked" not in page
    refused = client.post(
        url("dispute_revision", dispute_id=dispute.pk), {"note": "just clicked"}
    ).content.decode()
    assert "Choose a grade from 0 to 3." in refused
    dispute.refresh_from_db()
    assert not dispute.statements.get(editor=cast.editor).has_responded


def test_an_editor_revises_once_and_the_dispute_settles_by_discussion(cast: Cast, client: Client) -> None:
    dispute = revealed(cast, (2, 3))
    client.force_login(cast.editor2)
    response = client.post(
        url("dispute_revision", dispute_id=dispute.pk), {"grade": "2", "note": "Fair: no deadline."}
    )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "revised your grade from 3 to 2" in page and "settled by discussion" in page
    assert FinalGrade.objects.get(candidate=dispute.candidate).source == FinalSource.DISCUSSION
    again = client.post(
        url("dispute_revision", dispute_id=dispute.pk), {"grade": "3"}, follow=True
    ).content.decode()
    assert "already settled" in again


def test_keeping_grades_with_htmx_sends_the_dispute_to_review(cast: Cast, client: Client) -> None:
    dispute = revealed(cast, (2, 3))
    client.force_login(cast.editor)
    html = client.post(
        url("dispute_revision", dispute_id=dispute.pk), {"grade": "2"}, **HTMX
    ).content.decode()
    assert "You kept your grade 2." in html and "<html" not in html
    client.force_login(cast.editor2)
    html = client.post(
        url("dispute_revision", dispute_id=dispute.pk), {"grade": "3"}, **HTMX
    ).content.decode()
    assert "goes to a reviewer" in html
    dispute.refresh_from_db()
    assert dispute.status == DisputeStatus.IN_REVIEW


def test_a_revision_to_a_non_grade_is_refused_clearly(cast: Cast, client: Client) -> None:
    dispute = revealed(cast)
    client.force_login(cast.editor)
    for bad in ("4", "two", ""):
        response = client.post(url("dispute_revision", dispute_id=dispute.pk), {"grade": bad})
        assert response.status_code == 200
        html = response.content.decode()
        assert ("is not a grade" in html) or ("Choose a grade from 0 to 3" in html)
    assert not dispute.statements.filter(revised_at__isnull=False).exists()


# --- the reviewer ---------------------------------------------------------------------------------


def test_editors_cannot_reach_the_reviewer_pages_or_settle(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.editor)
    assert client.get(url("dispute_queue")).status_code == 403
    assert client.get(url("dispute_review", dispute_id=dispute.pk)).status_code == 403
    assert client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "3"}).status_code == 403
    assert client.get(url("agreement_index")).status_code == 403
    assert client.get(url("agreement_detail", set_id=dispute.candidate.grading_set_id)).status_code == 403
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_a_reviewer_settles_with_a_note_without_javascript(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3))
    client.force_login(cast.reviewer)
    page = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    assert "<html" in page and "Settle this dispute" in page
    response = client.post(
        url("dispute_review", dispute_id=dispute.pk), {"grade": "2", "note": "Steps, no deadline."}
    )
    assert response.status_code == 302
    page = client.get(response["Location"]).content.decode()
    assert "Settled: final grade 2." in page and "Steps, no deadline." in page
    final = FinalGrade.objects.get(candidate=dispute.candidate)
    assert (final.grade, final.decided_by, final.source) == (2, cast.reviewer, FinalSource.ADJUDICATED)


def test_a_reviewer_settles_with_htmx_and_gets_the_fragment(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    client.force_login(cast.owner)
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "3"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and html.lstrip().startswith('<div id="dispute-review">')
    assert "Settled: final grade 3." in html


def test_overriding_every_editor_without_a_note_re_renders_the_form_with_the_reason(
    cast: Cast, client: Client
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3))
    client.force_login(cast.reviewer)
    for headers in ({}, HTMX):
        response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "1"}, **headers)
        assert response.status_code == 200
        assert "Grade 1 differs from every editor&#x27;s grade (0, 3)" in response.content.decode()
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "9"})
    assert response.status_code == 200 and "“9” is not a grade" in response.content.decode()
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_the_loser_of_a_settle_race_is_told_who_settled_and_how(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    client.force_login(cast.owner)
    client.get(url("dispute_review", dispute_id=dispute.pk))  # the owner opens the page...
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="Deadline missing.")  # ...Rita is faster
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "3"})
    assert response.status_code == 409
    html = response.content.decode()
    assert "Already settled by rita: grade 2 (Settled by a reviewer)." in html and "Deadline missing." in html
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "3"}, **HTMX)
    assert response.status_code == 200 and "Already settled by rita" in response.content.decode()
    assert FinalGrade.objects.get(candidate=dispute.candidate).grade == 2


def test_a_reviewer_who_graded_sees_the_revealed_page_but_no_settle_form(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.reviewer, cast.editor, (2, 3))
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    assert "You graded this pair, so you cannot settle it" in html and "Settle this dispute" not in html
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "2"})
    assert response.status_code == 409 and "You graded this pair" in response.content.decode()
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_the_anonymous_toggle_shows_editor_1_and_2_and_sticks_for_the_session(
    cast: Cast, client: Client
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=hide").content.decode()
    assert "Editor 1" in html and "Editor 2" in html and 'aria-label="ed"' not in html
    html = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    assert "Editor 1" in html
    html = client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=show", **HTMX).content.decode()
    assert 'aria-label="ed"' in html and 'aria-label="eve"' in html and "<html" not in html


def test_the_review_page_shows_query_need_document_and_criteria_side_by_side(
    cast: Cast, client: Client
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    candidate = dispute.candidate
    for text in (candidate.query.text, candidate.query.information_need, candidate.document.body):
        assert text in html
    assert "version 1" in html and "Substantive help, but an important condition is missing." in html
    assert "Explains how to request a change but not the deadline." in html  # Ed's reason
    assert "kept after the reveal" in html


# --- lists ----------------------------------------------------------------------------------------


def test_the_queue_lists_widest_first_and_pages(cast: Cast, client: Client) -> None:
    mild = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3), document="B")
    wide = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3), document="C")
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_queue")).content.decode()
    assert html.index(f"/disputes/{wide.pk}/review/") < html.index(f"/disputes/{mild.pk}/review/")
    # The grades are read "0, 3", not "03": a separator for screen readers between the chips.
    assert '>0</span><span class="visually-hidden">, </span><span class="grade-chip grade-3">' in html
    fragment = client.get(url("dispute_queue"), **HTMX).content.decode()
    assert fragment.lstrip().startswith('<div id="queue-table">')


def test_the_queue_costs_the_same_queries_for_two_rows_as_for_eight(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)

    def queries() -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(url("dispute_queue")).status_code == 200
        return len(ctx.captured_queries)

    for doc in ("B", "C"):
        in_review(cast.alpha, cast.editor, cast.editor2, document=doc)
    two = queries()
    for doc in ("D", "E", "F", "G", "H", "I"):
        in_review(cast.alpha, cast.editor, cast.editor2, document=doc)
    # session, user, membership, count, page of disputes with their pair, statements, nav
    assert queries() == two


def test_the_dispute_list_pages_and_filters_by_status(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(views, "PER_PAGE", 2)
    for doc in ("B", "C", "D"):
        in_review(cast.alpha, cast.editor, cast.editor2, document=doc)
    disputed_pair(cast.alpha, cast.editor, cast.editor2, document="E")
    client.force_login(cast.reviewer)
    first = client.get(url("dispute_list")).content.decode()
    assert "Page 1 of 2" in first
    second = client.get(url("dispute_list") + "?page=2").content.decode()
    assert "Page 2 of 2" in second
    only_waiting = client.get(url("dispute_list") + "?status=awaiting_reasons", **HTMX).content.decode()
    assert "q1 / E" in only_waiting and "q1 / B" not in only_waiting and "<html" not in only_waiting
    bad = client.get(url("dispute_list") + "?status=nonsense").content.decode()
    assert "Unknown status “nonsense”: showing every dispute" in bad
    assert "awaiting_reasons, revealed" not in bad  # internal codes are not shown to people


def test_the_lists_have_clear_empty_states(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    assert "You have no disputes" in client.get(url("dispute_list")).content.decode()
    client.force_login(cast.reviewer)
    assert "Nothing waiting for a reviewer." in client.get(url("dispute_queue")).content.decode()
    assert "No disputes yet" in client.get(url("dispute_list")).content.decode()


def test_settling_a_dispute_the_editors_have_not_finished_explains_why(cast: Cast, client: Client) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2)
    client.force_login(cast.reviewer)
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "2"})
    assert response.status_code == 409  # refused: a 200 reads as success to clients without htmx
    assert "not waiting for a reviewer yet" in response.content.decode()
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


# --- accessible names ---------------------------------------------------------------------------


def test_the_revision_and_settle_radios_carry_the_criteria_text_of_their_grade(
    cast: Cast, client: Client
) -> None:
    criteria = dict(CriteriaVersion.objects.current_for(cast.alpha).levels())
    dispute = revealed(cast)
    client.force_login(cast.editor)
    detail = Page(client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode())
    settling = in_review(cast.alpha, cast.editor, cast.editor2, document="C")
    client.force_login(cast.reviewer)
    review = Page(client.get(url("dispute_review", dispute_id=settling.pk)).content.decode())
    # The editor answers with one button per grade: their own to keep it, another to change.
    buttons = detail.controls("button", name="grade")
    assert [b.attrs["value"] for b in buttons] == ["2", "0", "1", "3"]
    assert [detail.name(b) for b in buttons] == [
        "Keep my 2 k",
        "Change to 0 0",
        "Change to 1 1",
        "Change to 3 3",
    ]
    for button in buttons:
        assert detail.description(button) == squash(criteria[int(button.attrs["value"])])
    # The reviewer's "another grade" keeps its radios, each read with its level's text.
    radios = review.controls("input", type="radio", name="grade")
    assert [r.attrs["value"] for r in radios] == ["0", "1", "2", "3"]
    for radio in radios:
        level = int(radio.attrs["value"])
        assert review.name(radio) == str(level)  # the visible label stays the plain grade
        assert review.description(radio) == squash(criteria[level])


def test_a_dispute_left_out_of_a_freeze_stays_as_it_is_and_leaves_the_queues(
    cast: Cast, client: Client
) -> None:
    """A dispute of a pair left out when its set was frozen cannot be revised or settled: the
    decision would go into no pool version."""
    from annotator.disputes.services import DisputeError, dispute_revise
    from annotator.models import Dispute
    from annotator.pools.freeze import pool_freeze
    from tests.factories import grade, make_pair

    waiting = in_review(cast.alpha, cast.editor, cast.editor2, (1, 3))
    revealed_one = revealed(cast, (0, 2), document="C")
    settled = make_pair(cast.alpha, document="U")
    grade(settled, cast.editor, 3)
    grade(settled, cast.editor2, 3)
    pool_freeze(grading_set=settled.grading_set, by=cast.owner, exclude_unsettled=True, reason="Next round.")

    with pytest.raises(DisputeError, match="frozen without this pair"):
        dispute_settle(dispute=waiting, by=cast.reviewer, grade=3)
    with pytest.raises(DisputeError, match="frozen without this pair"):
        dispute_revise(dispute=revealed_one, editor=cast.editor, grade=1)
    assert not FinalGrade.objects.filter(candidate__in=[waiting.candidate, revealed_one.candidate]).exists()
    assert not Dispute.objects.in_project(cast.alpha).review_queue().exists()
    assert not Dispute.objects.in_project(cast.alpha).open().exists()

    client.force_login(cast.reviewer)
    listing = client.get(url("dispute_list")).content.decode()
    assert listing.count("left out when its set was frozen") == 2
    # Nobody is asked to act on them in the list either ("Give your reason." / "Review").
    assert ">Review<" not in listing and listing.count("Nothing to do: this dispute stays as it is.") == 0
    client.force_login(cast.editor)
    mine = client.get(url("dispute_list")).content.decode()
    assert mine.count("Nothing to do: this dispute stays as it is.") == 2
    assert "Revise or keep your grade." not in mine and "With a reviewer." not in mine
    client.force_login(cast.reviewer)
    review = client.get(url("dispute_review", dispute_id=waiting.pk)).content.decode()
    assert "frozen without this pair" in review and 'name="grade"' not in review
    assert (
        "frozen without this pair"
        in client.post(
            url("dispute_review", dispute_id=waiting.pk), {"grade": 3, "note": ""}
        ).content.decode()
    )
    client.force_login(cast.editor)
    detail = client.get(url("dispute_detail", dispute_id=revealed_one.pk)).content.decode()
    assert "frozen without this pair" in detail and 'name="grade"' not in detail


def test_a_dispute_waiting_for_a_deactivated_editor_can_be_sent_to_review(cast: Cast, client: Client) -> None:
    """Removing a member hands their disputes over by itself; a deactivated account (or a removal
    from before that rule) left a dispute waiting forever: a reviewer can now send it on."""
    waiting = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3))
    dispute_give_reason(dispute=waiting, editor=cast.editor, reason="The deadline is missing.")
    hand_over = url("dispute_hand_over", dispute_id=waiting.pk)

    client.force_login(cast.reviewer)
    page = client.get(url("dispute_review", dispute_id=waiting.pk)).content.decode()
    assert "Waiting for someone who left" not in page  # both editors can still act
    refused = client.post(hand_over, follow=True).content.decode()
    assert "can still take their step" in refused
    assert Dispute.objects.get(pk=waiting.pk).status == DisputeStatus.AWAITING_REASONS

    assert "Waiting for someone who left" not in client.get(url("dispute_queue")).content.decode()
    cast.editor2.is_active = False
    cast.editor2.save(update_fields=["is_active"])
    # The review queue lists it (it is not in the queue yet, and would never get there by itself).
    queue = client.get(url("dispute_queue")).content.decode()
    assert "Waiting for someone who left" in queue and url("dispute_review", dispute_id=waiting.pk) in queue
    page = client.get(url("dispute_review", dispute_id=waiting.pk)).content.decode()
    assert "Waiting for someone who left" in page and cast.editor2.get_username() in page
    # The dispute's own page says so too, with the way to the review page, not only "Revealed".
    detail = client.get(url("dispute_detail", dispute_id=waiting.pk)).content.decode()
    assert (
        f"This dispute waits for {cast.editor2.get_username()}, who can no longer take their step" in detail
    )
    assert url("dispute_review", dispute_id=waiting.pk) in detail
    client.force_login(cast.editor)  # an editor of the dispute cannot send it on
    assert client.post(hand_over).status_code == 403
    client.force_login(cast.reviewer)
    done = client.post(hand_over, follow=True).content.decode()
    assert "Sent to review" in done and 'name="grade"' in done  # the settle form is there now
    assert Dispute.objects.get(pk=waiting.pk).status == DisputeStatus.IN_REVIEW
    assert Dispute.objects.get(pk=waiting.pk).escalated_by == cast.reviewer
    assert "Waiting for someone who left" not in client.get(url("dispute_queue")).content.decode()
    # Sent again (a second reviewer, or a second tab): said as it is, not "it stays with them".
    client.force_login(cast.owner)
    again = html.unescape(client.post(hand_over, follow=True).content.decode())
    assert (
        f"This dispute is already with the reviewers: {cast.reviewer.get_username()} sent it to review."
        in again
    )
    assert Dispute.objects.get(pk=waiting.pk).escalated_by == cast.reviewer
    client.force_login(cast.reviewer)
    # Who pressed it is on record, on the pair's timeline and on the dispute's page.
    timeline = client.get(url("pair_timeline", candidate_id=waiting.candidate_id)).content.decode()
    assert f"{cast.reviewer.get_username()} sent it to the review queue" in timeline
    client.force_login(cast.editor)
    detail = client.get(url("dispute_detail", dispute_id=waiting.pk)).content.decode()
    assert f"Sent to review by {cast.reviewer.get_username()}." in detail
    dispute_settle(dispute=waiting, by=cast.reviewer, grade=1)
    assert FinalGrade.objects.get(candidate=waiting.candidate).grade == 1


def test_a_dispute_goes_to_review_without_an_editor_who_left_only_after_the_others_steps(
    cast: Cast, client: Client
) -> None:
    """With one editor deactivated, "Send to review" waits for the other's reason: otherwise they
    would see the departed editor's grade before writing their basis."""
    third = get_user_model().objects.create_user("editor-3", password="x")
    Membership.objects.create(project=cast.alpha, user=third, role=Role.EDITOR)
    waiting = disputed_pair(cast.alpha, third, cast.editor2, (0, 2))
    third.is_active = False
    third.save(update_fields=["is_active"])
    hand_over = url("dispute_hand_over", dispute_id=waiting.pk)

    client.force_login(cast.reviewer)
    page = client.get(url("dispute_review", dispute_id=waiting.pk)).content.decode()
    assert "Waiting for someone who left" not in page and 'action="' + hand_over not in page
    refused = html.unescape(client.post(hand_over, follow=True).content.decode())
    assert "waits for an editor who can still take their step" in refused
    assert Dispute.objects.get(pk=waiting.pk).status == DisputeStatus.AWAITING_REASONS
    assert (
        url("dispute_review", dispute_id=waiting.pk) not in client.get(url("dispute_queue")).content.decode()
    )

    # editor2 writes their basis blind; the dispute then waits for the departed editor alone, and
    # goes to review by itself, nobody having to notice it.
    client.force_login(cast.editor2)
    detail = client.get(url("dispute_detail", dispute_id=waiting.pk)).content.decode()
    assert 'name="reason"' in detail
    saved = client.post(
        url("dispute_reason", dispute_id=waiting.pk), {"reason": "Answers the question."}, follow=True
    )
    # What happened, not "the other grades stay hidden" above a page showing them.
    assert "the dispute goes to a reviewer with the grades and reasons on record" in html.unescape(
        saved.content.decode()
    )
    waiting.refresh_from_db()
    assert waiting.status == DisputeStatus.IN_REVIEW and waiting.escalated_by is None
    assert waiting.was_handed_over
    with pytest.raises(DisputeError, match="sent to a reviewer: reasons can no longer be added"):
        dispute_give_reason(dispute=waiting, editor=cast.editor2, reason="later")
    timeline = client.get(url("pair_timeline", candidate_id=waiting.candidate_id)).content.decode()
    assert "could no longer take their step (left the project, or the account was deactivated): sent to" in (
        html.unescape(timeline)
    )


def test_with_names_hidden_the_pair_timeline_numbers_the_editors_as_the_review_page(
    cast: Cast, client: Client
) -> None:
    """ "Hide names" holds on the review page and on its pair's timeline."""
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 3))
    client.force_login(cast.reviewer)
    timeline = url("pair_timeline", candidate_id=dispute.candidate_id)
    shown = client.get(timeline).content.decode()
    assert f"{cast.editor.get_username()} graded 1." in shown
    review = client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=hide").content.decode()
    first, second = (s.editor for s in dispute.statements.all())
    grades = {first.pk: None, second.pk: None}
    for statement in dispute.statements.all():
        grades[statement.editor_id] = statement.original_grade
    assert "Editor 1" in review
    hidden = client.get(timeline).content.decode()  # the choice holds for the session
    assert (
        f"Editor 1 graded {grades[first.pk]}." in hidden and f"Editor 2 graded {grades[second.pk]}." in hidden
    )
    events = hidden[hidden.index('<ol class="timeline">') : hidden.index("</ol>")]
    for user in (cast.editor, cast.editor2):
        assert f"{user.get_username()} graded" not in events and f"{user.get_username()} gave" not in events
    client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=show")
    assert f"{cast.editor.get_username()} graded 1." in client.get(timeline).content.decode()


def test_with_names_hidden_the_dispute_page_numbers_the_editors_too(cast: Cast, client: Client) -> None:
    """ "Hide names" holds on the review page, the timeline and the page its link "The dispute"
    opens. Its editors still see each other's names."""
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 3))
    client.force_login(cast.reviewer)
    page = url("dispute_detail", dispute_id=dispute.pk)
    assert f'<th scope="row">{cast.editor.get_username()}</th>' in client.get(page).content.decode()
    client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=hide")
    hidden = client.get(page).content.decode()
    table = hidden[hidden.index("<tbody>") : hidden.index("</tbody>")]
    assert '<th scope="row">Editor 1</th>' in table and '<th scope="row">Editor 2</th>' in table
    for user in (cast.editor, cast.editor2):
        assert user.get_username() not in table
    client.force_login(cast.editor)  # the choice is the reviewer's session's, not the editors'
    assert f'<th scope="row">{cast.editor2.get_username()}</th>' in client.get(page).content.decode()


def test_the_review_page_says_why_a_grade_needs_re_checking_in_words(cast: Cast, client: Client) -> None:
    """Words, not the stored code ("criteria"), after "This grade is marked for re-check."."""
    from django.conf import settings

    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 3))
    Grade.objects.filter(candidate=dispute.candidate).update(stale=True, stale_reason="criteria,document")
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    assert (
        html.count(
            "This grade is marked for re-check. The criteria changed meaningfully since this grade was "
            "given. The document changed since this grade was given.</p>"
        )
        == 2
    )
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    zh = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    assert (
        "criteria,document" not in zh and " criteria</p>" not in zh and "since this grade was given" not in zh
    )


def test_with_names_hidden_the_departed_editor_is_named_by_their_column(cast: Cast, client: Client) -> None:
    """With "Hide names" the notice below names "Editor N", as the columns do, not the account."""
    third = get_user_model().objects.create_user("editor-3", password="x")
    Membership.objects.create(project=cast.alpha, user=third, role=Role.EDITOR)
    waiting = disputed_pair(cast.alpha, cast.editor2, third, (2, 0))
    dispute_give_reason(dispute=waiting, editor=cast.editor2, reason="Answers the question.")
    third.is_active = False
    third.save(update_fields=["is_active"])
    client.force_login(cast.reviewer)
    review = url("dispute_review", dispute_id=waiting.pk)
    shown = client.get(review).content.decode()
    assert "This dispute waits for editor-3, who can no longer" in shown
    hidden = client.get(review + "?names=hide").content.decode()
    assert "This dispute waits for Editor 2, who can no longer" in hidden
    assert "editor-3" not in hidden


def test_an_over_long_settle_note_is_one_error_not_also_a_missing_note() -> None:
    """A note refused for its length is not also reported missing (the re-check form shares the
    rule)."""
    from annotator.disputes.forms import SettleForm

    form = SettleForm({"grade": "0", "note": "x" * 5001}, on_record={2, 3})
    assert not form.is_valid()
    assert [str(e) for e in form.errors["note"]] == [
        "Ensure this value has at most 5000 characters (it has 5001)."
    ]
    form = SettleForm({"grade": "0", "note": " "}, on_record={2, 3})
    assert not form.is_valid() and "write a note saying why" in form.errors["note"][0]


def test_the_dispute_and_review_pages_say_the_query_changed_since_it_was_graded(
    cast: Cast, client: Client
) -> None:
    """After a query's text changes, the dispute page says so, as the editor's re-check list does."""
    from annotator.documents.readers import QueryRecord
    from annotator.documents.services import queries_import

    dispute = revealed(cast)
    note = "The query or its information need changed since it was graded."
    detail = reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk})
    review = reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": dispute.pk})
    client.force_login(cast.reviewer)
    assert note not in client.get(detail).content.decode()
    query = dispute.candidate.query
    queries_import(
        project=cast.alpha,
        records=[QueryRecord(line=1, external_id=query.external_id, text="How do I change my phone?")],
    )
    for viewer, url in ((cast.editor, detail), (cast.reviewer, detail), (cast.reviewer, review)):
        client.force_login(viewer)
        page = client.get(url).content.decode()
        assert page.count(note) == 1 and "How do I change my phone?" in page, (viewer, url)


def test_a_frozen_pairs_dispute_page_says_the_query_changed_since_from_its_judgments_fingerprint(
    cast: Cast, client: Client
) -> None:
    """Imports mark the grades of open sets only, so a frozen set's dispute page learns of a query
    change from the frozen judgment's fingerprint."""
    from annotator.documents.readers import QueryRecord
    from annotator.documents.services import queries_import
    from annotator.pools.freeze import pool_freeze

    dispute = in_review(cast.alpha, cast.editor, cast.editor2)
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="Steps without the deadline.")
    pool_freeze(grading_set=dispute.candidate.grading_set, by=cast.reviewer)
    note = "The query or its information need changed since it was graded."
    detail = reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk})
    client.force_login(cast.reviewer)
    assert note not in client.get(detail).content.decode()
    query = dispute.candidate.query
    queries_import(
        project=cast.alpha,
        records=[QueryRecord(line=1, external_id=query.external_id, text="How do I change my phone?")],
    )
    assert client.get(detail).content.decode().count(note) == 1
