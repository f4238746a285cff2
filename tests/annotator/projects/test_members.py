"""Owners manage members; nobody else can, and a project never loses its last owner."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotator.models import Membership, Role
from tests.conftest import Cast, make_user


def test_owner_adds_an_existing_user_with_a_role(cast: Cast, client: Client) -> None:
    newcomer = make_user("nina")
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_list", kwargs={"slug": "alpha"}), {"username": "nina", "role": "reviewer"}
    )
    assert response.status_code == 302
    assert Membership.objects.get(project=cast.alpha, user=newcomer).role == Role.REVIEWER


def test_adding_an_unknown_user_says_which_name_was_not_found(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_list", kwargs={"slug": "alpha"}), {"username": "ghost", "role": "editor"}
    )
    assert response.status_code == 200
    assert "No active user is called “ghost”" in response.content.decode()
    assert not Membership.objects.filter(user__username="ghost").exists()


def test_adding_someone_twice_is_refused(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_list", kwargs={"slug": "alpha"}), {"username": "ed", "role": "owner"}
    )
    assert "already a member" in response.content.decode()
    assert Membership.objects.get(project=cast.alpha, user=cast.editor).role == Role.EDITOR


def test_owner_changes_a_role(cast: Cast, client: Client) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.editor)
    client.force_login(cast.owner)
    client.post(
        reverse("member_update", kwargs={"slug": "alpha", "membership_id": m.pk}), {"role": "reviewer"}
    )
    m.refresh_from_db()
    assert m.role == Role.REVIEWER


def test_each_members_buttons_name_the_member_for_screen_readers(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    html = client.get(reverse("member_list", kwargs={"slug": "alpha"})).content.decode()
    name = cast.editor.get_username()
    assert f'Change role<span class="visually-hidden"> of {name}</span>' in html
    assert f'Remove<span class="visually-hidden"> {name}</span>' in html
    assert f"Yes, remove {name}" in html


def test_the_removal_question_says_how_many_grades_it_withdraws(cast: Cast, client: Client) -> None:
    """Asked in the page, so that it works without JavaScript (one click must not remove a member),
    with what removing withdraws: the grades awaiting the member's re-check."""
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import
    from annotator.grading.services import grade_submit
    from tests.factories import make_pairs

    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    grade_submit(candidate=b, editor=cast.editor, value=1)
    documents_import(project=cast.alpha, records=read_documents("doc_id,title,body\nA,T,a2\nB,T,b2\n", "csv"))
    client.force_login(cast.owner)
    html = client.get(reverse("member_list", kwargs={"slug": "alpha"})).content.decode()
    row = html[html.index(f"Remove {cast.editor.get_username()} from this project?") :]
    assert row[: row.index("</p>")].count("2 grades awaiting their re-check are withdrawn") == 1
    assert "confirm(" not in html  # no JavaScript question any more


