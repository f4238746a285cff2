"""The main navigation marks where the reader is (aria-current), and only there."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from annotator.models import GradingSet
from tests.conftest import Cast


def _current(html: str) -> dict[str, str]:
    nav = html[html.index('class="site-nav"') : html.index("</nav>")]
    return {
        text.strip(): value
        for value, text in re.findall(r'<a [^>]*aria-current="(\w+)"[^>]*>([^<]+)</a>', nav)
    }


def test_the_nav_marks_the_page_and_its_section(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = client.get(reverse("project_detail", kwargs={"slug": "alpha"}))
    assert response.status_code == 200, (response.status_code, response.get("Location"))
    overview = response.content.decode()
    assert _current(overview) == {"Overview": "page"}
    sets = client.get(reverse("grading_set_list", kwargs={"slug": "alpha"})).content.decode()
    assert _current(sets) == {"Grading sets": "page"}
    grading_set = GradingSet.objects.create(project=cast.alpha, name="S")
    one_set = client.get(reverse("grading_set_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}))
    assert _current(one_set.content.decode()) == {"Grading sets": "true"}  # a page inside the section
    assert 'class="nav-project" aria-current' not in one_set.content.decode()


def test_no_template_comment_spans_lines() -> None:
    """Django's {# #} comment ends at its line: one spread over two lines is printed on the page
    (it was, under the criteria page's form). Longer comments use {% comment %}."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "templates"
    spread = [
        f"{path.relative_to(root)}:{number}"
        for path in root.rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if "{#" in line and "#}" not in line[line.index("{#") :]
    ]
    assert not spread, spread
