"""A grade given while the page showed an older query text is refused, like one on an older document.

A grade given on the old text after a re-import changed it must not be saved as current and
never flagged. Queries keep no versions: the page sends Query.fingerprint of the text it shows,
and grade_submit compares it.
"""

from __future__ import annotations

import html as html_module
import re
import threading
import time

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, connections, transaction
from django.test import Client
from django.urls import reverse

from annotator.documents.readers import read_queries
from annotator.documents.services import queries_import
from annotator.grading.forms import GradeForm
from annotator.grading.services import GradingError, QueryChanged, grade_submit
from annotator.models import Candidate, Grade, GradeHistory, Query
from tests.conftest import Cast
from tests.factories import make_pairs

HTMX = {"HX-Request": "true"}
OLD_TEXT = "How do I change my phone number? (q1)"
NEW_TEXT = "How do I change my e-mail address?"


def as_user(client: Client, user: AbstractBaseUser) -> Client:
    client.force_login(user)
    return client


def grade_url(cast: Cast, candidate: Candidate) -> str:
    return reverse(
        "grade_save",
        kwargs={"slug": cast.alpha.slug, "set_id": candidate.grading_set_id, "candidate_id": candidate.pk},
    )


def page_url(cast: Cast, candidate: Candidate) -> str:
    return reverse(
        "grade_page",
        kwargs={"slug": cast.alpha.slug, "set_id": candidate.grading_set_id, "query_id": candidate.query_id},
    )


def reimport_q1(cast: Cast, text: str = NEW_TEXT, need: str = "the e-mail field") -> Query:
    """The owner's re-import: it changes q1 and flags its grades stale."""
    data = f"query_id,text,information_need\nq1,{text},{need}\n"
    summary = queries_import(project=cast.alpha, records=read_queries(data.encode(), "csv"))
    assert summary.updated == 1
    return Query.objects.get(project=cast.alpha, external_id="q1")


# --- the fingerprint ---------------------------------------------------------------------------


def test_the_fingerprint_is_short_hex_and_changes_with_the_text_or_the_information_need(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    query = a.query
    seen = query.fingerprint
    assert re.fullmatch(f"[0-9a-f]{{{Query.FINGERPRINT_LENGTH}}}", seen)
    assert Query.objects.get(pk=query.pk).fingerprint == seen  # computed from what is stored: stable
    assert Query(text=query.text + "!", information_need=query.information_need).fingerprint != seen
    assert Query(text=query.text, information_need=query.information_need + "!").fingerprint != seen
    # Text moved from one field to the other is another query.
    assert (
        Query(text="a\nb", information_need="").fingerprint
        != Query(text="a", information_need="b").fingerprint
    )
    assert (
        Query(text="ab", information_need="").fingerprint != Query(text="a", information_need="b").fingerprint
    )


# --- grade_submit ------------------------------------------------------------------------------


def test_a_grade_on_an_older_query_text_is_refused_and_nothing_is_saved(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    seen = a.query.fingerprint
    reimport_q1(cast)
    with pytest.raises(QueryChanged) as refused:
        grade_submit(
            candidate=a, editor=cast.editor, value=2, reason="r", document_version=1, query_seen=seen
        )
    assert isinstance(refused.value, GradingError)  # the views' catch-all still answers it
    assert str(refused.value) == (
        "This query changed while you were reading it. The new text is shown now: read it and grade again."
    )
    assert not Grade.objects.exists() and not GradeHistory.objects.exists()


def test_a_recheck_on_the_older_query_text_is_refused_and_the_grade_stays_flagged(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    seen = a.query.fingerprint
    grade_submit(candidate=a, editor=cast.editor, value=1, query_seen=seen)
    reimport_q1(cast)
    with pytest.raises(QueryChanged):
        grade_submit(candidate=a, editor=cast.editor, value=3, query_seen=seen)
    grade = Grade.objects.get()
    assert (grade.grade, grade.stale, grade.stale_reason) == (1, True, "query")
    assert GradeHistory.objects.count() == 1


def test_a_grade_on_the_current_query_text_is_saved(cast: Cast) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=1, query_seen=a.query.fingerprint)
    query = reimport_q1(cast)
    grade = grade_submit(candidate=a, editor=cast.editor, value=3, query_seen=query.fingerprint)
    assert (grade.grade, grade.stale) == (3, False)  # the re-check on the new text clears the flag
    assert GradeHistory.objects.filter(kind=GradeHistory.Kind.RECHECKED).count() == 1


def test_a_grade_without_a_fingerprint_is_taken_as_before(cast: Cast) -> None:
    """Code that grades without a page (the demo, imports of grades) sends none."""
    (a,) = make_pairs(cast.alpha, "A")
    reimport_q1(cast)
    grade = grade_submit(candidate=a, editor=cast.editor, value=2, query_seen=None)
    assert (grade.grade, grade.stale) == (2, False)


@pytest.mark.postgres
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="needs PostgreSQL row locks; SQLite serialises writers"
)
@pytest.mark.django_db(transaction=True)
def test_a_save_racing_a_reimport_of_its_query_is_never_kept_unflagged(cast: Cast) -> None:
    """The import has changed q1 and flagged its grades, and not yet committed, when the save
    starts: read then, the old text matched the page, and the grade committed after the flagging
    was kept as current. The save waits for the import now, and is refused."""
    (a,) = make_pairs(cast.alpha, "A")
    seen = a.query.fingerprint
    flagged = threading.Event()
    outcome: list[object] = []

    def reimport() -> None:
        try:
            with transaction.atomic():
                reimport_q1(cast)
                flagged.set()
                time.sleep(0.5)  # the save starts meanwhile
        finally:
            connections.close_all()

    def save() -> None:
        flagged.wait(10)
        try:
            outcome.append(grade_submit(candidate=a, editor=cast.editor, value=2, query_seen=seen))
        except GradingError as exc:
            outcome.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=reimport), threading.Thread(target=save)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], QueryChanged), outcome
    assert not Grade.objects.exists()


