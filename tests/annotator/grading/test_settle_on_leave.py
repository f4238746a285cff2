"""Blindness to the end of a query: pairs completed on the grading page settle when the editor leaves.

While the second editor is on the query, no reply to them says whether they matched: the row says
"Saved", and they may change or undo. Leaving the query (Next query, another query, another page
of the project, or the idle timeout) settles its pairs, or opens their disputes, all at once.
"""

from __future__ import annotations

import re
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.grading.services import grade_submit
from annotator.grading.settlement import Settled, idle_settle, query_grades_settle
from annotator.models import Candidate, Dispute, FinalGrade, OpenQuery
from annotator.pools.freeze import pool_freeze
from tests.conftest import Cast
from tests.factories import make_pairs

HTMX = {"HX-Request": "true"}
# Anything that would tell the second editor whether their grade matched.
REVEALING = re.compile(r"settled|in dispute|dispute|agree|locked|final grade", re.IGNORECASE)


def as_user(client: Client, user: AbstractBaseUser) -> Client:
    client.force_login(user)
    return client


def save(client: Client, cast: Cast, pair: Candidate, grade: int) -> str:
    url = reverse(
        "grade_save", kwargs={"slug": cast.alpha.slug, "set_id": pair.grading_set_id, "candidate_id": pair.pk}
    )
    response = client.post(url, {"grade": str(grade), "document_version": "1"}, headers=HTMX)
    assert response.status_code == 200
    return response.content.decode()


def page_url(cast: Cast, pair: Candidate) -> str:
    return reverse(
        "grade_page",
        kwargs={"slug": cast.alpha.slug, "set_id": pair.grading_set_id, "query_id": pair.query_id},
    )


def undo_url(cast: Cast, pair: Candidate) -> str:
    return reverse(
        "grade_undo",
        kwargs={"slug": cast.alpha.slug, "set_id": pair.grading_set_id, "query_id": pair.query_id},
    )


def first_grades(cast: Cast, pairs: list[Candidate], values: list[int]) -> None:
    for pair, value in zip(pairs, values, strict=True):
        grade_submit(candidate=pair, editor=cast.editor2, value=value)


# --- the service ---------------------------------------------------------------------------------


def test_a_pair_completed_from_the_page_waits_and_settles_with_its_query_all_at_once(cast: Cast) -> None:
    agree, differ, short = make_pairs(cast.alpha, "ABC")
    first_grades(cast, [agree, differ], [2, 3])
    for pair, value in ((agree, 2), (differ, 0), (short, 1)):
        grade_submit(candidate=pair, editor=cast.editor, value=value, settle_now=False)
    assert not FinalGrade.objects.exists() and not Dispute.objects.exists()
    assert OpenQuery.objects.filter(editor=cast.editor, query=agree.query).count() == 1

    settled = query_grades_settle(
        grading_set_id=agree.grading_set_id, query_id=agree.query_id, editor_id=cast.editor.pk
    )

    assert settled == Settled(pairs=1, disputes=1)
    assert FinalGrade.objects.get().candidate == agree
    assert Dispute.objects.get().candidate == differ
    assert not OpenQuery.objects.exists()
    # Settled, a pair's grade changes only through the dispute or a reviewer, as before.
    assert (
        query_grades_settle(
            grading_set_id=agree.grading_set_id, query_id=agree.query_id, editor_id=cast.editor.pk
        )
        == Settled()
    )


