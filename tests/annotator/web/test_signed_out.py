"""A session that ends mid-task: the person lands on the login page and comes back to their page.

Before: an htmx request got the login page swapped into the fragment it targeted (a second page
header inside the grading list), and signing in there returned to the POST-only grade endpoint: 405.
"""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from tests.annotator.web.test_access_matrix import ALL_PATTERNS
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
    htmx = client.post(
        grade_url, headers={"HX-Request": "true", "HX-Current-URL": "https://evil.example.com/x"}
    )
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


POSTED_FROM = [entry for entry in ALL_PATTERNS if hasattr(entry[1].callback, "page_for_get")]


def test_actions_that_re_render_their_page_are_found() -> None:
    assert {name for name, _, _ in POSTED_FROM} >= {"dispute_reason", "import_documents", "candidate_add"}


@pytest.mark.parametrize(("name", "pattern", "params"), POSTED_FROM, ids=[e[0] for e in POSTED_FROM])
def test_a_get_of_an_action_url_goes_to_its_page(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str]
) -> None:
    # After a refusal without JavaScript the action's URL is in the address bar: reloading it,
    # switching language or signing in again there GETs it (it answered 405).
    kwargs = {k: v for k, v in sample_kwargs(cast.alpha).items() if k in params}
    client.force_login(cast.owner)
    response = client.get(reverse(name, kwargs=kwargs))
    assert response.status_code == 302, response.status_code
    assert response["Location"] == reverse(pattern.callback.page_for_get, kwargs=kwargs)


def test_a_post_with_every_cookie_gone_is_a_signed_out_person_sent_to_log_in(cast: Cast) -> None:
    # No session and no CSRF cookie: the CSRF check refuses before any login check could.
    browser = Client(enforce_csrf_checks=True)
    url = reverse("dispute_list", kwargs={"slug": "alpha"})
    response = browser.post(url, {"x": "1"}, headers={"Referer": f"http://testserver{url}?status=settled"})
    assert response.status_code == 302
    assert next_of(response["Location"]) == f"{url}?status=settled"
    assert "your last action was not saved" in browser.get(response["Location"]).content.decode()
    htmx = browser.post(url, headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{url}"})
    assert next_of(htmx["HX-Redirect"]) == url


def test_a_signed_in_post_with_a_stale_csrf_token_gets_a_page_that_says_to_reload(cast: Cast) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(cast.owner)
    response = browser.post(reverse("member_list", kwargs={"slug": "alpha"}), {"username": "x"})
    assert response.status_code == 403
    assert "The form has expired" in response.content.decode() and "<html" in response.content.decode()


def test_a_get_of_the_logout_address_asks_and_only_the_post_signs_out(db: None, client: Client) -> None:
    """A bookmark or typed /accounts/logout/ asks, not an empty 405 page; logging out also says so
    on the login page."""
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("leaving", password="pw-leaving-1")
    client.force_login(user)
    asked = client.get("/accounts/logout/")
    assert asked.status_code == 200
    assert 'action="/accounts/logout/"' in asked.content.decode() and "_auth_user_id" in client.session
    done = client.post("/accounts/logout/", follow=True)
    assert done.redirect_chain[-1][0].startswith("/accounts/login/")
    assert "You are logged out." in done.content.decode() and "_auth_user_id" not in client.session
    signed_out = client.get("/accounts/logout/").content.decode()
    assert "You are logged out" in signed_out and "Log in again" in signed_out


def test_a_failed_login_keeps_next_in_the_address_so_a_language_switch_keeps_it(
    cast: Cast, client: Client
) -> None:
    target = reverse("dispute_list", kwargs={"slug": "alpha"}) + "?status=settled"
    login = reverse("login") + "?" + urlencode({"next": target})
    failed = client.post(login, {"username": "nobody", "password": "wrong", "next": target})
    assert failed.status_code == 200
    # The form posts back to the address with ?next=, so the address bar keeps it after a failure.
    action = re.search(r'<form method="post" action="([^"]*)" class="stack">', failed.content.decode())
    assert action is not None
    assert next_of(html.unescape(action.group(1))) == target
    assert f'action="{reverse("login")}" class="stack"' in client.get(reverse("login")).content.decode()