# --- the form ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "not-a-fingerprint",
        "0123456789abcde",
        "0123456789abcdef0",
        "0123456789ABCDEF",
        "0123456789abcdeg",
        "' OR 1=1",
    ],
)
def test_the_form_refuses_a_fingerprint_of_the_wrong_shape(value: str) -> None:
    form = GradeForm({"grade": "2", "document_version": "1", "query_seen": value})
    assert not form.is_valid()
    assert form.errors["query_seen"] == [
        "The query text sent with the grade is not recognisable. Reload the page and grade again."
    ]


@pytest.mark.parametrize(
    ("value", "cleaned"),
    [
        (None, None),
        ("", None),
        ("0123456789abcdef", "0123456789abcdef"),
    ],
)
def test_the_form_takes_no_fingerprint_or_one_of_the_right_shape(
    value: str | None, cleaned: str | None
) -> None:
    data = {"grade": "2", "document_version": "1"} | ({} if value is None else {"query_seen": value})
    form = GradeForm(data)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["query_seen"] == cleaned


# --- the grading page --------------------------------------------------------------------------


def test_the_page_sends_the_fingerprint_of_the_query_it_shows_with_every_grade_and_undo(
    cast: Cast, client: Client
) -> None:
    a, _b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=1)  # so that undo is offered
    page = as_user(client, cast.editor).get(page_url(cast, a)).content.decode()
    fingerprint = a.query.fingerprint
    # Two rows' grade forms and the undo form.
    assert page.count(f'name="query_seen" value="{fingerprint}" class="query-seen"') == 3
    assert 'id="query-heading"' in page and "hx-swap-oob" not in page.split('id="query-heading"')[1][:20]


def test_a_save_from_a_page_showing_an_older_query_text_is_refused_and_the_page_catches_up(
    cast: Cast, client: Client
) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    as_user(client, cast.editor)
    page = html_module.unescape(client.get(page_url(cast, a)).content.decode())
    assert OLD_TEXT in page
    sent = {
        "grade": "2",
        "reason": "typed on the old text",
        "document_version": "1",
        "query_seen": a.query.fingerprint,
    }
    query = reimport_q1(cast)

    # htmx: 200 (htmx swaps only 2xx) with the failed row, the heading and every form's fingerprint.
    response = client.post(grade_url(cast, a), sent, headers=HTMX)
    assert response.status_code == 200
    html = html_module.unescape(response.content.decode())
    assert (
        "This query changed while you were reading it. The new text is shown now: read it and grade again."
        in html
    )
    assert 'data-state="failed"' in html
    assert 'id="query-heading" hx-swap-oob="true"' in html
    heading = html.split('id="query-heading" hx-swap-oob="true"')[1].split("</div>")[0]
    assert NEW_TEXT in heading and "the e-mail field" in heading and OLD_TEXT not in heading
    assert (
        f'name="query_seen" value="{query.fingerprint}" class="query-seen" '
        f'hx-swap-oob="outerHTML:.query-seen"'
    ) in html
    assert ">typed on the old text</textarea>" in html  # the reason the editor typed is kept
    assert not Grade.objects.exists()

    # Without JavaScript: the whole page again, 409, with the new text and fingerprint.
    plain = client.post(grade_url(cast, a), sent)
    assert plain.status_code == 409
    text = html_module.unescape(plain.content.decode())
    assert NEW_TEXT in text and OLD_TEXT not in text
    assert "This query changed while you were reading it." in text
    assert f'name="query_seen" value="{query.fingerprint}"' in text
    assert not Grade.objects.exists()

    # Sent with the fingerprint now shown, it saves (and says nothing about a change).
    saved = client.post(grade_url(cast, b), {**sent, "query_seen": query.fingerprint}, headers=HTMX)
    assert "Saved grade 2 for B." in saved.content.decode()
    assert 'id="query-heading"' not in saved.content.decode()
    assert Grade.objects.get().candidate_id == b.pk


