"""One-click decisions on the dispute pages: an editor's "Keep my N" / "Change to M", a reviewer's
"Adopt Editor N's grade", each a plain form post with a shortcut key."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotator.disputes.services import dispute_give_reason
from annotator.models import Dispute, DisputeStatus, FinalGrade, FinalSource
from tests.annotator.grading.accessible import Page
from tests.conftest import Cast
from tests.factories import disputed_pair, in_review

pytestmark = pytest.mark.django_db


def url(name: str, project: str = "alpha", **kwargs: int) -> str:
    return reverse(name, kwargs={"slug": project, **kwargs})


def revealed(cast: Cast, grades: tuple[int, int] = (2, 0)) -> Dispute:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, grades)
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="Covers the request only.")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Off topic.")
    dispute.refresh_from_db()
    assert dispute.status == DisputeStatus.REVEALED
    return dispute


def test_an_editor_keeps_their_grade_with_one_button_and_its_key(cast: Cast, client: Client) -> None:
    dispute = revealed(cast)
    client.force_login(cast.editor)
    page = Page(client.get(url("dispute_detail", dispute_id=dispute.pk)).content.decode())
    keep = page.controls("button", name="grade", value="2")[0]
    assert page.name(keep) == "Keep my 2 k"
    assert keep.attrs["data-shortcut"] == "k 2"
    assert not page.controls("input", type="radio", name="grade")  # no re-picking from radios
    response = client.post(url("dispute_revision", dispute_id=dispute.pk), {"grade": "2"}, follow=True)
    assert "You kept your grade 2." in response.content.decode()
    mine = dispute.statements.get(editor=cast.editor)
    assert mine.has_responded and not mine.changed_grade


def test_an_editor_changes_their_grade_with_one_button_and_a_note(cast: Cast, client: Client) -> None:
    dispute = revealed(cast)
    client.force_login(cast.editor)
    client.post(url("dispute_revision", dispute_id=dispute.pk), {"grade": "1", "note": "Too generous."})
    mine = dispute.statements.get(editor=cast.editor)
    assert (mine.revised_grade, mine.revision_note) == (1, "Too generous.")


def test_a_reviewer_adopts_an_editors_grade_in_one_click_without_a_note(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 0))
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk)).content.decode()
    page = Page(html)
    adopt = page.controls("button", name="grade")
    assert [(page.name(b), b.attrs["data-shortcut"]) for b in adopt] == [
        ("Adopt ed's grade (1) a", "a"),
        ("Adopt eve's grade (0) b", "b"),
    ]
    assert "Set another grade (needs a note)" in html
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "0"})
    assert response.status_code == 302
    final = FinalGrade.objects.get(candidate=dispute.candidate)
    # Adopted, not overridden: an editor's grade, decided by the reviewer, no note needed.
    assert (final.grade, final.source, final.decided_by, final.note) == (
        0,
        FinalSource.ADJUDICATED,
        cast.reviewer,
        "",
    )
    assert final.grade in dispute.grades_on_record()
    dispute.refresh_from_db()
    assert dispute.status == DisputeStatus.SETTLED


def test_the_adopt_buttons_keep_the_names_hidden_when_the_reviewer_hid_them(
    cast: Cast, client: Client
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 0))
    client.force_login(cast.reviewer)
    html = client.get(url("dispute_review", dispute_id=dispute.pk) + "?names=hide").content.decode()
    page = Page(html)
    assert [page.name(b) for b in page.controls("button", name="grade")] == [
        "Adopt Editor 1's grade (1) a",
        "Adopt Editor 2's grade (0) b",
    ]
    adopt_form = html[html.index('id="adopt-form"') : html.index("</form>", html.index('id="adopt-form"'))]
    assert "eve" not in adopt_form and "ed's" not in adopt_form


def test_a_grade_no_editor_gave_still_needs_a_note(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 0))
    client.force_login(cast.reviewer)
    response = client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "3"})
    assert response.status_code == 200 and "write a note" in response.content.decode()
    assert '<details class="settle-other" open>' in response.content.decode()
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_an_editor_cannot_adopt_and_another_projects_owner_gets_404(cast: Cast, client: Client) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 0))
    client.force_login(cast.editor)
    assert client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "1"}).status_code == 403
    client.force_login(cast.outsider)  # owner of Beta only
    assert client.post(url("dispute_review", dispute_id=dispute.pk), {"grade": "1"}).status_code == 404
    assert (
        client.post(url("dispute_review", "beta", dispute_id=dispute.pk), {"grade": "1"}).status_code == 404
    )
    assert (
        client.post(url("dispute_revision", "beta", dispute_id=dispute.pk), {"grade": "1"}).status_code == 404
    )
    assert not FinalGrade.objects.filter(candidate=dispute.candidate).exists()


def test_another_editor_cannot_answer_for_the_pairs_editor(cast: Cast, client: Client) -> None:
    dispute = revealed(cast)
    client.force_login(cast.reviewer)  # not one of its editors
    client.post(url("dispute_revision", dispute_id=dispute.pk), {"grade": "2"})
    assert not dispute.statements.filter(revised_at__isnull=False).exists()
