"""A query with more pairs than one grading page holds is graded page by page.

A query of thousands of pairs on one page would weigh tens of megabytes. Each page holds
GRADE_PAGE_SIZE pairs, numbered on across pages in the editor's own (blind) order; links to one
pair open the page holding it, and a plain visit opens the first page with something left for
the editor.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotator.grading.grade_views import GRADE_PAGE_SIZE
from annotator.grading.queue import shuffled_for
from annotator.grading.services import grade_submit
from annotator.models import Candidate, Grade
from tests.conftest import Cast
from tests.factories import make_pairs

HTMX = {"HX-Request": "true"}
PAIRS = 2 * GRADE_PAGE_SIZE + 20  # three pages, the last one short


@pytest.fixture
def pairs(cast: Cast) -> list[Candidate]:
    """The query's pairs in Ed's order (cast.editor), as his pages show them."""
    made = make_pairs(cast.alpha, [f"d{i:03}" for i in range(PAIRS)])
    by_pk = {c.pk: c for c in made}
    return [by_pk[pk] for pk in shuffled_for(cast.editor, by_pk)]


def page_url(cast: Cast, candidate: Candidate, query: str = "") -> str:
    url = reverse(
        "grade_page",
        kwargs={"slug": cast.alpha.slug, "set_id": candidate.grading_set_id, "query_id": candidate.query_id},
    )
    return f"{url}{query}"


def shown(html: str) -> list[tuple[int, int]]:
    """(position, candidate ID) of every row on the page, in page order."""
    rows = re.findall(
        r'<article id="cand-(\d+)".*?<span class="position" aria-hidden="true">(\d+)</span>', html, re.S
    )
    return [(int(position), int(pk)) for pk, position in rows]


def get(client: Client, cast: Cast, url: str) -> str:
    client.force_login(cast.editor)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_pages_hold_every_pair_once_in_the_editors_order_numbered_on(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    seen: list[tuple[int, int]] = []
    for number in (1, 2, 3):
        html = get(client, cast, page_url(cast, pairs[0], f"?page={number}"))
        rows = shown(html)
        assert len(rows) == (GRADE_PAGE_SIZE if number < 3 else PAIRS - 2 * GRADE_PAGE_SIZE)
        # Only this page's documents are in it: the size of a page does not grow with its query.
        assert html.count('class="doc-body"') == len(rows)
        first = (number - 1) * GRADE_PAGE_SIZE + 1
        assert f"Documents {first}–{first + len(rows) - 1} of {PAIRS}" in html
        assert f"Page {number} of 3" in html
        seen += rows
    assert seen == [(i, c.pk) for i, c in enumerate(pairs, start=1)]


def test_a_query_that_fits_on_one_page_shows_no_pager(cast: Cast, client: Client) -> None:
    (a, *_rest) = make_pairs(cast.alpha, "ABC")
    html = get(client, cast, page_url(cast, a))
    assert len(shown(html)) == 3
    assert 'class="pager"' not in html and "Documents 1–" not in html


# annotator.web.paging: not a number or below 1, the first page; past the end, the last one.
@pytest.mark.parametrize(("asked", "expected"), [("abc", 1), ("", 1), ("0", 1), ("-2", 1), ("999", 3)])
def test_any_page_value_gets_a_page(
    cast: Cast, client: Client, pairs: list[Candidate], asked: str, expected: int
) -> None:
    html = get(client, cast, page_url(cast, pairs[0], f"?page={asked}"))
    assert f"Page {expected} of 3" in html


def test_a_link_to_one_pair_opens_the_page_that_holds_it(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    target = pairs[2 * GRADE_PAGE_SIZE + 5]
    html = get(client, cast, page_url(cast, target, f"?cand={target.pk}"))
    assert "Page 3 of 3" in html and (2 * GRADE_PAGE_SIZE + 6, target.pk) in shown(html)
    # A pair of another query, or no ID at all, falls back to the usual page.
    (other,) = make_pairs(cast.alpha, ["elsewhere"], query="q2")
    for junk in ("abc", "99999999", str(other.pk)):
        assert "Page 1 of 3" in get(client, cast, page_url(cast, target, f"?cand={junk}"))


def test_a_plain_visit_opens_the_first_page_with_something_left_to_grade(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    for candidate in pairs[: GRADE_PAGE_SIZE + 3]:
        grade_submit(
            candidate=candidate,
            editor=cast.editor,
            value=2,
            reason="",
            document_version=1,
            criteria_version=1,
        )
    html = get(client, cast, page_url(cast, pairs[0]))
    assert "Page 2 of 3" in html
    # The first open pair is on that page, and the page before it has none left for Ed.
    assert (GRADE_PAGE_SIZE + 4, pairs[GRADE_PAGE_SIZE + 3].pk) in shown(html)
    # Another editor still has everything to do: page 1.
    client.force_login(cast.editor2)
    assert "Page 1 of 3" in client.get(page_url(cast, pairs[0])).content.decode()


def test_a_grade_to_re_check_counts_as_something_left(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    for candidate in pairs:
        grade_submit(
            candidate=candidate,
            editor=cast.editor,
            value=2,
            reason="",
            document_version=1,
            criteria_version=1,
        )
    assert "Page 1 of 3" in get(client, cast, page_url(cast, pairs[0]))  # nothing left: the first page
    stale = pairs[GRADE_PAGE_SIZE + 1]
    Grade.objects.filter(candidate=stale, editor=cast.editor).update(stale=True, stale_reason="document")
    assert "Page 2 of 3" in get(client, cast, page_url(cast, pairs[0]))


def test_a_saved_row_keeps_its_number_and_a_save_without_javascript_returns_to_its_page(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    target = pairs[GRADE_PAGE_SIZE + 7]
    save = reverse(
        "grade_save",
        kwargs={"slug": cast.alpha.slug, "set_id": target.grading_set_id, "candidate_id": target.pk},
    )
    client.force_login(cast.editor)
    row = client.post(save, {"grade": "1", "document_version": "1"}, headers=HTMX).content.decode()
    assert shown(row) == [(GRADE_PAGE_SIZE + 8, target.pk)]
    redirect = client.post(save, {"grade": "2", "document_version": "1"})
    assert redirect.status_code == 302
    assert "Page 2 of 3" in client.get(redirect["Location"]).content.decode()
    # A refused save without JavaScript renders the page that holds the row, marked failed; its
    # pager leads to the grading page's pages, not to the save's URL, where "Previous" stays put.
    refused = client.post(save, {"grade": "3", "document_version": "99"})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert "Page 2 of 3" in html and 'data-state="failed"' in html
    assert f'<a href="{page_url(cast, target)}?page=1" rel="prev">' in html
    assert f'<a href="{page_url(cast, target)}?page=3" rel="next">' in html


def test_the_link_after_a_finished_page_skips_pages_with_nothing_left(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    """ "The next page has more" leads to a page with something left, not one they finished."""
    for candidate in pairs[GRADE_PAGE_SIZE : 2 * GRADE_PAGE_SIZE]:  # all of page 2
        grade_submit(
            candidate=candidate,
            editor=cast.editor,
            value=1,
            reason="",
            document_version=1,
            criteria_version=1,
        )
    html = get(client, cast, page_url(cast, pairs[0], "?page=1"))
    assert 'id="next-work-page" href="' in html and "?page=3" in html.split('id="next-work-page"')[1][:200]
    assert "Page 3 of this query has more for you" in html
    # Nothing left after page 2 once page 3 is done too: no such link, and no such sentence.
    for candidate in pairs[2 * GRADE_PAGE_SIZE :]:
        grade_submit(
            candidate=candidate,
            editor=cast.editor,
            value=1,
            reason="",
            document_version=1,
            criteria_version=1,
        )
    html = get(client, cast, page_url(cast, pairs[0], "?page=1"))
    assert 'id="next-work-page"' not in html and "has more for you" not in html


def test_undo_swaps_the_row_on_its_page_and_opens_the_page_of_a_row_elsewhere(
    cast: Cast, client: Client, pairs: list[Candidate]
) -> None:
    target = pairs[2 * GRADE_PAGE_SIZE + 1]  # on page 3
    grade_submit(
        candidate=target, editor=cast.editor, value=3, reason="", document_version=1, criteria_version=1
    )
    undo = reverse(
        "grade_undo",
        kwargs={"slug": cast.alpha.slug, "set_id": target.grading_set_id, "query_id": target.query_id},
    )
    client.force_login(cast.editor)
    here = client.post(undo, {"page": "3"}, headers=HTMX)
    assert here.status_code == 200 and "HX-Redirect" not in here
    assert here["HX-Retarget"] == f"#cand-{target.pk}"
    assert not Grade.objects.filter(candidate=target).exists()

    grade_submit(
        candidate=target, editor=cast.editor, value=3, reason="", document_version=1, criteria_version=1
    )
    elsewhere = client.post(undo, {"page": "1"}, headers=HTMX)
    assert elsewhere["HX-Redirect"].endswith(f"?cand={target.pk}#cand-{target.pk}")
    assert not Grade.objects.filter(candidate=target).exists()
    landing = client.get(elsewhere["HX-Redirect"]).content.decode()
    assert "Page 3 of 3" in landing and "is ungraded again" in landing
    # (No promise that the reason stays in its box: the row was not swapped in place.)
    assert "stays in its box" not in landing