def test_the_members_page_counts_without_joining_queries_and_documents(cast: Cast, client: Client) -> None:
    """The grades' default order (by pair, so set, query, document) would join both tables into
    the count of grades each removal withdraws, slow at a million grades."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(cast.owner)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(reverse("member_list", kwargs={"slug": "alpha"})).status_code == 200
    counts = [q["sql"] for q in captured.captured_queries if "COUNT(" in q["sql"]]
    assert counts and not [
        sql for sql in counts if '"annotator_query"' in sql or '"annotator_document"' in sql
    ]


def test_the_removal_question_says_how_many_open_disputes_wait_for_the_member(
    cast: Cast, client: Client
) -> None:
    """Before the removal, the owner learns that a dispute waits for the member."""
    from annotator.disputes.services import dispute_give_reason
    from tests.factories import disputed_pair

    first = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3), document="A")
    disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 2), document="B")
    dispute_give_reason(dispute=first, editor=cast.editor2, reason="All conditions are there.")
    client.force_login(cast.owner)
    html = client.get(reverse("member_list", kwargs={"slug": "alpha"})).content.decode()

    def question(user: object) -> str:
        row = html[html.index(f"Remove {user} from this project?") :]
        return row[: row.index("</p>")]

    assert "2 open disputes wait for their step" in question(cast.editor.get_username())
    assert "1 open dispute waits for their step" in question(cast.editor2.get_username())
    assert "dispute" not in question(cast.reviewer.get_username())


def test_an_invalid_role_is_refused_and_nothing_changes(cast: Cast, client: Client) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.editor)
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_update", kwargs={"slug": "alpha", "membership_id": m.pk}),
        {"role": "emperor"},
        follow=True,
    )
    m.refresh_from_db()
    assert m.role == Role.EDITOR
    assert "emperor" in response.content.decode()


def test_the_last_owner_cannot_be_demoted_or_removed(cast: Cast, client: Client) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.owner)
    client.force_login(cast.owner)
    client.post(reverse("member_update", kwargs={"slug": "alpha", "membership_id": m.pk}), {"role": "editor"})
    client.post(reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}))
    m.refresh_from_db()
    assert m.role == Role.OWNER


def test_removing_a_member_keeps_the_user_account(cast: Cast, client: Client) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.editor)
    client.force_login(cast.owner)
    client.post(reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}))
    assert not Membership.objects.filter(pk=m.pk).exists()
    cast.editor.refresh_from_db()
    assert cast.editor.is_active


def test_reviewer_cannot_manage_members(cast: Cast, client: Client) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.editor)
    client.force_login(cast.reviewer)
    response = client.post(reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}))
    assert response.status_code == 403
    assert Membership.objects.filter(pk=m.pk).exists()


def test_members_page_htmx_request_returns_only_the_table(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = client.get(reverse("member_list", kwargs={"slug": "alpha"}), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert 'id="member-table"' in html
    assert "<html" not in html
    assert "olivia" in html


def test_home_lists_only_my_projects_with_my_role(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    html = client.get(reverse("home")).content.decode()
    assert "Alpha" in html and "Reviewer" in html
    assert "Beta" not in html


def test_a_deactivated_member_is_treated_as_an_outsider(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    cast.editor.is_active = False
    cast.editor.save()
    # Django's auth backend logs out an inactive user on the next request: back to login.
    response = client.get(reverse("project_detail", kwargs={"slug": "alpha"}))
    assert response.status_code == 302


def test_a_deactivated_owner_does_not_count_as_another_owner(cast: Cast, client: Client) -> None:
    # A deactivated account cannot log in: with it as the only other owner, nobody could manage.
    Membership.objects.filter(project=cast.alpha, user=cast.reviewer).update(role=Role.OWNER)
    cast.reviewer.is_active = False
    cast.reviewer.save(update_fields=["is_active"])
    mine = Membership.objects.get(project=cast.alpha, user=cast.owner)
    client.force_login(cast.owner)

    demoted = client.post(reverse("member_update", args=["alpha", mine.pk]), {"role": "editor"}, follow=True)
    removed = client.post(reverse("member_remove", args=["alpha", mine.pk]), follow=True)

    mine.refresh_from_db()
    assert mine.role == Role.OWNER
    for response in (demoted, removed):
        assert "A project needs at least one owner" in response.content.decode()

    cast.reviewer.is_active = True
    cast.reviewer.save(update_fields=["is_active"])
    client.post(reverse("member_update", args=["alpha", mine.pk]), {"role": "editor"})
    mine.refresh_from_db()
    assert mine.role == Role.EDITOR  # with an active second owner, the same change goes through


def test_an_owner_who_demotes_or_removes_themselves_lands_on_a_page_they_can_open(
    cast: Cast, client: Client
) -> None:
    Membership.objects.filter(project=cast.alpha, user=cast.reviewer).update(role=Role.OWNER)
    mine = Membership.objects.get(project=cast.alpha, user=cast.owner)
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_update", args=["alpha", mine.pk]), {"role": "reviewer"}, follow=True
    )
    assert response.status_code == 200
    assert response.redirect_chain[-1][0] == reverse("project_detail", args=["alpha"])
    assert (
        "You are now Reviewer in this project; managing members needs the owner role."
        in response.content.decode()
    )

    theirs = Membership.objects.get(project=cast.alpha, user=cast.reviewer)
    client.force_login(cast.reviewer)
    left = client.post(reverse("member_remove", args=["alpha", theirs.pk]))
    # The last active owner cannot leave; with Olivia back as owner, Rita can.
    assert "at least one owner" in client.get(left["Location"]).content.decode()
    mine.role = Role.OWNER
    mine.save(update_fields=["role"])
    gone = client.post(reverse("member_remove", args=["alpha", theirs.pk]), follow=True)
    assert gone.redirect_chain[-1][0] == reverse("home") and "You left the project" in gone.content.decode()


def test_removing_an_editor_withdraws_only_their_grades_awaiting_recheck_so_their_pairs_can_settle(
    cast: Cast, client: Client
) -> None:
    """A pair waits while one of its grades awaits a re-check; only its editor may re-check it, so
    a departed editor's stale grade would hold its pair forever."""
    from annotator.grading.services import grade_submit
    from annotator.models import FinalGrade, Grade, GradeHistory
    from tests.factories import make_pairs

    waiting, fresh = make_pairs(cast.alpha, "AB", required=2)
    stale = grade_submit(candidate=waiting, editor=cast.editor2, value=2, reason="lacks the fee")
    kept = grade_submit(candidate=fresh, editor=cast.editor2, value=1)
    Grade.objects.filter(pk=stale.pk).update(stale=True, stale_reason="document")
    grade_submit(candidate=waiting, editor=cast.editor, value=3)
    assert not FinalGrade.objects.filter(candidate=waiting).exists()  # waits for the re-check

    m = Membership.objects.get(project=cast.alpha, user=cast.editor2)
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}), follow=True
    )
    page = response.content.decode()
    assert "was removed from the project" in page
    assert "1 grade awaited a re-check by them; it was withdrawn" in page

    assert not Grade.objects.filter(pk=stale.pk).exists()
    assert Grade.objects.filter(pk=kept.pk).exists()  # a grade that needs nothing from them stays
    entry = GradeHistory.objects.get(kind=GradeHistory.Kind.WITHDRAWN)
    assert (entry.candidate, entry.editor, entry.changed_by) == (waiting, cast.editor2, cast.owner)
    assert (entry.old_grade, entry.old_reason, entry.new_grade) == (2, "lacks the fee", None)
    assert entry.old_document_version_id == stale.document_version_id
    # Another member's grade now completes the pair, and its timeline tells the withdrawal.
    grade_submit(candidate=waiting, editor=cast.reviewer, value=3)
    assert FinalGrade.objects.get(candidate=waiting).grade == 3
    timeline = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": waiting.pk})
    ).content.decode()
    assert "grade 2 was withdrawn: it awaited their re-check when they left the project." in timeline