def test_a_pair_whose_grade_was_undone_before_leaving_does_not_settle(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    first_grades(cast, [a], [2])
    as_user(client, cast.editor)
    save(client, cast, a, 2)
    assert client.post(undo_url(cast, a), {"page": "1"}, headers=HTMX).status_code == 200
    settled = query_grades_settle(
        grading_set_id=a.grading_set_id, query_id=a.query_id, editor_id=cast.editor.pk
    )
    assert settled == Settled() and not FinalGrade.objects.exists()


def test_only_queries_idle_for_the_timeout_settle_on_someone_elses_read(cast: Cast, settings: object) -> None:
    (idle,) = make_pairs(cast.alpha, "A")
    (busy,) = make_pairs(cast.alpha, "B", query="q2")
    first_grades(cast, [idle, busy], [1, 1])
    grade_submit(candidate=idle, editor=cast.editor, value=1, settle_now=False)
    grade_submit(candidate=busy, editor=cast.editor, value=1, settle_now=False)
    OpenQuery.objects.filter(query=idle.query).update(touched_at=timezone.now() - timedelta(minutes=16))

    assert idle_settle(project=cast.alpha) == Settled(pairs=1)
    assert list(FinalGrade.objects.values_list("candidate", flat=True)) == [idle.pk]
    assert OpenQuery.objects.get().query == busy.query


def test_a_freeze_settles_the_queries_still_held_open_before_it_reads_the_set(cast: Cast) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    first_grades(cast, [a, b], [3, 0])
    for pair, value in ((a, 3), (b, 0)):
        grade_submit(candidate=pair, editor=cast.editor, value=value, settle_now=False)
    version = pool_freeze(grading_set=a.grading_set, by=cast.reviewer)
    assert version.judgments_by_query() == {"q1": {"A": 3, "B": 0}}
    assert not OpenQuery.objects.exists()


# --- the page ------------------------------------------------------------------------------------


def test_the_second_editor_sees_only_saved_whether_or_not_they_matched(cast: Cast, client: Client) -> None:
    agree, differ = make_pairs(cast.alpha, "AB")
    first_grades(cast, [agree, differ], [3, 0])
    as_user(client, cast.editor)
    replies = [save(client, cast, agree, 3), save(client, cast, differ, 3)]
    for reply in replies:
        assert 'data-state="saved"' in reply and "Saved: grade" in reply
        assert not REVEALING.search(reply), REVEALING.search(reply)
    # The same grade on a pair that agrees and one that does not: the replies differ only in the
    # pair (its key, title, position) and the CSRF token.
    tokens = [re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", r) for r in replies]
    shape = [re.sub(r"\d+|[A-B]\b", "#", r) for r in tokens]
    assert shape[0] == shape[1]
    page = client.get(page_url(cast, agree)).content.decode()
    rows = page[page.index('class="candidates"') :]
    assert not REVEALING.search(rows)
    assert rows.count('data-state="saved"') == 2
    assert not FinalGrade.objects.exists() and not Dispute.objects.exists()


def test_the_second_editor_may_change_and_undo_while_on_the_query(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    first_grades(cast, [a], [3])
    as_user(client, cast.editor)
    save(client, cast, a, 0)
    changed = save(client, cast, a, 3)
    assert 'data-grade="3"' in changed and 'id="undo-form"' in changed
    undone = client.post(undo_url(cast, a), {"page": "1"}, headers=HTMX)
    assert "back to grade 0" in undone.content.decode()
    assert a.grades.get(editor=cast.editor).grade == 0
    assert not Dispute.objects.exists()


def test_next_query_opens_the_disputes_all_at_once_and_the_queue_counts_them(
    cast: Cast, client: Client
) -> None:
    a, b, c = make_pairs(cast.alpha, "ABC")
    first_grades(cast, [a, b, c], [3, 3, 1])
    as_user(client, cast.editor)
    for pair, value in ((a, 0), (b, 1), (c, 1)):
        save(client, cast, pair, value)
    assert not Dispute.objects.exists()

    response = client.post(reverse("grading_next", kwargs={"slug": cast.alpha.slug}), follow=True)

    assert Dispute.objects.count() == 2 and FinalGrade.objects.count() == 1
    html = response.content.decode()
    assert "1 pair got its final grade, and 2 disputes wait for your reason" in html
    assert 'id="reasons-waiting"' in html and "2 disputes wait for your reason" in html


def test_any_other_project_page_leaves_the_query(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    first_grades(cast, [a], [2])
    as_user(client, cast.editor)
    save(client, cast, a, 2)
    assert client.get(page_url(cast, a)).status_code == 200  # staying on the query: nothing settles
    assert not FinalGrade.objects.exists()
    client.get(reverse("document_list", kwargs={"slug": cast.alpha.slug}))
    assert FinalGrade.objects.get().candidate == a
    assert not OpenQuery.objects.exists()


def test_opening_another_query_settles_the_one_left(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    (b,) = make_pairs(cast.alpha, "B", query="q2")
    first_grades(cast, [a], [2])
    as_user(client, cast.editor)
    save(client, cast, a, 1)
    client.get(page_url(cast, b))
    assert Dispute.objects.get().candidate == a


def test_a_reviewer_reading_disputes_settles_an_idle_query_but_not_one_in_use(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    first_grades(cast, [a], [2])
    as_user(client, cast.editor)
    save(client, cast, a, 0)
    as_user(client, cast.reviewer).get(reverse("dispute_list", kwargs={"slug": cast.alpha.slug}))
    assert not Dispute.objects.exists()
    OpenQuery.objects.update(touched_at=timezone.now() - timedelta(minutes=16))
    client.get(reverse("dispute_list", kwargs={"slug": cast.alpha.slug}))
    assert Dispute.objects.get().candidate == a


def test_the_page_states_the_idle_timeout_and_offers_undo_only_where_it_can_act(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    first_grades(cast, [a], [2])
    as_user(client, cast.editor)
    page = client.get(page_url(cast, a)).content.decode()
    assert "after 15 minutes without activity here" in page
    assert 'id="undo-form"' not in page  # nothing of this editor's to undo yet
    save(client, cast, a, 2)
    assert 'id="undo-form"' in client.get(page_url(cast, a)).content.decode()
    client.post(reverse("grading_next", kwargs={"slug": cast.alpha.slug}))
    # Back on the query: the pair is settled now, so the undo would be refused: not offered.
    back = client.get(page_url(cast, a)).content.decode()
    assert "Settled" in back and 'id="undo-form"' not in back


def test_agreement_leaves_out_a_query_in_use_and_counts_it_once_idle(cast: Cast, client: Client) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    first_grades(cast, [a, b], [3, 0])
    as_user(client, cast.editor)
    save(client, cast, a, 3)
    save(client, cast, b, 3)
    agreement = reverse("agreement_detail", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id})
    in_use = as_user(client, cast.owner).get(agreement).content.decode()
    # The second editor may still change these grades: no figure counts them yet.
    assert "2 pairs still being graded are left out" in in_use
    OpenQuery.objects.update(touched_at=timezone.now() - timedelta(minutes=16))
    idle = client.get(agreement).content.decode()
    assert "still being graded" not in idle
    assert FinalGrade.objects.get().candidate == a and Dispute.objects.get().candidate == b
