"""The grading area's pages and actions over HTTP: roles, methods, full pages and htmx fragments.

Cast (tests/conftest.py): Olivia owns Alpha, Rita reviews, Ed and Eve edit; Otto owns Beta only.
The access matrix (tests/annotator/test_access_matrix.py) walks every URL for every visitor; the
tests here check what each action does.
"""

from __future__ import annotations

import html as html_module
import io
import json
import re
from tempfile import NamedTemporaryFile

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.disputes.forms import ReasonForm, RevisionForm
from annotator.grading.forms import GradeForm
from annotator.grading.services import grade_submit
from annotator.models import (
    REASON_MAX_LENGTH,
    Candidate,
    CriteriaVersion,
    Dispute,
    Document,
    FinalGrade,
    Grade,
    GradeHistory,
    GradingSet,
    Membership,
    Query,
    Role,
)
from tests.annotator.grading.accessible import Page, squash
from tests.conftest import Cast
from tests.factories import make_pairs, make_set

HTMX = {"HX-Request": "true"}


def url(name: str, cast: Cast, **kwargs: object) -> str:
    return reverse(name, kwargs={"slug": cast.alpha.slug, **kwargs})


def as_user(client: Client, user: AbstractBaseUser) -> Client:
    client.force_login(user)
    return client


# --- grade_save --------------------------------------------------------------------------------


def grade_url(cast: Cast, candidate: Candidate) -> str:
    return url("grade_save", cast, set_id=candidate.grading_set_id, candidate_id=candidate.pk)