def test_a_query_changed_while_the_save_was_on_its_way_is_shown_as_it_is_now(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The re-import commits after the view read the pair but before grade_submit compares: the
    reply shows the text that refused the save, not the one read as the request began."""
    from annotator.grading import services

    (a,) = make_pairs(cast.alpha, "A")
    sent = {"grade": "2", "document_version": "1", "query_seen": a.query.fingerprint}

    def reimport_then_submit(**kwargs: object) -> Grade:
        reimport_q1(cast)
        return grade_submit(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(services, "grade_submit", reimport_then_submit)
    html = html_module.unescape(
        as_user(client, cast.editor).post(grade_url(cast, a), sent, headers=HTMX).content.decode()
    )
    assert "This query changed while you were reading it." in html
    assert NEW_TEXT in html and OLD_TEXT not in html
    monkeypatch.setattr(services, "grade_submit", grade_submit)
    plain = client.post(grade_url(cast, a), sent)  # q1 is changed already: refused as plainly
    assert plain.status_code == 409 and NEW_TEXT in html_module.unescape(plain.content.decode())
    assert not Grade.objects.exists()


def test_a_fingerprint_of_the_wrong_shape_is_refused_as_bad_input(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    data = {"grade": "2", "reason": "kept", "document_version": "1", "query_seen": "garbage"}
    response = as_user(client, cast.editor).post(grade_url(cast, a), data)
    assert response.status_code == 400
    html = html_module.unescape(response.content.decode())
    assert "Reload the page and grade again." in html and ">kept</textarea>" in html
    assert not Grade.objects.exists()


def test_an_undo_on_a_page_showing_an_older_query_text_brings_the_heading_up_to_date(
    cast: Cast, client: Client
) -> None:
    """The undone row comes back carrying the new fingerprint: under the old heading, a grade
    given on the old text would then be taken. So the heading catches up too, and it is said."""
    a, b = make_pairs(cast.alpha, "AB")
    seen = a.query.fingerprint
    grade_submit(candidate=a, editor=cast.editor, value=1, query_seen=seen)
    grade_submit(candidate=b, editor=cast.editor, value=2, query_seen=seen)
    query = reimport_q1(cast)
    undo = reverse(
        "grade_undo", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
    )
    response = as_user(client, cast.editor).post(undo, {"page": "1", "query_seen": seen}, headers=HTMX)
    html = html_module.unescape(response.content.decode())
    assert (
        "Undone: B is ungraded again. This query changed while you were reading it. The new text is shown "
        "now." in html
    )
    assert 'id="query-heading" hx-swap-oob="true"' in html and NEW_TEXT in html
    assert f'value="{query.fingerprint}" class="query-seen" hx-swap-oob="outerHTML:.query-seen"' in html
    # Sent from an up-to-date page, the undo says nothing of the query.
    html = html_module.unescape(
        client.post(undo, {"page": "1", "query_seen": query.fingerprint}, headers=HTMX).content.decode()
    )
    assert "Undone: A is ungraded again." in html
    assert "This query changed" not in html and 'id="query-heading"' not in html


def test_an_undo_with_a_fingerprint_this_page_never_sends_says_nothing_of_the_query(
    cast: Cast, client: Client
) -> None:
    """A crafted `query_seen=zz` is not told the query changed: it is not a fingerprint at all."""
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    undo = reverse(
        "grade_undo", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
    )
    for value in ("zz", "x" * 3000):
        grade_submit(candidate=a, editor=cast.editor, value=2)
        html = html_module.unescape(
            as_user(client, cast.editor)
            .post(undo, {"page": "1", "query_seen": value}, headers=HTMX)
            .content.decode()
        )
        assert "Undone: A is back to grade 1." in html and "This query changed" not in html


def test_the_recheck_list_names_query_changes_among_its_causes(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    reimport_q1(cast)
    html = (
        as_user(client, cast.editor)
        .get(reverse("stale_list", kwargs={"slug": cast.alpha.slug}))
        .content.decode()
    )
    assert "A document, a query or the criteria changed after you graded." in html
