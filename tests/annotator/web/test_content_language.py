"""Text the project's users wrote (queries, document titles and bodies) carries the project's
content language, whatever the UI language, so that a screen reader reads it with the right
voice (WCAG 3.1.2, language of parts); and the owner sets that language on the project.

The check walks the demo (its queries and articles are Chinese, its project states zh-Hans) as
every demo user in the English UI, like test_links does, and looks at every text node on every
page: one that holds a demo query's or document's text must sit inside an element whose `lang`
is the project's. The page <title> is left out (HTML cannot mark part of it).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotator.management.commands.demo import build_demo
from annotator.models import Document, Project, Query, Role
from annotator.projects.services import ProjectCreateError, project_create
from tests.annotator.web.test_links import _shape, html_pages
from tests.conftest import make_user

# Void elements never get an end tag, so they must not stay on the stack of open elements.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
SKIPPED = {"title", "script", "style", "textarea"}


class _LangOfText(HTMLParser):
    """(language in effect, text) for every text node outside <title>, <script> and <style>."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, str | None]] = []
        self.texts: list[tuple[str | None, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        lang = dict(attrs).get("lang")
        self.stack.append((tag, lang if lang is not None else self._lang()))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):  # tolerate implied end tags (<p>, <li>)
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if data.strip() and not any(tag in SKIPPED for tag, _ in self.stack):
            self.texts.append((self._lang(), data))

    def _lang(self) -> str | None:
        return self.stack[-1][1] if self.stack else None


def _content_snippets() -> list[str]:
    """Pieces of the demo's user-written text long enough to be unmistakable in a text node
    (pages truncate long text, so only beginnings are looked for)."""
    pieces = [text for q in Query.objects.all() for text in (q.text, q.information_need)]
    for document in Document.objects.all():
        pieces.append(document.title)
        pieces += document.body.splitlines()
    return sorted({piece.strip()[:10] for piece in pieces if len(piece.strip()) >= 10})


def _marked_and_unmarked(client: Client, snippets: list[str], start: str) -> tuple[set[str], list[str]]:
    """Walk the site from `start`; the pages where user text was found marked, and each place
    where it was not (page, language in effect, text)."""
    marked: set[str] = set()
    unmarked: list[str] = []
    for url, html in html_pages(client, start):
        parser = _LangOfText()
        parser.feed(html)
        for lang, text in parser.texts:
            if any(snippet in text for snippet in snippets):
                if lang == "zh-Hans":
                    marked.add(url)
                else:
                    unmarked.append(f"{url}: lang={lang!r}: {text.strip()[:40]!r}")
    return marked, unmarked


@pytest.mark.parametrize("username", ["owner", "reviewer", "editor-a"])
def test_user_text_carries_the_content_language_on_every_page(db: None, username: str) -> None:
    project = build_demo()
    assert project.content_language == "zh-Hans"
    snippets = _content_snippets()
    assert len(snippets) > 10, snippets
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(get_user_model().objects.get(username=username))
    marked, unmarked = _marked_and_unmarked(client, snippets, "/")
    assert not unmarked, "\n".join(unmarked)
    # The walk found the text on the pages that show it, so the check above had something to check.
    # One N per number, whatever its digits (PostgreSQL's IDs grow across tests).
    shapes = {re.sub("N+", "N", _shape(url)) for url in marked}
    for page in ("/documents/?", "/documents/N/?", "/queries/?", "/sets/N/queries/N/grade/?"):
        assert f"/p/help-center-demo{page}" in shapes, (page, sorted(shapes))


def test_without_a_stated_language_user_text_inherits_the_page_language(db: None) -> None:
    project = build_demo()
    project.content_language = ""
    project.save()
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(get_user_model().objects.get(username="owner"))
    html = client.get(reverse("document_list", kwargs={"slug": project.slug})).content.decode()
    assert "修改已提交报名中的联系电话" in html
    assert 'lang="zh-Hans"' not in html  # nor an empty lang="", which would say "unknown"
    assert 'lang=""' not in html


def test_owner_sets_names_and_content_language(db: None) -> None:
    owner = make_user("olga")
    project = project_create(slug="hc", name="Help center", owner=owner)
    client = Client()
    client.force_login(owner)
    url = reverse("project_settings", kwargs={"slug": "hc"})
    page = client.get(url)
    assert page.status_code == 200
    assert 'name="content_language"' in page.content.decode()

    response = client.post(
        url,
        {"name": "Help centre", "name_zh_hans": "帮助中心", "description": "", "content_language": "zh-Hans"},
    )
    assert response.status_code == 302
    project.refresh_from_db()
    assert (project.name, project.name_zh_hans, project.content_language) == (
        "Help centre",
        "帮助中心",
        "zh-Hans",
    )
    assert project.slug == "hc"  # not editable: it is in every link made so far

    # Saving the same values again says nothing changed.
    again = client.post(
        url,
        {"name": "Help centre", "name_zh_hans": "帮助中心", "description": "", "content_language": "zh-Hans"},
        follow=True,
    )
    assert "Nothing changed" in again.content.decode()


@pytest.mark.parametrize("tag", ["chinese", "zh_Hans", "zh-", "z", "zh-Hans-toolongsubtag", '"><script>'])
def test_a_bad_language_tag_is_refused_with_the_rule(db: None, tag: str) -> None:
    owner = make_user("olga")
    project = project_create(slug="hc", name="Help center", owner=owner)
    client = Client()
    client.force_login(owner)
    response = client.post(
        reverse("project_settings", kwargs={"slug": "hc"}),
        {"name": "Help center", "name_zh_hans": "", "description": "", "content_language": tag},
    )
    assert response.status_code == 200
    assert "Enter a language tag: a 2- or 3-letter language code" in response.content.decode()
    project.refresh_from_db()
    assert project.content_language == ""
    with pytest.raises(ProjectCreateError, match="is not a language tag"):
        project_create(slug="hc2", name="Other", owner=owner, content_language=tag)
    assert not Project.objects.filter(slug="hc2").exists()


@pytest.mark.parametrize("role", [Role.EDITOR, Role.REVIEWER])
def test_only_owners_change_project_settings(db: None, role: Role) -> None:
    owner, other = make_user("olga"), make_user("ivan")
    project = project_create(slug="hc", name="Help center", owner=owner)
    project.memberships.create(user=other, role=role)
    client = Client()
    client.force_login(other)
    url = reverse("project_settings", kwargs={"slug": "hc"})
    assert client.get(url).status_code == 403
    assert client.post(url, {"name": "Taken over", "content_language": "en"}).status_code == 403
    project.refresh_from_db()
    assert (project.name, project.content_language) == ("Help center", "")