def test_an_editor_saves_a_grade_with_htmx_and_gets_back_only_the_row_and_progress(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    response = as_user(client, cast.editor).post(
        grade_url(cast, a), {"grade": "2", "reason": "no deadline", "document_version": "1"}, headers=HTMX
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="cand-{a.pk}"' in html and 'data-state="saved"' in html
    assert 'id="progress" class="progress-bars" hx-swap-oob="true"' in html
    assert "<html" not in html
    assert json.loads(response["HX-Trigger-After-Settle"])["grade-row"]["candidate"] == a.pk
    assert Grade.objects.get(candidate=a, editor=cast.editor).reason == "no deadline"


def test_a_save_while_sqlite_stays_locked_is_a_503_saying_nothing_was_saved(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A grade saved during a long import waits out SQLite's busy timeout: a 503, not a 500."""
    from django.db import OperationalError

    from annotator.grading import services

    def locked(**kwargs: object) -> None:
        raise OperationalError("database is locked")

    monkeypatch.setattr(services, "grade_submit", locked)
    (a,) = make_pairs(cast.alpha, "A")
    as_user(client, cast.editor)
    for headers in ({}, HTMX):
        response = client.post(grade_url(cast, a), {"grade": "2", "document_version": "1"}, headers=headers)
        assert response.status_code == 503 and response["Retry-After"] == "30"
        assert "The database is busy writing something large" in html_module.unescape(
            response.content.decode()
        )
    assert not Grade.objects.exists()

    def broken(**kwargs: object) -> None:
        raise OperationalError("no such table: annotator_grade")

    monkeypatch.setattr(services, "grade_submit", broken)  # any other database error stays an error
    with pytest.raises(OperationalError, match="no such table"):
        client.post(grade_url(cast, a), {"grade": "2", "document_version": "1"})


def test_a_grade_from_a_page_older_than_a_meaning_change_of_the_criteria_is_refused(
    cast: Cast, client: Client
) -> None:
    """A page loaded under criteria v1 must not save its grade under v2 (published meanwhile,
    meaning changed) as if the editor had read v2: refused, and the reply brings the panel and
    every row's form up to date; a wording-only change still saves."""
    from annotator.documents.models import CriteriaChange
    from annotator.documents.services import criteria_publish

    a, b = make_pairs(cast.alpha, "AB")
    page = (
        as_user(client, cast.editor)
        .get(url("grade_page", cast, set_id=a.grading_set_id, query_id=a.query_id))
        .content.decode()
    )
    assert page.count('name="criteria_version" value="1" class="criteria-version"') == 2
    levels = {3: "all conditions", 2: "one condition missing", 1: "background", 0: "none"}
    criteria_publish(project=cast.alpha, levels=levels, change=CriteriaChange.MEANING, note="", by=cast.owner)
    sent = {"grade": "2", "reason": "typed", "document_version": "1", "criteria_version": "1"}
    response = client.post(grade_url(cast, a), sent, headers=HTMX)
    html = response.content.decode()
    assert "The criteria changed while you were reading (you saw version 1; version 2" in html
    assert 'id="criteria-text" hx-swap-oob="true"' in html and "one condition missing" in html
    assert 'value="2" class="criteria-version" hx-swap-oob="outerHTML:.criteria-version"' in html
    assert "typed" in html  # the reason the editor typed is kept
    assert not Grade.objects.exists()
    # Without JavaScript: the page again, 409, with the new criteria.
    plain = client.post(grade_url(cast, a), sent)
    assert plain.status_code == 409 and "one condition missing" in plain.content.decode()
    # Sent with the version now shown, it saves; a later wording-only change does not refuse.
    client.post(grade_url(cast, a), {**sent, "criteria_version": "2"}, headers=HTMX)
    criteria_publish(
        project=cast.alpha,
        levels={**levels, 0: "no help"},
        change=CriteriaChange.WORDING,
        note="",
        by=cast.owner,
    )
    html = client.post(grade_url(cast, b), {**sent, "criteria_version": "2"}, headers=HTMX).content.decode()
    # Saved, and the panel and every form catch up with the new wording.
    assert (
        "Saved grade 2 for B." in html
        and 'id="criteria-text" hx-swap-oob="true"' in html
        and "no help" in html
    )
    assert 'value="3" class="criteria-version" hx-swap-oob="outerHTML:.criteria-version"' in html
    assert list(
        Grade.objects.order_by("candidate__document__external_id").values_list(
            "criteria_version__number", flat=True
        )
    ) == [2, 3]
    # A version never published is bad input.
    assert client.post(grade_url(cast, b), {**sent, "criteria_version": "9"}).status_code == 400


def test_without_javascript_a_saved_grade_redirects_back_to_the_row(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    response = as_user(client, cast.editor).post(grade_url(cast, a), {"grade": "3", "document_version": "1"})
    assert response.status_code == 302
    assert response["Location"].endswith(f"/grade/?cand={a.pk}#cand-{a.pk}")
    page = client.get(response["Location"])
    assert "Saved grade 3 for A." in page.content.decode()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Choose a grade from 0 to 3."),
        ({"grade": "4"}, "“4” is not a grade: choose 0, 1, 2 or 3."),
        ({"grade": "two"}, "“two” is not a grade"),
    ],
)
def test_an_invalid_grade_is_explained_in_the_row_with_status_200(
    cast: Cast, client: Client, data: dict, message: str
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    response = as_user(client, cast.editor).post(grade_url(cast, a), data, headers=HTMX)
    assert response.status_code == 200  # htmx 2 does not swap 4xx: the error must arrive as 200
    html = response.content.decode()
    assert 'data-state="failed"' in html and message in html
    assert not Grade.objects.exists()


def test_saving_needs_post_and_membership(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    # A GET saves nothing: it goes to the grading page (see the no-JavaScript refusal test).
    assert as_user(client, cast.editor).get(grade_url(cast, a)).status_code == 302
    assert as_user(client, cast.outsider).post(grade_url(cast, a), {"grade": "1"}).status_code == 404
    assert not Grade.objects.exists()


def test_a_candidate_of_another_set_is_not_found_through_this_set(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A", set_name="One")
    (b,) = make_pairs(cast.alpha, "B", set_name="Two")
    response = as_user(client, cast.editor).post(
        url("grade_save", cast, set_id=a.grading_set_id, candidate_id=b.pk), {"grade": "1"}
    )
    assert response.status_code == 404


# --- grade_undo --------------------------------------------------------------------------------


def test_undo_with_htmx_retargets_the_row_it_changed(cast: Cast, client: Client) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    grade_submit(candidate=b, editor=cast.editor, value=2)
    undo = url("grade_undo", cast, set_id=a.grading_set_id, query_id=a.query_id)
    response = as_user(client, cast.editor).post(undo, headers=HTMX)
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#cand-{b.pk}" and response["HX-Reswap"] == "outerHTML"
    assert "Undone: B is ungraded again." in response.content.decode()
    assert not Grade.objects.filter(candidate=b).exists()
    assert GradeHistory.objects.filter(candidate=b, kind="undone").exists()


def test_undoing_a_first_grade_keeps_its_reason_in_the_box_unsaved(cast: Cast, client: Client) -> None:
    """After `u` the reason just typed stays, so it need not be typed again."""
    (a,) = make_pairs(cast.alpha, "A")
    undo = url("grade_undo", cast, set_id=a.grading_set_id, query_id=a.query_id)
    as_user(client, cast.editor)
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="Misses the deadline.")
    text = html_module.unescape(client.post(undo, headers=HTMX).content.decode())
    assert "Undone: A is ungraded again. Your reason stays in its box, not saved" in text
    assert re.search(r'<textarea[^>]*class="reason"[^>]*>Misses the deadline\.</textarea>', text)
    assert not Grade.objects.filter(candidate=a).exists()  # nothing stored until a grade key
    # Without a reason there is nothing to keep, and nothing said about it.
    grade_submit(candidate=a, editor=cast.editor, value=2)
    text = html_module.unescape(client.post(undo, headers=HTMX).content.decode())
    assert "Undone: A is ungraded again." in text and "stays in its box" not in text


def test_undoing_a_reason_alone_says_so(cast: Cast, client: Client) -> None:
    """Undoing a reason-only edit names the reason, not only "A is back to grade 1"."""
    (a,) = make_pairs(cast.alpha, "A")
    undo = url("grade_undo", cast, set_id=a.grading_set_id, query_id=a.query_id)
    as_user(client, cast.editor)
    grade_submit(candidate=a, editor=cast.editor, value=1)
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="Misses the deadline.")
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="Misses the deadline and the fee.")
    text = html_module.unescape(client.post(undo, headers=HTMX).content.decode())
    assert "Undone: the reason for A is back to what it was; the grade stays 1." in text
    assert Grade.objects.get(candidate=a).reason == "Misses the deadline."
    text = html_module.unescape(client.post(undo, headers=HTMX).content.decode())
    assert "Undone: the reason you wrote for A is removed; the grade stays 1." in text
    grade_submit(candidate=a, editor=cast.editor, value=3)
    assert "Undone: A is back to grade 1." in html_module.unescape(
        client.post(undo, headers=HTMX).content.decode()
    )


def test_undo_with_nothing_to_undo_says_so_without_swapping(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    undo = url("grade_undo", cast, set_id=a.grading_set_id, query_id=a.query_id)
    response = as_user(client, cast.editor).post(undo, headers=HTMX)
    assert response.status_code == 200 and response["HX-Reswap"] == "none"
    assert "There is nothing of yours to undo for this query." in response.content.decode()
    full = client.post(undo)
    assert full.status_code == 302
    assert client.get(undo).status_code == 302  # undoes nothing: to the grading page (post_from)


# --- the queue ---------------------------------------------------------------------------------


def test_next_redirects_to_the_grading_page_or_back_to_the_queue_when_done(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    as_user(client, cast.editor)
    response = client.post(url("grading_next", cast))
    assert response["Location"] == url("grade_page", cast, set_id=a.grading_set_id, query_id=a.query_id)
    grade_submit(candidate=a, editor=cast.editor, value=1)
    response = client.post(url("grading_next", cast), follow=True)
    assert "Nothing is waiting for your grade right now." in response.content.decode()
    assert client.post(url("grading_next", cast), {"set_id": "abc"}, follow=True).status_code == 200
    assert client.get(url("grading_next", cast)).status_code == 405


def test_next_never_opens_a_set_of_another_project(cast: Cast, client: Client) -> None:
    (z,) = make_pairs(cast.beta, "Z")
    response = as_user(client, cast.editor).post(
        url("grading_next", cast), {"set_id": z.grading_set_id}, follow=True
    )
    assert f"No grading set “{z.grading_set_id}” in this project." in response.content.decode()


@pytest.mark.parametrize("value", ["²", "١", "１", "99999999999999999999", "-1", "abc"])
def test_next_with_a_set_id_that_is_no_id_says_so(cast: Cast, client: Client, value: str) -> None:
    # "²".isdigit() is True and int("²") raises: a refusal, not a 500.
    response = as_user(client, cast.editor).post(url("grading_next", cast), {"set_id": value}, follow=True)
    assert f"No grading set “{value}” in this project." in response.content.decode()


# --- grading sets and candidates ---------------------------------------------------------------


def test_an_owner_creates_a_grading_set_and_an_editor_cannot(cast: Cast, client: Client) -> None:
    data = {"name": "Spring", "description": "", "required_grades": "3"}
    assert as_user(client, cast.editor).post(url("grading_set_create", cast), data).status_code == 403
    response = as_user(client, cast.owner).post(url("grading_set_create", cast), data)
    grading_set = GradingSet.objects.get(project=cast.alpha, name="Spring")
    assert response["Location"] == url("grading_set_detail", cast, set_id=grading_set.pk)
    assert (grading_set.required_grades, grading_set.created_by) == (3, cast.owner)
    again = client.post(url("grading_set_create", cast), {**data, "required_grades": "0"}, headers=HTMX)
    html = again.content.decode()
    assert again.status_code == 200 and 'id="set-form"' in html and "<html" not in html
    assert "already has a grading set called “Spring”" in html
    assert client.get(url("grading_set_create", cast))["Location"] == url("grading_set_list", cast)
    ok = client.post(url("grading_set_create", cast), {**data, "name": "Summer"}, headers=HTMX)
    assert ok.status_code == 200 and ok["HX-Redirect"].endswith("/")


def test_an_owner_adds_candidates_by_hand_and_unknown_ids_are_listed(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    Document.upsert(project=cast.alpha, external_id="B", title="", body="b")
    add = url("candidate_add", cast, set_id=a.grading_set_id)
    assert as_user(client, cast.reviewer).post(add, {"query_id": "q1", "doc_ids": "B"}).status_code == 403
    as_user(client, cast.owner)
    response = client.post(add, {"query_id": "q1", "doc_ids": "B, NOPE\nMISSING"}, headers=HTMX)
    assert response.status_code == 200 and 'id="candidate-add"' in response.content.decode()
    assert "No document with these IDs in this project: NOPE, MISSING." in response.content.decode()
    assert "a space is part of an ID" not in response.content.decode()
    # Spaces do not separate IDs (an ID may hold one): the refusal says how to list them.
    response = client.post(add, {"query_id": "q1", "doc_ids": "A B"}, headers=HTMX)
    assert (
        "No document with these IDs in this project: A B. Separate IDs with commas or line breaks: a space "
        "is part of an ID." in response.content.decode()
    )
    # Full-width commas and the enumeration comma separate too, as in pasted runs.
    Document.upsert(project=cast.alpha, external_id="C", title="", body="c")
    Document.upsert(project=cast.alpha, external_id="D", title="", body="d")
    response = client.post(add, {"query_id": "q1", "doc_ids": "C，D、NOPE"}, headers=HTMX)
    assert "No document with these IDs in this project: NOPE." in response.content.decode()
    # An invisible character pasted along is shown, not hidden in a look-alike "C".
    response = client.post(add, {"query_id": "q1\u200b", "doc_ids": "C\u200b"}, headers=HTMX)
    text = html_module.unescape(response.content.decode())
    assert "No document with these IDs in this project: C\\u200b." in text
    assert "No query with ID “q1\\u200b” in this project." in text
    response = client.post(add, {"query_id": "q1", "doc_ids": "A\nB"})
    assert response.status_code == 302
    assert set(Candidate.objects.values_list("document__external_id", "source")) == {
        ("A", "manual"),
        ("B", "manual"),
    }
    assert Candidate.objects.get(document__external_id="B").added_by == cast.owner


def test_an_owner_removes_an_ungraded_candidate_but_never_a_graded_one(cast: Cast, client: Client) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    as_user(client, cast.owner)
    for candidate in (a, b):
        client.post(url("candidate_remove", cast, set_id=candidate.grading_set_id, candidate_id=candidate.pk))
    assert list(Candidate.objects.values_list("document__external_id", flat=True)) == ["A"]
    assert (
        as_user(client, cast.editor)
        .post(url("candidate_remove", cast, set_id=a.grading_set_id, candidate_id=a.pk))
        .status_code
        == 403
    )
    # A second tab removing B again: 404 that says so and links back, not Django's bare 404.
    again = as_user(client, cast.owner).post(
        url("candidate_remove", cast, set_id=b.grading_set_id, candidate_id=b.pk)
    )
    assert again.status_code == 404
    assert "This pair is no longer in the set: removed already." in again.content.decode()
    assert url("grading_set_detail", cast, set_id=b.grading_set_id) in again.content.decode()


# --- criteria ----------------------------------------------------------------------------------


def criteria_data(**overrides: str) -> dict[str, str]:
    return {
        "level_3": "All three conditions.",
        "level_2": "One missing.",
        "level_1": "Background.",
        "level_0": "Nothing.",
        "change": "meaning",
        "note": "stricter",
        "based_on": "1",
        **overrides,
    }


def test_a_publish_that_does_not_say_its_base_version_is_refused(cast: Cast, client: Client) -> None:
    """Without based_on (a hand-made post), a publish would go over a newer version with no merge."""
    as_user(client, cast.owner)
    data = criteria_data()
    del data["based_on"]
    response = client.post(url("criteria_publish", cast), data)
    assert response.status_code == 200
    assert "did not say which version it was edited from" in response.content.decode()
    assert CriteriaVersion.objects.filter(project=cast.alpha).count() == 1


def test_an_owner_publishes_criteria_and_others_only_read_them(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    assert (
        as_user(client, cast.reviewer).post(url("criteria_publish", cast), criteria_data()).status_code == 403
    )
    page = client.get(url("criteria", cast)).content.decode()
    assert "Answers the question directly" in page and "Publish a new version" not in page
    response = as_user(client, cast.owner).post(url("criteria_publish", cast), criteria_data(), follow=True)
    html = response.content.decode()
    assert "Criteria version 2 is published." in html
    assert "Grades in open grading sets made under older criteria, now flagged for re-checking: 1." in html
    assert CriteriaVersion.objects.current_for(cast.alpha).level_3 == "All three conditions."
    assert Grade.objects.get().stale


def test_criteria_publishing_refuses_an_unchanged_text_or_a_missing_kind_in_the_fragment(
    cast: Cast, client: Client
) -> None:
    current = CriteriaVersion.objects.current_for(cast.alpha)
    unchanged = {f"level_{n}": text for n, text in current.levels()} | {"change": "wording", "note": ""}
    as_user(client, cast.owner)
    response = client.post(url("criteria_publish", cast), unchanged, headers=HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and 'id="criteria-form"' in html and "<html" not in html
    assert "Nothing changed" in html
    response = client.post(url("criteria_publish", cast), criteria_data(change=""), headers=HTMX)
    assert "Say whether this edit changes the meaning or only the wording." in response.content.decode()
    assert client.get(url("criteria_publish", cast))["Location"] == url("criteria", cast)
    assert CriteriaVersion.objects.filter(project=cast.alpha).count() == 1


# --- imports -----------------------------------------------------------------------------------


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode())


def test_an_owner_imports_documents_and_sees_the_summary_in_the_fragment(cast: Cast, client: Client) -> None:
    as_user(client, cast.owner)
    response = client.post(
        url("import_documents", cast), {"file": upload("d.csv", "doc_id,body\nA,a\nB,b\n")}, headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'id="import-documents"' in html and "<html" not in html
    assert "Created 2, updated 0, unchanged 0." in html
    response = client.post(
        url("import_documents", cast), {"file": upload("d.csv", "doc_id,body\nA,a2\nB,b\n")}
    )
    assert response.status_code == 302
    assert "created 0, updated 1, unchanged 1" in client.get(response["Location"]).content.decode()


def test_an_import_with_ids_a_trec_file_cannot_hold_is_stored_with_a_warning(
    cast: Cast, client: Client
) -> None:
    """An ID with a space imports, but no TREC run can name it and the qrels export refuses it:
    the import says so at once."""
    as_user(client, cast.owner)
    data = "doc_id,body\nA,a\nQA 10,b\nQA 11,c\n"
    html = client.post(
        url("import_documents", cast), {"file": upload("d.csv", data)}, headers=HTMX
    ).content.decode()
    assert "Created 3, updated 0, unchanged 0." in html
    assert "2 IDs hold a space (the first: “QA 10”, line 3): TREC runs and qrels cannot name them" in html
    response = client.post(
        url("import_queries", cast), {"file": upload("q.csv", "query_id,text\nq 1,t\n")}, follow=True
    )
    assert (
        "1 ID holds a space (“q 1”, line 2): TREC runs and qrels cannot name it" in response.content.decode()
    )
    html = client.post(
        url("import_documents", cast), {"file": upload("d.csv", "doc_id,body\nB,b\n")}, headers=HTMX
    ).content.decode()
    assert "hold a space" not in html and "holds a space" not in html
    err = io.StringIO()
    with NamedTemporaryFile("w", suffix=".csv") as file:
        file.write("doc_id,body\nQA\u00a010,no-break space: one field\nQA 12,d\n")
        file.flush()
        call_command("import_documents", cast.alpha.slug, file.name, stdout=io.StringIO(), stderr=err)
    assert "Warning: 1 ID holds a space (“QA 12”, line 3)" in err.getvalue()


def test_check_only_runs_the_import_stores_nothing_and_says_what_it_would_flag(
    cast: Cast, client: Client
) -> None:
    """A re-import may flag grades for re-checking: the browser can show that first."""
    from annotator.models import DocumentVersion

    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    as_user(client, cast.owner)
    changed = "doc_id,body\nA,changed\nB,new\n"
    before = (Document.objects.count(), DocumentVersion.objects.count())
    html = client.post(
        url("import_documents", cast), {"file": upload("d.csv", changed), "check_only": "1"}, headers=HTMX
    ).content.decode()
    assert "Checked only: nothing was stored." in html
    assert (
        "would create 1, update 1 and leave 0 unchanged; grades in open sets that would need re-checking: 1."
        in html
    )
    assert (Document.objects.count(), DocumentVersion.objects.count()) == before
    assert not Grade.objects.filter(stale=True).exists()
    # Without JavaScript: the same, as the message after the redirect.
    response = client.post(
        url("import_documents", cast), {"file": upload("d.csv", changed), "check_only": "1"}, follow=True
    )
    assert "Documents, checked only: nothing was stored." in response.content.decode()
    assert (Document.objects.count(), DocumentVersion.objects.count()) == before
    # Then the import itself does what the check said.
    html = client.post(
        url("import_documents", cast), {"file": upload("d.csv", changed)}, headers=HTMX
    ).content.decode()
    assert (
        "Created 1, updated 1, unchanged 0." in html
        and "Grades in open sets that now need re-checking: 1." in html
    )
    assert Grade.objects.filter(stale=True).count() == 1


def test_a_bad_upload_lists_every_problem_and_imports_nothing(cast: Cast, client: Client) -> None:
    as_user(client, cast.owner)
    data = '{"doc_id": "A", "body": "fine"}\n{"doc_id": "B"}\nnot json\n'
    response = client.post(url("import_documents", cast), {"file": upload("docs.jsonl", data)})
    html = response.content.decode()
    assert response.status_code == 200 and "Nothing was imported." in html
    assert "Line 2, field “doc_id”" not in html
    assert "Line 2, field “body”, value “”: the required key is missing." in html
    assert "Line 3: not valid JSON" in html
    assert not Document.objects.exists()
    response = client.post(url("import_documents", cast), {"file": upload("docs.txt", "x")})
    assert "is neither .csv, .jsonl nor .ndjson" in response.content.decode()
    # A zip is said to be one, not refused for its name only.
    zipped = SimpleUploadedFile("pool-export.zip", b"PK\x03\x04" + b"\x00" * 40)
    response = client.post(url("import_documents", cast), {"file": zipped})
    assert (
        "Line 1: the file is a zip archive; upload the text file inside it instead."
        in response.content.decode()
    )
    response = client.post(url("import_documents", cast), {})
    assert response.status_code == 200 and "Choose a file to upload." in response.content.decode()


def test_only_owners_import(cast: Cast, client: Client) -> None:
    for name in ("import_documents", "import_queries", "import_candidates"):
        assert as_user(client, cast.reviewer).post(url(name, cast), {}).status_code == 403
        assert as_user(client, cast.owner).get(url(name, cast))["Location"] == url("import_page", cast)
    assert as_user(client, cast.editor).get(url("import_page", cast)).status_code == 403


def test_an_owner_imports_queries(cast: Cast, client: Client) -> None:
    as_user(client, cast.owner)
    response = client.post(
        url("import_queries", cast),
        {"file": upload("q.csv", "query_id,text,information_need\nq1,怎么改电话？,入口\n")},
        headers=HTMX,
    )
    assert "Created 1, updated 0, unchanged 0." in response.content.decode()
    assert Query.objects.get(project=cast.alpha).information_need == "入口"


def test_an_owner_pools_candidates_from_two_runs_to_a_depth(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    for doc in "BCD":
        Document.upsert(project=cast.alpha, external_id=doc, title="", body=doc)
    runs = [
        upload("bm25.trec", "q1 Q0 B 1 9 bm25\nq1 Q0 C 2 8 bm25\nq1 Q0 D 3 7 bm25\n"),
        upload("dense.csv", "query_id,doc_id,rank\nq1,D,1\nq1,B,2\n"),
    ]
    as_user(client, cast.owner)
    response = client.post(
        url("import_candidates", cast),
        {"grading_set": a.grading_set_id, "files": runs, "depth": "1"},
        headers=HTMX,
    )
    assert "Candidates: added 2, already in the set 0." in response.content.decode()
    assert dict(
        Candidate.objects.filter(source="pooled").values_list("document__external_id", "source_detail")
    ) == {"B": "bm25 #1 (k=1)", "D": "dense.csv #1 (k=1)"}
    bad = client.post(
        url("import_candidates", cast),
        {
            "grading_set": a.grading_set_id,
            "files": [upload("x.trec", "q1 Q0 B 1 high bm25\n")],
            "depth": "1",
        },
        headers=HTMX,
    )
    assert (
        "x.trec: Line 1: query “q1”, document “B”: score “high” is not a finite number written with the "
        "digits 0-9" in bad.content.decode()
    )
    (z,) = make_pairs(cast.beta, "Z")
    other = client.post(
        url("import_candidates", cast),
        {
            "grading_set": z.grading_set_id,
            "files": [upload("x.trec", "q1 Q0 B 1 1 bm25\n")],
        },
        headers=HTMX,
    )
    assert (
        "Choose one of this project&#x27;s open grading sets (closed sets take no new pairs)."
        in other.content.decode()
    )


# --- pages -------------------------------------------------------------------------------------


def test_document_list_searches_and_paginates(cast: Cast, client: Client) -> None:
    for i in range(60):
        Document.upsert(
            project=cast.alpha, external_id=f"doc-{i:02d}", title=f"Title {i}", body="phone" if i % 2 else "x"
        )
    as_user(client, cast.editor)
    first = client.get(url("document_list", cast)).content.decode()
    assert (
        "Documents found: 60" in first
        and "Page 1 of 2" in first
        and "doc-49" in first
        and "doc-50" not in first
    )
    found = client.get(url("document_list", cast), {"q": "phone"}, headers=HTMX).content.decode()
    assert "Documents found: 30" in found and "<html" not in found and 'id="document-table"' in found
    assert (
        "No document matches “zzz”." in client.get(url("document_list", cast), {"q": "zzz"}).content.decode()
    )
    # A search longer than the box allows is cut to it, not dropped (which would list all 60).
    long = client.get(url("document_list", cast), {"q": "phone" + " " * 200 + "ignored"}).content.decode()
    assert "Documents found: 30" in long and 'maxlength="200"' in long


def test_document_list_and_grading_page_cost_the_same_queries_for_many_rows(
    cast: Cast, client: Client
) -> None:
    as_user(client, cast.editor)
    small = make_pairs(cast.alpha, "AB", set_name="Small")
    big = make_pairs(cast.alpha, [f"D{i}" for i in range(40)], set_name="Big", query="q2")
    grade_submit(candidate=small[0], editor=cast.editor, value=1)
    grade_submit(candidate=big[0], editor=cast.editor, value=1)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(path: str) -> int:
        with CaptureQueriesContext(connection) as ctx:
            assert client.get(path).status_code == 200
        return len(ctx.captured_queries)

    small_page = url("grade_page", cast, set_id=small[0].grading_set_id, query_id=small[0].query_id)
    big_page = url("grade_page", cast, set_id=big[0].grading_set_id, query_id=big[0].query_id)
    assert count(small_page) == count(big_page)
    few = count(url("document_list", cast))
    for i in range(100):
        Document.upsert(project=cast.alpha, external_id=f"more-{i}", title="", body="b")
    assert count(url("document_list", cast)) == few
    assert count(url("grading_set_detail", cast, set_id=big[0].grading_set_id)) == count(
        url("grading_set_detail", cast, set_id=small[0].grading_set_id)
    )


def test_a_script_in_an_imported_body_is_shown_as_text_never_run(cast: Cast, client: Client) -> None:
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import

    body = 'Hello <script>alert("x")</script> <img src=x onerror=alert(1)>\n\nSecond paragraph'
    documents_import(
        project=cast.alpha,
        records=read_documents(
            json.dumps(
                {"doc_id": "evil", "title": "<b>bold</b>", "body": body, "url": "https://example.com/"}
            ),
            "jsonl",
        ),
    )
    document = Document.objects.get(external_id="evil")
    make_pairs(cast.alpha, ["evil"])
    candidate = Candidate.objects.get(document=document)
    as_user(client, cast.editor)
    for path in (
        url("document_detail", cast, document_id=document.pk),
        url("grade_page", cast, set_id=candidate.grading_set_id, query_id=candidate.query_id),
    ):
        html = client.get(path).content.decode()
        assert "<script>alert" not in html and "<img src=x" not in html and "<b>bold</b>" not in html
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
        assert "<p>Second paragraph</p>" in html


def test_older_document_versions_stay_readable(cast: Cast, client: Client) -> None:
    Document.upsert(project=cast.alpha, external_id="A", title="T", body="first text")
    document, _ = Document.upsert(project=cast.alpha, external_id="A", title="T", body="second text")
    as_user(client, cast.editor)
    page = url("document_detail", cast, document_id=document.pk)
    assert "second text" in client.get(page).content.decode()
    old = client.get(page, {"version": "1"}).content.decode()
    assert "first text" in old and "an older version: the current one is 2" in old
    assert client.get(page, {"version": "7"}).status_code == 404


def test_the_stale_list_shows_my_grades_to_recheck_and_regrading_clears_them(
    cast: Cast, client: Client
) -> None:
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import

    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    documents_import(project=cast.alpha, records=read_documents("doc_id,title,body\nA,T,changed\n", "csv"))
    as_user(client, cast.editor)
    html = client.get(url("stale_list", cast)).content.decode()
    assert "The document changed since you graded it." in html and "(you graded v1; now v2)" in html
    assert "Your grades that need re-checking: 1" in client.get(url("grading_queue", cast)).content.decode()
    client.post(grade_url(cast, a), {"grade": "2", "document_version": "2"})
    assert "Nothing to re-check" in client.get(url("stale_list", cast)).content.decode()


def test_the_stale_list_counts_what_the_editor_can_re_check_apart_from_what_a_reviewer_takes(
    cast: Cast, client: Client
) -> None:
    """The overview's "need re-checking" count matches this page's first table; pairs settled or
    disputed, which the editor cannot re-grade, are listed apart."""
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import

    a, b, c = make_pairs(cast.alpha, "ABC", required=2)
    grade_submit(
        candidate=a, editor=cast.editor, value=2
    )  # waits for a second grade: the editor's to re-check
    for editor in (cast.editor, cast.editor2):
        grade_submit(candidate=b, editor=editor, value=1)  # settled
    grade_submit(candidate=c, editor=cast.editor, value=0)
    grade_submit(candidate=c, editor=cast.editor2, value=3)  # a dispute
    documents_import(
        project=cast.alpha, records=read_documents("doc_id,title,body\nA,T,a2\nB,T,b2\nC,T,c2\n", "csv")
    )
    as_user(client, cast.editor)
    html = client.get(url("stale_list", cast)).content.decode()
    assert "For you to re-check: 1" in html
    assert "Your grades that need re-checking: 1" in client.get(url("grading_queue", cast)).content.decode()
    assert "Settled or in dispute, for a reviewer: 2" in html
    mine, waiting = html.split('id="stale-waiting"')
    assert html.count("#cand-") == 1 and f"#cand-{a.pk}" in mine  # only A links to the grading page
    assert "This pair is settled" in waiting and "This pair is settled" not in mine

    client.post(grade_url(cast, a), {"grade": "2", "document_version": "2"})
    html = client.get(url("stale_list", cast)).content.decode()
    assert "Nothing for you to re-check" in html and "Settled or in dispute, for a reviewer: 2" in html


def test_the_set_page_counts_per_query_pairs_done_and_mine(cast: Cast, client: Client) -> None:
    a, b = make_pairs(cast.alpha, "AB", query="q1", required=2)
    make_pairs(cast.alpha, "C", query="q2")
    grade_submit(candidate=a, editor=cast.editor, value=1)
    grade_submit(candidate=a, editor=cast.editor2, value=1)
    grade_submit(candidate=b, editor=cast.editor2, value=2)
    html = (
        as_user(client, cast.editor)
        .get(url("grading_set_detail", cast, set_id=a.grading_set_id))
        .content.decode()
    )
    rows = re.findall(r'<td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>', html)
    assert rows == [("2", "1", "1"), ("1", "0", "0")]  # q1: 2 pairs, 1 done, 1 mine; q2: 1, 0, 0


def test_the_grading_page_reads_in_chinese(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    as_user(client, cast.editor)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    try:
        html = client.get(
            url("grade_page", cast, set_id=a.grading_set_id, query_id=a.query_id)
        ).content.decode()
    finally:
        translation.activate("en")  # the middleware leaves the request's language active in this thread
    assert "根据正文评分，而不是标题。" in html and "尚未评分。" in html and "键盘快捷键" in html


def test_a_stale_grade_of_a_settled_pair_says_who_rechecks_it_instead_of_linking(
    cast: Cast, client: Client
) -> None:
    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import

    (a,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=a, editor=cast.editor, value=3)
    grade_submit(candidate=a, editor=cast.editor2, value=3)  # unanimous: settled
    documents_import(project=cast.alpha, records=read_documents("doc_id,title,body\nA,T,rewritten\n", "csv"))
    html = as_user(client, cast.editor).get(url("stale_list", cast)).content.decode()
    assert "This pair is settled: a reviewer re-checks its final grade on the new text" in html
    assert f"#cand-{a.pk}" not in html
    # Nothing for the editor to do there, so the counts that send them to the list leave it out.
    for page in ("grading_queue", "project_detail"):
        assert "need re-checking" not in client.get(url(page, cast)).content.decode(), page


# --- a rejected save keeps what the editor typed -----------------------------------------------


def test_the_longest_grading_reason_fits_the_dispute_forms_it_is_carried_into() -> None:
    """A grading reason pre-fills the editor's dispute statement: one limit for every reason."""
    longest = "x" * REASON_MAX_LENGTH
    assert GradeForm({"grade": "2", "reason": longest, "document_version": "1"}).is_valid()
    assert ReasonForm({"reason": longest}).is_valid()
    assert RevisionForm({"grade": "2", "note": longest}).is_valid()
    assert not ReasonForm({"reason": longest + "x"}).is_valid()


TOO_LONG = "The steps are named, but " + "no deadline anywhere. " * 230  # over the REASON_MAX_LENGTH allowed


def test_without_javascript_a_rejected_save_shows_the_page_again_with_the_typed_reason_and_the_error(
    cast: Cast, client: Client
) -> None:
    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="first reading")
    as_user(client, cast.editor)
    response = client.post(grade_url(cast, a), {"grade": "2", "reason": TOO_LONG, "document_version": "1"})
    assert response.status_code == 200  # an invalid form, shown again instead of redirected away
    html = response.content.decode()
    assert "<html" in html and f'id="cand-{b.pk}"' in html  # the whole page, every row
    start = html.index(f'<article id="cand-{a.pk}"')
    row = html[start : html.index("</article>", start)]
    assert 'data-state="failed"' in row
    assert len(TOO_LONG) > REASON_MAX_LENGTH
    assert f"Ensure this value has at most {REASON_MAX_LENGTH} characters" in row
    assert TOO_LONG.strip() in row and "first reading" not in row
    stored = Grade.objects.get(candidate=a, editor=cast.editor)
    assert (stored.grade, stored.reason) == (1, "first reading")
    # That page's URL is the save endpoint: reloading it (or switching language) GETs it, which
    # goes back to the grading page instead of a 405.
    again = client.get(grade_url(cast, a))
    assert again.status_code == 302 and again["Location"].endswith(
        f"/queries/{a.query_id}/grade/?cand={a.pk}#cand-{a.pk}"
    )


def test_with_htmx_a_rejected_save_keeps_the_typed_reason_in_the_row(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=1, reason="first reading")
    response = as_user(client, cast.editor).post(
        grade_url(cast, a), {"grade": "2", "reason": TOO_LONG, "document_version": "1"}, headers=HTMX
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'data-state="failed"' in html and "<html" not in html
    assert TOO_LONG.strip() in html and "first reading" not in html


def test_without_javascript_a_save_refused_because_the_document_changed_keeps_the_typed_reason(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    Document.upsert(project=cast.alpha, external_id="A", title="T", body="rewritten while Ed was reading")
    response = as_user(client, cast.editor).post(
        grade_url(cast, a), {"grade": "3", "reason": "all three conditions", "document_version": "1"}
    )
    assert response.status_code == 409  # the input was fine; the document moved on
    html = response.content.decode()
    assert "you saw version 1, it is now version 2" in html
    assert ">all three conditions</textarea>" in html
    assert not Grade.objects.exists()


# --- the document version a grade was given for ------------------------------------------------


@pytest.mark.parametrize(
    ("version", "message"),
    [
        (None, "The grade came without the version of the document it was given for."),
        ("", "The grade came without the version of the document it was given for."),
        ("v1", "The document version sent with the grade is not a whole number."),
        ("99", "Version 99 of this document does not exist."),
        ("0", "Version 0 of this document does not exist."),
        ("99999999999999999999999", "Version 99999999999999999999999 of this document does not exist."),
    ],
)
def test_a_grade_without_a_real_document_version_is_refused_as_bad_input_and_settles_nothing(
    cast: Cast, client: Client, version: str | None, message: str
) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=a, editor=cast.editor2, value=2)  # Ed's grade would complete the pair
    data = {"grade": "2", "reason": "no deadline"} | (
        {} if version is None else {"document_version": version}
    )
    as_user(client, cast.editor)
    response = client.post(grade_url(cast, a), data)
    html = response.content.decode()
    assert response.status_code == 400
    assert message in html and "Reload the page" in html
    assert "changed while you were reading" not in html
    assert ">no deadline</textarea>" in html
    htmx = client.post(grade_url(cast, a), data, headers=HTMX)  # htmx swaps only 2xx: 200 with the row
    assert htmx.status_code == 200 and 'data-state="failed"' in htmx.content.decode()
    assert message in htmx.content.decode()
    assert not Grade.objects.filter(editor=cast.editor).exists()
    assert not FinalGrade.objects.exists() and not Dispute.objects.exists()


def test_a_post_without_a_grade_is_an_ordinary_invalid_form_even_without_a_version(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    response = as_user(client, cast.editor).post(grade_url(cast, a), {})
    assert response.status_code == 200  # nothing to refuse as tampered: there is no grade in it
    html = response.content.decode()
    assert "Choose a grade from 0 to 3." in html and "The grade came without the version" in html
    assert not Grade.objects.exists()


def test_an_older_document_version_is_still_refused_as_changed_since_read(cast: Cast, client: Client) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    Document.upsert(project=cast.alpha, external_id="A", title="T", body="second text")
    response = as_user(client, cast.editor).post(
        grade_url(cast, a), {"grade": "2", "document_version": "1"}, headers=HTMX
    )
    assert "This document changed while you were reading it (you saw version 1, it is now version 2)" in (
        response.content.decode()
    )
    assert not Grade.objects.exists()


# --- adding a reason is not a change of grade --------------------------------------------------


def test_adding_a_reason_to_a_grade_is_told_as_a_reason_never_as_a_change_from_2_to_2(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    as_user(client, cast.editor)
    client.post(grade_url(cast, a), {"grade": "2", "document_version": "1"}, headers=HTMX)
    client.post(
        grade_url(cast, a), {"grade": "2", "reason": "no deadline", "document_version": "1"}, headers=HTMX
    )
    assert Grade.objects.get(candidate=a).reason == "no deadline"
    html = client.get(url("pair_timeline", cast, candidate_id=a.pk)).content.decode()
    assert "changed the grade" not in html
    assert "ed graded 2." in html and "ed added a reason to the grade 2." in html and "no deadline" in html


# --- accessible names ----------------------------------------------------------------------------


def test_every_grade_button_is_named_by_its_grade_and_described_by_its_criteria_text(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A")
    criteria = dict(CriteriaVersion.objects.current_for(cast.alpha).levels())
    as_user(client, cast.editor)
    page = Page(
        client.get(url("grade_page", cast, set_id=a.grading_set_id, query_id=a.query_id)).content.decode()
    )
    buttons = page.controls("button", name="grade")
    assert [b.attrs["value"] for b in buttons] == ["0", "1", "2", "3"]
    for button in buttons:
        level = int(button.attrs["value"])
        assert page.name(button) == str(level)  # not "2 2": the key hint is for the eyes
        assert page.description(button) == squash(criteria[level])
    # The row sent back after a save points at the same criteria panel, which stays on the page.
    row = Page(
        client.post(
            grade_url(cast, a), {"grade": "1", "document_version": "1"}, headers=HTMX
        ).content.decode()
    )
    described = [b.attrs.get("aria-describedby") for b in row.controls("button", name="grade")]
    assert described == [b.attrs["aria-describedby"] for b in buttons]


def test_a_reason_typed_while_the_pair_went_into_dispute_is_kept_for_the_editor_to_copy(
    cast: Cast, client: Client
) -> None:
    (a,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=a, editor=cast.editor, value=2)
    grade_submit(candidate=a, editor=cast.editor2, value=3)  # a dispute opens while Ed types
    as_user(client, cast.editor)
    data = {"grade": "2", "reason": "It never mentions the deadline.", "document_version": "1"}
    response = client.post(grade_url(cast, a), data)
    assert response.status_code == 409
    for html in (
        response.content.decode(),
        client.post(grade_url(cast, a), data, headers=HTMX).content.decode(),
    ):
        assert "This pair is in dispute: changes go through the dispute page." in html
        assert "The reason you typed (not saved):" in html
        assert "readonly>It never mentions the deadline.</textarea>" in html
    assert Grade.objects.get(candidate=a, editor=cast.editor).reason == ""


def test_an_empty_set_offers_no_next_query_button_and_a_set_with_pairs_does(
    cast: Cast, client: Client
) -> None:
    """On an empty set the button would lead to "nothing is waiting for you"."""
    empty = make_set(cast.alpha, "Empty")
    as_user(client, cast.owner)
    html = client.get(url("grading_set_detail", cast, set_id=empty.pk)).content.decode()
    assert "Grade the next query" not in html and "No candidates yet." in html
    (pair,) = make_pairs(cast.alpha, "A", set_name="Full")
    html = client.get(url("grading_set_detail", cast, set_id=pair.grading_set_id)).content.decode()
    assert "Grade the next query" in html


def test_a_set_with_nothing_left_for_me_offers_no_button_and_says_so_on_its_own_page(
    cast: Cast, client: Client
) -> None:
    """On a set where every pair has this editor's grade the button would lead to "Nothing is
    waiting for your grade right now", while a pair of another set waits."""
    (done,) = make_pairs(cast.alpha, "A", set_name="Done")
    make_pairs(cast.alpha, "B", set_name="Other")
    grade_submit(candidate=done, editor=cast.editor, value=2)
    as_user(client, cast.editor)
    page = url("grading_set_detail", cast, set_id=done.grading_set_id)
    assert "Grade the next query" not in client.get(page).content.decode()
    # A stale page (or a second tab) still posts: the answer is about this set, and the queue,
    # which lists them, offers the set where work waits.
    response = client.post(url("grading_next", cast), {"set_id": done.grading_set_id}, follow=True)
    assert response.redirect_chain[-1][0] == url("grading_queue", cast)
    html = response.content.decode()
    assert "Nothing in Done is waiting for your grade right now. Other sets are: pick one below." in html
    assert "Next in Other" in html
    # With no other set waiting, the answer stays on this set's page.
    grade_submit(candidate=Candidate.objects.get(grading_set__name="Other"), editor=cast.editor, value=1)
    response = client.post(url("grading_next", cast), {"set_id": done.grading_set_id}, follow=True)
    assert response.redirect_chain[-1][0] == page
    assert "Nothing in Done is waiting for your grade right now." in response.content.decode()
    # The other editor still has the pair to grade here.
    as_user(client, cast.editor2)
    assert "Grade the next query" in client.get(page).content.decode()


def test_a_row_locked_by_a_dispute_links_to_it(cast: Cast, client: Client) -> None:
    """A row that says "changes go through the dispute page" links there."""
    from annotator.models import Dispute

    (pair,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=pair, editor=cast.editor, value=3)
    grade_submit(candidate=pair, editor=cast.editor2, value=1)
    dispute = Dispute.objects.get(candidate=pair)
    html = (
        as_user(client, cast.editor)
        .get(url("grade_page", cast, set_id=pair.grading_set_id, query_id=pair.query_id))
        .content.decode()
    )
    assert "In dispute: your grade is locked" in html
    assert reverse("dispute_detail", kwargs={"slug": "alpha", "dispute_id": dispute.pk}) in html


def test_a_row_settled_without_a_dispute_links_to_how_it_was_settled(cast: Cast, client: Client) -> None:
    """A unanimous pair's "Settled" leads to its final grade and provenance."""
    (pair,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=pair, editor=cast.editor, value=2)
    grade_submit(candidate=pair, editor=cast.editor2, value=2)
    page = url("grade_page", cast, set_id=pair.grading_set_id, query_id=pair.query_id)
    html = as_user(client, cast.editor).get(page).content.decode()
    assert "Settled: this pair has its final grade" in html
    timeline = reverse("pair_timeline", kwargs={"slug": "alpha", "candidate_id": pair.pk})
    assert f'<a href="{timeline}">How it was settled</a>' in html
    assert "Final grade 2" in client.get(timeline).content.decode()
    # An editor who did not grade it is not offered the link (the row says it needs no more grades).
    third = get_user_model().objects.create_user("editor-3", password="x")
    Membership.objects.create(project=cast.alpha, user=third, role=Role.EDITOR)
    assert timeline not in as_user(client, third).get(page).content.decode()


def test_a_closed_sets_queries_are_viewed_not_graded(cast: Cast, client: Client) -> None:
    (pair,) = make_pairs(cast.alpha, "A", set_name="Done")
    as_user(client, cast.editor)
    page = url("grading_set_detail", cast, set_id=pair.grading_set_id)
    assert ">Grade</a>" in client.get(page).content.decode()
    GradingSet.objects.filter(pk=pair.grading_set_id).update(is_open=False)
    html = client.get(page).content.decode()
    assert ">View</a>" in html and ">Grade</a>" not in html


def test_a_grade_post_costs_the_same_statements_whatever_the_size_of_its_query(
    cast: Cast, client: Client
) -> None:
    """A first grade that leaves its pair short of grades (the usual save): the row is shown from
    the objects the save read under its lock, and no count grows with the query or the set."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    small = make_pairs(cast.alpha, "AB", set_name="Small")
    big = make_pairs(cast.alpha, [f"D{i}" for i in range(40)], set_name="Big", query="q2")
    for pair in big[1:]:
        grade_submit(candidate=pair, editor=cast.editor2, value=1)
    as_user(client, cast.editor)

    def statements(pair: Candidate) -> int:
        # What the page's form sends: the versions it showed, the query's fingerprint, the row's number.
        sent = {
            "grade": "2",
            "document_version": "1",
            "criteria_version": "1",
            "query_seen": pair.query.fingerprint,
            "position": "1",
        }
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(grade_url(cast, pair), sent, headers=HTMX)
        assert '"state": "saved"' in response.headers["HX-Trigger-After-Settle"]
        return len(ctx.captured_queries)

    # Session, user and membership (3); the set locked, the pair locked and read with the checks,
    # the query locked and read, the criteria, the editor's grade (5); the grade and its history
    # (2); the progress bars (1): 11. A test's transaction adds a savepoint and its release around
    # the save; SQLite takes no lock on the set (it serialises writers) but adds a savepoint and
    # its release around the insert (it cannot lock the pair, so a twin may win the insert).
    on_sqlite = connection.vendor == "sqlite"
    assert statements(small[0]) == statements(big[0]) == 13 + on_sqlite
