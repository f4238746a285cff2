"""The one pager (`{% pager %}`, templates/_pager.html) and the pages that use it."""

from __future__ import annotations

import re

import pytest
from django.core.paginator import Paginator
from django.template import engines
from django.test import Client, RequestFactory
from django.urls import reverse

from annotator.disputes import agreement_views
from annotator.grading import views as grading_views
from annotator.models import GradingSet
from tests.conftest import Cast
from tests.factories import make_pairs

HTMX = {"HX-Request": "true"}


def render_pager(query: str, page_number: int, arguments: str = "") -> str:
    request = RequestFactory().get("/list/" + query)
    page = Paginator(range(10), 2).get_page(page_number)
    template = engines["django"].from_string("{% load pagination %}{% pager page " + arguments + " %}")
    return template.render({"page": page}, request)


def links(html: str) -> dict[str, str]:
    return {
        rel: href.replace("&amp;", "&") for href, rel in re.findall(r'<a href="([^"]+)" rel="(\w+)"', html)
    }


def test_paging_changes_only_its_own_parameter_and_keeps_filters_and_the_other_tables_page() -> None:
    html = render_pager("?status=open&cpage=3&page=2", 2)
    assert links(html) == {"prev": "?status=open&cpage=3&page=1", "next": "?status=open&cpage=3&page=3"}
    assert "Page 2 of 5" in html and "hx-get" not in html  # no target: plain links

    other = render_pager("?page=4&q=%E6%94%B9", 3, 'param="cpage" fragment="candidates"')
    assert links(other) == {
        "prev": "?page=4&q=%E6%94%B9&cpage=2#candidates",
        "next": "?page=4&q=%E6%94%B9&cpage=4#candidates",
    }


def test_with_a_target_htmx_swaps_that_element_and_puts_the_link_in_the_address_bar() -> None:
    html = render_pager("?page=1", 1, '"#run-table"')
    assert 'hx-get="?page=2" hx-target="#run-table" hx-swap="outerHTML" hx-push-url="true"' in html
    assert 'rel="prev"' not in html  # first page: no previous link
    one_page = (
        engines["django"]
        .from_string("{% load pagination %}{% pager page %}")
        .render({"page": Paginator(range(2), 5).get_page(1)}, RequestFactory().get("/"))
    )
    assert "<nav" not in one_page  # a single page needs no pager


def test_the_agreement_index_pages_with_htmx_by_swapping_its_table_only(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agreement_views, "PER_PAGE", 2)
    for name in ("A set", "B set", "C set"):
        GradingSet.objects.create(project=cast.alpha, name=name, created_by=cast.owner)
    client.force_login(cast.reviewer)
    address = reverse("agreement_index", kwargs={"slug": cast.alpha.slug})
    first = client.get(address).content.decode()
    assert 'hx-get="?page=2" hx-target="#agreement-table"' in first and "<header" in first
    second = client.get(address + "?page=2", headers=HTMX).content.decode()
    # Before, the link targeted <main> with the whole page as the answer: a second header inside it.
    assert "<header" not in second and "<html" not in second
    assert (
        second.lstrip().startswith('<div id="agreement-table">')
        and "C set" in second
        and "A set" not in second
    )


def test_the_set_pages_candidate_list_pages_with_its_own_parameter(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grading_views, "PAGE_SIZE", 2)
    (candidate, *_) = make_pairs(cast.alpha, "ABCDE")
    client.force_login(cast.owner)
    address = reverse(
        "grading_set_detail", kwargs={"slug": cast.alpha.slug, "set_id": candidate.grading_set_id}
    )
    html = client.get(address + "?cpage=2").content.decode()
    # Before, the candidates' "Next" link set `page` (the queries' table) and never left page 1.
    assert 'href="?cpage=3#candidates-heading"' in html
    assert "Page 2 of 3" in html


@pytest.mark.parametrize(
    ("asked", "shown"), [("0", 1), ("-1", 1), ("abc", 1), ("2.5", 1), ("999999", 3), ("2", 2), ("", 1)]
)
def test_a_page_number_that_names_no_page_shows_the_nearest_page_and_says_so(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch, asked: str, shown: int
) -> None:
    from annotator.documents import views as document_views
    from tests.factories import make_document

    monkeypatch.setattr(document_views, "PAGE_SIZE", 2)
    for name in "ABCDE":
        make_document(cast.alpha, name)
    client.force_login(cast.editor)
    html = client.get(
        reverse("document_list", kwargs={"slug": cast.alpha.slug}), {"page": asked}
    ).content.decode()
    assert f"Page {shown} of 3" in html
    # Django's own Paginator shows the *last* page for 0 and -1, without a word.
    note = f"There is no page “{asked}”: this is page {shown}."
    assert (note in html) == (asked not in ("2", "")), html
