"""A session that ends mid-task: the person lands on the login page and comes back to their page.

Before: an htmx request got the login page swapped into the fragment it targeted (a second page
header inside the grading list), and signing in there returned to the POST-only grade endpoint: 405.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from tests.annotator.test_access_matrix import ALL_PATTERNS
from tests.conftest import Cast
from tests.samples import sample_kwargs

GUARDED = [entry for entry in ALL_PATTERNS if entry[1].callback.access_rule != "public"]


def next_of(location: str) -> str:
    parts = urlsplit(location)
    assert parts.path == reverse("login"), location
    return parse_qs(parts.query)["next"][0]


@pytest.mark.parametrize(("name", "pattern", "params"), GUARDED, ids=[e[0] for e in GUARDED])
def test_a_signed_out_htmx_request_redirects_the_whole_page_back_to_where_it_came_from(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str]
) -> None:
    url = reverse(name, kwargs={k: v for k, v in sample_kwargs(cast.alpha).items() if k in params})
    page = "http://testserver/p/alpha/sets/1/queries/1/grade/?x=1"
    for response in (
        client.get(url, headers={"HX-Request": "true", "HX-Current-URL": page}),
        client.post(url, {"grade": "2"}, headers={"HX-Request": "true", "HX-Current-URL": page}),
    ):
        # htmx follows HX-Redirect with a full navigation; a 302 would be followed inside the XHR.
        assert response.status_code == 200, (name, response.status_code)
        assert next_of(response["HX-Redirect"]) == "/p/alpha/sets/1/queries/1/grade/?x=1"


def test_a_signed_out_form_post_returns_to_the_page_of_the_form_and_says_nothing_was_saved(
    cast: Cast, client: Client
) -> None:
    grade_url = reverse("grade_save", kwargs={"slug": "alpha", "set_id": 1, "candidate_id": 1})
    response = client.post(grade_url, {"grade": "2"}, headers={"Referer": "http://testserver/p/alpha/queue/"})
    assert response.status_code == 302
    assert next_of(response["Location"]) == "/p/alpha/queue/"

    login_page = client.get(response["Location"])
    assert "You were signed out, so your last action was not saved" in login_page.content.decode()


def test_a_post_from_another_site_does_not_choose_where_login_returns(cast: Cast, client: Client) -> None:
    grade_url = reverse("grade_save", kwargs={"slug": "alpha", "set_id": 1, "candidate_id": 1})
    for headers in ({"Referer": "https://evil.example.com/p/alpha/"}, {}):
        response = client.post(grade_url, {"grade": "2"}, headers=headers)
        assert next_of(response["Location"]) == "/"
    htmx = client.post(grade_url, headers={"HX-Request": "true", "HX-Current-URL": "https://evil.example.com/x"})
    assert next_of(htmx["HX-Redirect"]) == "/"


def test_a_signed_out_get_returns_to_the_url_itself(cast: Cast, client: Client) -> None:
    url = reverse("dispute_list", kwargs={"slug": "alpha"}) + "?status=settled"
    assert next_of(client.get(url)["Location"]) == url


def test_signed_in_pages_are_not_stored_and_vary_on_htmx(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    response = client.get(reverse("project_detail", kwargs={"slug": "alpha"}))
    assert "no-store" in response["Cache-Control"]
    assert "HX-Request" in response["Vary"]
    # Back/Forward must fetch whole, fresh pages: htmx's history restore must not send HX-Request.
    assert '"historyRestoreAsHxRequest": false' in response.content.decode()
    anonymous = Client().get(reverse("login"))
    assert "HX-Request" in anonymous["Vary"]
