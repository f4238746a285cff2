"""The user manual in the app (/help/): every page in both languages for anyone signed in, a link
to it from every page's header and from the pages it explains, and its committed HTML in step with
its Markdown source."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.help import DOCS_DIR, LANGUAGES, PAGES
from annotator.help.views import PERMISSIONS_MARK
from annotator.management.commands.render_docs import render_markdown, sources
from annotator.projects.models import PERMISSIONS, Permission, Role
from tests.conftest import Cast
from tests.samples import sample_kwargs

SLUGS = [slug for slug, _title in PAGES]


def help_url(slug: str) -> str:
    return reverse("help_index") if slug == "index" else reverse("help_page", kwargs={"page": slug})


def fragment(language: str, slug: str) -> str:
    return (DOCS_DIR / language / f"{slug}.html-fragment").read_text(encoding="utf-8")


def shows(page: str, language: str, slug: str) -> bool:
    """The page holds the fragment, the generated permissions table standing in for its mark."""
    return all(part in page for part in fragment(language, slug).split(PERMISSIONS_MARK))


@pytest.mark.parametrize("slug", SLUGS)
def test_a_signed_in_user_reads_each_help_page_in_english(cast: Cast, client: Client, slug: str) -> None:
    client.force_login(cast.outsider)  # a member of another project only: the manual is everyone's
    response = client.get(help_url(slug))
    assert response.status_code == 200
    page = response.content.decode()
    assert '<html lang="en">' in page
    assert shows(page, "en", slug)
    assert f'href="{help_url(slug)}" aria-current="page"' in page  # the menu marks where we are


@pytest.mark.parametrize("slug", SLUGS)
def test_a_signed_in_user_reads_each_help_page_in_chinese(cast: Cast, client: Client, slug: str) -> None:
    client.force_login(cast.editor)
    client.cookies["django_language"] = "zh-hans"
    response = client.get(help_url(slug))
    assert response.status_code == 200
    page = response.content.decode()
    assert '<html lang="zh-hans">' in page
    assert shows(page, "zh_Hans", slug)
    assert not shows(page, "en", slug)


def test_the_browsers_language_chooses_the_manual_too(cast: Cast) -> None:
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")
    client.force_login(cast.editor)
    assert fragment("zh_Hans", "grading") in client.get(help_url("grading")).content.decode()


@pytest.mark.parametrize("slug", ["index", "grading"])
def test_anonymous_visitors_are_sent_to_log_in(client: Client, slug: str) -> None:
    response = client.get(help_url(slug))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("path", ["/help/nothing-here/", "/help/index/", "/help/Grading/"])
def test_an_unknown_help_page_is_not_found(cast: Cast, client: Client, path: str) -> None:
    client.force_login(cast.editor)
    assert client.get(path).status_code == 404


def test_the_header_links_to_the_help_in_the_readers_language(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    assert f'<a href="{reverse("help_index")}">Help</a>' in client.get(reverse("home")).content.decode()
    client.cookies["django_language"] = "zh-hans"
    assert f'<a href="{reverse("help_index")}">帮助</a>' in client.get(reverse("home")).content.decode()


def test_the_header_has_no_help_link_before_signing_in(client: Client) -> None:
    assert reverse("help_index") not in client.get(reverse("login")).content.decode()


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("grade_page", "grading"),
        ("import_page", "imports"),
        ("dispute_list", "disputes"),
        ("pool_list", "pools"),
        ("comparison_list", "comparisons"),
    ],
)
def test_a_page_links_its_heading_to_its_help_page(cast: Cast, client: Client, name: str, slug: str) -> None:
    client.force_login(cast.owner)
    kwargs = {"slug": "alpha"}
    if name == "grade_page":
        samples = sample_kwargs(cast.alpha)
        kwargs |= {"set_id": samples["set_id"], "query_id": samples["query_id"]}
    response = client.get(reverse(name, kwargs=kwargs))
    assert response.status_code == 200
    assert f'<a class="help-link" href="{help_url(slug)}">Help on this page</a>' in response.content.decode()


def test_every_committed_fragment_is_its_markdown_rendered() -> None:
    """Edit the .md, then run `manage.py render_docs`: the pages serve the committed fragments."""
    stale = [
        str(html.relative_to(DOCS_DIR))
        for md, html in sources()
        if not html.exists()
        or html.read_text(encoding="utf-8") != render_markdown(md.read_text(encoding="utf-8"))
    ]
    assert not stale, f"out of date with their .md (run `manage.py render_docs`): {stale}"


def test_both_languages_have_the_same_pages_and_nothing_unlisted() -> None:
    for language in LANGUAGES:
        found = {path.name.removesuffix(".md") for path in (DOCS_DIR / language).glob("*.md")}
        assert found == set(SLUGS), language


def test_the_roles_page_lists_every_permission_for_exactly_the_roles_that_have_it(
    cast: Cast, client: Client
) -> None:
    client.force_login(cast.editor)
    page = client.get(help_url("roles")).content.decode()
    assert PERMISSIONS_MARK not in page
    table = page[page.index('<table class="permissions-table">') :]
    table = table[: table.index("</table>")]
    rows = re.findall(r'<tr><th scope="row">(.*?)</th>(.*?)</tr>', table)
    assert [html.unescape(label) for label, _cells in rows] == [str(p.label) for p in PERMISSIONS]
    for (_label, cells), lowest in zip(rows, PERMISSIONS.values(), strict=True):
        ticks = re.findall(r'<span class="visually-hidden">(yes|no)</span>', cells)
        assert ticks == ["yes" if role.includes(lowest) else "no" for role in Role]


def test_the_permissions_table_is_translated(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    client.cookies["django_language"] = "zh-hans"
    page = client.get(help_url("roles")).content.decode()
    assert "各角色可以做什么" in page
    assert "将评分集冻结为其判断池的下一个版本" in page  # Permission.FREEZE
    with translation.override("en"):
        assert str(Permission.FREEZE.label) not in page