def test_removing_a_member_without_stale_grades_says_nothing_about_withdrawals(
    cast: Cast, client: Client
) -> None:
    m = Membership.objects.get(project=cast.alpha, user=cast.editor2)
    client.force_login(cast.owner)
    response = client.post(
        reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}), follow=True
    )
    page = response.content.decode()
    assert "was removed from the project" in page and "withdrawn" not in page


def test_disputes_waiting_for_a_removed_editor_go_to_a_reviewer_with_what_is_on_record(
    cast: Cast, client: Client
) -> None:
    """A dispute waiting for the reason or the response of an editor who left must not wait forever."""
    from annotator.disputes.services import dispute_give_reason, dispute_revise, dispute_settle
    from annotator.models import Dispute, DisputeStatus, FinalGrade
    from tests.factories import disputed_pair

    no_reason = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3), document="R")
    dispute_give_reason(dispute=no_reason, editor=cast.editor, reason="The deadline is missing.")
    no_response = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 3), document="S")
    dispute_give_reason(dispute=no_response, editor=cast.editor, reason="Off topic.")
    dispute_give_reason(dispute=no_response, editor=cast.editor2, reason="Answers it.")
    their_part_done = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3), document="T")
    dispute_give_reason(dispute=their_part_done, editor=cast.editor2, reason="Answers it.")

    m = Membership.objects.get(project=cast.alpha, user=cast.editor2)
    client.force_login(cast.owner)
    page = client.post(
        reverse("member_remove", kwargs={"slug": "alpha", "membership_id": m.pk}), follow=True
    ).content.decode()
    assert "1 dispute was waiting for them; it went to the reviewers" in page

    statuses = dict(Dispute.objects.values_list("pk", "status"))
    assert statuses[no_reason.pk] == DisputeStatus.IN_REVIEW
    # Revealed, and the editor still here has not responded: it waits for them first, so the
    # editor who stayed keeps their step.
    assert statuses[no_response.pk] == DisputeStatus.REVEALED
    assert statuses[their_part_done.pk] == DisputeStatus.AWAITING_REASONS  # waits for the editor still here
    # Their response was the last step anyone here could take: it goes to review by itself.
    dispute_revise(dispute=no_response, editor=cast.editor, grade=0)
    assert Dispute.objects.get(pk=no_response.pk).status == DisputeStatus.IN_REVIEW
    final = dispute_settle(dispute=no_reason, by=cast.reviewer, grade=2)
    assert FinalGrade.objects.get(candidate=no_reason.candidate) == final

    review = client.get(reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": no_response.pk}))
    assert review.status_code == 200 and "Answers it." in review.content.decode()
    timeline = client.get(
        reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": no_reason.candidate_id})
    ).content.decode()
    # Who sent it on is on record: the owner whose removal of the editor did it.
    assert f"{cast.owner.get_username()} sent it to the review queue" in timeline
    assert Dispute.objects.get(pk=no_reason.pk).escalated_by == cast.owner
    assert Dispute.objects.get(pk=no_response.pk).escalated_by is None  # nobody sent it: it went
    assert Dispute.objects.get(pk=their_part_done.pk).escalated_by is None
    assert "Every reason was in" not in timeline  # it was not: the reveal did not happen that way
    # The dispute page says why it is with a reviewer: not "the grades still differ after the reveal".
    client.force_login(cast.editor)
    in_review = client.get(reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": no_response.pk}))
    assert "could not take their step when it was sent to review" in in_review.content.decode()
    assert "after the reveal: a reviewer" not in in_review.content.decode()
    # "no longer active" names the one who left, never an editor still here (review).
    detail = client.get(
        reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": no_reason.pk})
    ).content.decode()
    assert "No reason given (the editor is no longer active in the project)." in detail  # editor2's
    assert detail.count("no longer active in the project") == 1
    client.force_login(cast.reviewer)
    handed = client.get(reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": no_response.pk}))
    assert handed.content.decode().count("no longer active") == 0  # editor2 had given a reason there
    waiting = client.get(
        reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": their_part_done.pk})
    )
    assert "no longer active" not in waiting.content.decode()
    assert "No reason yet." in waiting.content.decode()  # editor, still a member, has not written one


def test_removing_a_member_removed_already_says_so(cast: Cast, client: Client) -> None:
    """A second tab's Remove gets a page that says so, not Django's bare 404."""
    membership = Membership.objects.get(project=cast.alpha, user=cast.editor2)
    client.force_login(cast.owner)
    remove = reverse("member_remove", kwargs={"slug": "alpha", "membership_id": membership.pk})
    assert client.post(remove).status_code == 302
    again = client.post(remove)
    assert again.status_code == 404
    assert "This member is no longer in the project: removed already." in again.content.decode()
    # Another project's membership ID gets the same words: nothing about that project shows.
    beta = Membership.objects.get(project=cast.beta, user=cast.outsider)
    other = client.post(reverse("member_remove", kwargs={"slug": "alpha", "membership_id": beta.pk}))
    assert other.status_code == 404 and Membership.objects.filter(pk=beta.pk).exists()


def test_the_only_owner_is_offered_no_removal_that_would_be_refused(cast: Cast, client: Client) -> None:
    """The sole owner's row offers no Remove, whose confirmation would say their work is kept,
    and whose removal would then be refused."""
    client.force_login(cast.owner)
    html = client.get(reverse("member_list", kwargs={"slug": "alpha"})).content.decode()
    owner = cast.owner.get_username()
    assert "The project's only owner: make another member owner first." in html
    assert f"Yes, remove {owner}" not in html
    assert f"Yes, remove {cast.editor.get_username()}" in html


def test_the_removal_question_spaces_its_sentences_as_each_language_does(cast: Cast, client: Client) -> None:
    """The Chinese question puts no space after 。, as Chinese spaces no sentences."""
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import
    from annotator.grading.services import grade_submit
    from tests.factories import make_pairs

    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    documents_import(project=cast.alpha, records=read_documents("doc_id,title,body\nA,T,a2\n", "csv"))
    client.force_login(cast.owner)
    url = reverse("member_list", kwargs={"slug": "alpha"})
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Their grades and decisions are kept. 1 grade awaiting their re-check is withdrawn" in english
    chinese = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "都会保留。1 条" in chinese and "。 " not in chinese
