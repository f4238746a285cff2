"""Every link a demo user can see works for that user, in both languages.

A walk from the home page over the demo project, as each demo user: every same-site `<a href>`
on every page reached is fetched and must answer 200 (a redirect is followed and must land on a
200). This catches what a per-URL test cannot: a page offering a link the user may not follow
(403), a link that needs POST (405), a stale or mistyped URL (404), or a page that breaks only
with the demo's real data (500). Forms are the access matrix's business; links are this test's.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

from django.contrib.auth import get_user_model
from django.test import Client

from annotator.management.commands.demo import build_demo

# Pages that end the session or leave the app: not followed.
NOT_FOLLOWED = ("/accounts/logout/", "/admin/")
# A safety stop for the walk; `_shape` keeps it short by visiting each kind of page once.
PAGE_LIMIT = 400


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def _same_site_links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    links = []
    for href in parser.hrefs:
        url, _fragment = urldefrag(href)
        parts = urlsplit(url)
        if parts.scheme or parts.netloc or not url.startswith("/"):
            continue  # other sites, mailto:, fragments only, relative-to-static oddities
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


def _walk(client: Client) -> dict[str, tuple[int, str]]:
    """URL -> (status, page it was found on) for every link reached from the home page."""
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
        for link in _same_site_links(response.content.decode()):
            if link not in found_on:
                found_on[link] = url
                queue.append(link)
    return results


def test_every_link_a_demo_user_sees_works(db: None) -> None:
    build_demo()
    broken: list[str] = []
    for username in ("owner", "reviewer", "editor-a", "editor-b"):
        for language in ("en", "zh-hans"):
            client = Client(HTTP_ACCEPT_LANGUAGE=language)
            client.force_login(get_user_model().objects.get(username=username))
            results = _walk(client)
            broken += [
                f"{username} [{language}]: {status} {url} (linked from {page})"
                for url, (status, page) in results.items()
                if status != 200
            ]
            # The walk reached the project's pages, not just the home page: the check could fail.
            assert sum(url.startswith("/p/help-center-demo/") for url in results) > 5, sorted(results)
    assert not broken, "\n".join(broken)
