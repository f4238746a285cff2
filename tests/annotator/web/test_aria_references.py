"""Every ID an element points at (`aria-describedby`, `aria-labelledby`, `aria-controls`,
`<label for>`) exists on the page, on every page a demo user reaches.

A reference to a missing ID is silent for sighted users and drops the help or the name for a
screen reader (e.g. a form field's help text that has no ID). The walk is
test_links' walk; this test reads each page's IDs and references.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotator.management.commands.demo import build_demo
from tests.annotator.web.test_links import html_pages

LISTS = ("aria-describedby", "aria-labelledby", "aria-controls")  # space-separated ID lists


class _References(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.references: list[tuple[str, str, str]] = []  # (tag, attribute, ID)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(values["id"] or "")
        for name in LISTS:
            self.references += [(tag, name, ref) for ref in (values.get(name) or "").split()]
        if tag == "label" and values.get("for"):
            self.references.append((tag, "for", values["for"] or ""))


def _dangling(client: Client) -> tuple[int, int, list[str]]:
    """(pages read, references checked, each reference to a missing ID)."""
    pages = checked = 0
    dangling: list[str] = []
    for url, html in html_pages(client):
        pages += 1
        parser = _References()
        parser.feed(html)
        checked += len(parser.references)
        dangling += [
            f"{url}: <{tag} {name}={ref!r}>" for tag, name, ref in parser.references if ref not in parser.ids
        ]
    return pages, checked, dangling


@pytest.mark.parametrize("username", ["owner", "reviewer", "editor-a"])
def test_every_id_an_element_points_at_is_on_the_page(db: None, username: str) -> None:
    build_demo()
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(get_user_model().objects.get(username=username))
    pages, checked, dangling = _dangling(client)
    assert pages > 10 and checked > 20, (pages, checked)  # the walk had references to check
    assert not dangling, "\n".join(dangling)


def test_the_freeze_forms_references_are_on_the_page(db: None) -> None:
    """The demo walk reaches no freeze form that lists pairs to leave out (the one with the reason
    field), so each of the demo's open sets' freeze pages is read here."""
    from django.urls import reverse

    from annotator.models import GradingSet

    project = build_demo()
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(get_user_model().objects.get(username="owner"))
    read = []
    for grading_set in GradingSet.objects.filter(project=project, is_open=True):
        parser = _References()
        parser.feed(
            client.get(
                reverse("pool_freeze", kwargs={"slug": project.slug, "set_id": grading_set.pk})
            ).content.decode()
        )
        read += [ref for _tag, name, ref in parser.references if name == "aria-describedby"]
        assert not [ref for _tag, _name, ref in parser.references if ref not in parser.ids], grading_set.name
    assert "id_reason_helptext" in read  # a form with the reason field was among them
