"""Every link a demo user can see works for that user, in both languages.

A walk from the home page over the demo project, as each demo user: every same-site `<a href>`
on every page reached is fetched and must answer 200 (a redirect is followed and must land on a
200). Every `hx-get` (but a form's) on those pages is fetched as htmx fetches it and must
answer 200 with a fragment, not a whole page (which htmx would nest inside the page: a second
header), and for `hx-target="#id"` with the element of that id. The walk is made twice, the
second time with one row per page, so that every pager is on it. This catches what a per-URL
test cannot: a page offering a link the user may not follow (403), a link that needs POST (405),
a stale or mistyped URL (404), or a page that breaks only with the demo's real data (500). Forms
are the access matrix's business; links are this test's.
"""

from __future__ import annotations

from collections.abc import Iterator
from html.parser import HTMLParser
from urllib.parse import urldefrag, urljoin, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator.disputes import agreement_views, recheck_views
from annotator.disputes import views as dispute_views
from annotator.documents import views as document_views
from annotator.grading import views as grading_views
from annotator.management.commands.demo import build_demo
from annotator.pools import views as pool_views
from evaluation import views as evaluation_views

# Pages that end the session or leave the app: not followed.
NOT_FOLLOWED = ("/accounts/logout/", "/admin/")
# A safety stop for the walk; `_shape` keeps it short by visiting each kind of page once.
PAGE_LIMIT = 400


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.htmx_gets: list[tuple[str, str]] = []  # (hx-get, hx-target)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        href = values.get("href")
        if tag == "a" and href:
            self.hrefs.append(href)
        # Forms are left out: htmx adds their fields to the address, which this walk does not fill in.
        if tag != "form" and values.get("hx-get") is not None:
            self.htmx_gets.append((values["hx-get"] or "", values.get("hx-target") or "this"))


def _same_site_links(html: str, page: str) -> list[str]:
    """The page's links to this site, as absolute paths (a pager's "?page=2" included)."""
    parser = _Links()
    parser.feed(html)
    links = []
    for href in parser.hrefs:
        url, _fragment = urldefrag(urljoin(page, href))
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not url.startswith("/"):
            continue  # other sites, mailto:
        if url.startswith(NOT_FOLLOWED):
            continue
        links.append(url)
    return links


def _shape(url: str) -> str:
    """Each kind of page once: a URL whose digits differ from a visited one is the same page with
    other data (another query of the same set, say), so the walk stays a few seconds long."""
    path, _, query = url.partition("?")
    keys = sorted(part.split("=", 1)[0] for part in query.split("&") if part)
    return "".join("N" if ch.isdigit() else ch for ch in path) + "?" + "&".join(keys)


def html_pages(client: Client, start: str = "/", limit: int = 300) -> Iterator[tuple[str, str]]:
    """(URL, HTML) of every page reached from `start` by its links, each kind of page once (see
    `_shape`): the walk of the tests that read every page (languages of parts, ARIA references)."""
    queue, seen_shapes, found = [start], set(), {start}
    while queue and len(seen_shapes) < limit:
        url = queue.pop(0)
        if _shape(url) in seen_shapes:
            continue
        seen_shapes.add(_shape(url))
        response = client.get(url)
        if response.status_code != 200 or not response["Content-Type"].startswith("text/html"):
            continue
        html = response.content.decode()
        yield url, html
        for link in _same_site_links(html, url):
            if link not in found:
                found.add(link)
                queue.append(link)


def _htmx_problems(client: Client, page: str, html: str) -> list[str]:
    """What is wrong with the answers to the page's htmx GETs (see the module docstring)."""
    parser = _Links()
    parser.feed(html)
    problems = []
    for address, target in parser.htmx_gets:
        url = urljoin(page, address)
        response = client.get(
            url, headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{page}"}
        )
        body = response.content.decode()
        if response.status_code != 200:
            problems.append(f"{response.status_code} for hx-get {url} on {page}")
        elif "<html" in body:
            problems.append(f"hx-get {url} on {page} answers with a whole page, to be put in {target}")
        elif target.startswith("#") and f'id="{target[1:]}"' not in body:
            problems.append(f"hx-get {url} on {page} does not answer with the {target} fragment")
    return problems


def _walk(client: Client, htmx_problems: list[str] | None = None) -> dict[str, tuple[int, str]]:
    """URL -> (status, page it was found on) for every link reached from the home page; the
    problems of each page's htmx GETs are added to `htmx_problems` when it is given."""
    found_on = {"/": "(start)"}
    queue = ["/"]
    seen_shapes: set[str] = set()
    results: dict[str, tuple[int, str]] = {}
    while queue and len(results) < PAGE_LIMIT:
        url = queue.pop(0)
        shape = _shape(url)
        if shape in seen_shapes:
            continue
        seen_shapes.add(shape)
        response = client.get(url, follow=True)
        results[url] = (response.status_code, found_on[url])
        content_type = response.get("Content-Type", "")
        if response.status_code != 200 or not content_type.startswith("text/html"):
            continue
        query = response.request.get("QUERY_STRING")
        page = response.request["PATH_INFO"] + (f"?{query}" if query else "")  # where redirects landed
        if htmx_problems is not None:
            htmx_problems += _htmx_problems(client, page, response.content.decode())
        for link in _same_site_links(response.content.decode(), page):
            if link not in found_on:
                found_on[link] = url
                queue.append(link)
    return results


# Every page size, so that the demo's few rows fill several pages and the pagers are walked too.
PAGE_SIZES = [
    (dispute_views, "PER_PAGE"),
    (recheck_views, "PER_PAGE"),
    (agreement_views, "PER_PAGE"),
    (document_views, "PAGE_SIZE"),
    (grading_views, "PAGE_SIZE"),
    (pool_views, "PAGE_SIZE"),
    (pool_views, "LIST_PAGE_SIZE"),
    (evaluation_views, "RUNS_PER_PAGE"),
    (evaluation_views, "COMPARISONS_PER_PAGE"),
    (evaluation_views, "QUERIES_PER_PAGE"),
]


@pytest.mark.parametrize("rows_per_page", ["as set", "one"])
def test_every_link_a_demo_user_sees_works(
    db: None, rows_per_page: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if rows_per_page == "one":
        for module, name in PAGE_SIZES:
            assert isinstance(getattr(module, name), int)
            monkeypatch.setattr(module, name, 1)
    build_demo()
    broken: list[str] = []
    htmx_problems: list[str] = []
    walked: set[str] = set()
    for username in ("owner", "reviewer", "editor-a", "editor-b"):
        for language in ("en", "zh-hans"):
            client = Client(HTTP_ACCEPT_LANGUAGE=language)
            client.force_login(get_user_model().objects.get(username=username))
            results = _walk(client, htmx_problems if language == "en" else None)
            walked.update(results)
            broken += [
                f"{username} [{language}]: {status} {url} (linked from {page})"
                for url, (status, page) in results.items()
                if status != 200
            ]
            # The walk reached the project's pages, not just the home page: the check could fail.
            assert sum(url.startswith("/p/help-center-demo/") for url in results) > 5, sorted(results)
    assert not broken, "\n".join(broken)
    assert not htmx_problems, "\n".join(sorted(set(htmx_problems)))
    if rows_per_page == "one":  # the pagers were on the walk, so the htmx check had them to check
        assert any(url.endswith("?page=2") for url in walked), sorted(walked)
