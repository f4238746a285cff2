"""Every response carries a strict Content-Security-Policy and a Permissions-Policy, and no page
holds anything that policy would block.

The policy (annotator/settings.py) lets a page run and style itself only from this site's files:
an inline handler, style attribute or <script> block in a page is silently dead in the browser.
So the walk reads every page a demo user reaches (test_links' walk), and the htmx fragments those
pages fetch, for the header and for inline code; the admin's pages are read as a superuser.
The browser's own word is tests/e2e/test_content_security_policy.py.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.urls import reverse

from annotator.management.commands.demo import build_demo
from annotator.web.headers import PermissionsPolicyMiddleware, permissions_policy
from tests.annotator.web.test_links import html_pages
from tests.conftest import Cast, make_user

# Features the app never uses, which the Permissions-Policy must turn off.
UNUSED_FEATURES = ("camera", "microphone", "geolocation", "payment", "usb", "serial", "midi")
# Sources that would let inline or foreign code run or style a page.
LOOSE_SOURCES = (
    "'unsafe-inline'",
    "'unsafe-eval'",
    "'unsafe-hashes'",
    "*",
    "data:",
    "http:",
    "https:",
    "blob:",
)
# <script type> values a browser does not run: data for scripts (json_script), allowed inline.
DATA_SCRIPT_TYPES = ("application/json",)


def directives(header: str) -> dict[str, list[str]]:
    """`default-src 'self'; img-src 'self' data:` -> {"default-src": ["'self'"], ...}."""
    parsed = {}
    for part in header.split(";"):
        name, *sources = part.split()
        parsed[name.lower()] = sources
    return parsed


def csp_problems(response: HttpResponse) -> list[str]:
    """What is missing from, or too loose in, the response's Content-Security-Policy."""
    header = response.headers.get("Content-Security-Policy")
    if not header:
        return ["no Content-Security-Policy header"]
    policy = directives(header)
    problems = []
    if policy.get("default-src") != ["'self'"]:
        problems.append(f"default-src is {policy.get('default-src')}, not 'self'")
    for name in ("script-src", "style-src"):
        # Without its own directive, the kind falls back to default-src (checked above).
        loose = [s for s in policy.get(name, []) if s.lower() in LOOSE_SOURCES]
        if loose:
            problems.append(f"{name} allows {loose}")
    for name in ("object-src", "frame-ancestors"):
        if policy.get(name) != ["'none'"]:
            problems.append(f"{name} is {policy.get(name)}, not 'none'")
    return problems


def permissions_problems(response: HttpResponse) -> list[str]:
    header = response.headers.get("Permissions-Policy")
    if not header:
        return ["no Permissions-Policy header"]
    allowed = dict(part.strip().split("=", 1) for part in header.split(","))
    return [f"{feature} is not off" for feature in UNUSED_FEATURES if allowed.get(feature) != "()"]


class _Inline(HTMLParser):
    """Collects what the policy would block (inline code, foreign files) and the htmx GETs."""

    def __init__(self) -> None:
        super().__init__()
        self.blocked: list[str] = []
        self.htmx_gets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name, value in attrs:
            if name.startswith("on"):
                self.blocked.append(f"<{tag} {name}=…> (inline handler)")
            elif name == "style":
                self.blocked.append(f'<{tag} style="{value}">')
            elif name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.blocked.append(f"<{tag} {name}={value!r}>")
        if tag == "style":
            self.blocked.append("<style> element")
        if tag == "script" and not values.get("src") and values.get("type") not in DATA_SCRIPT_TYPES:
            self.blocked.append("inline <script>")
        source = values.get("src") or (values.get("href") if tag == "link" else None) or ""
        if tag in ("script", "link", "img", "iframe", "object", "embed") and source.startswith(
            ("http:", "https:", "//")
        ):
            self.blocked.append(f"<{tag}> from another site: {source}")
        if tag != "form" and values.get("hx-get"):
            self.htmx_gets.append(values["hx-get"] or "")


def page_problems(client: Client, url: str, response: HttpResponse) -> list[str]:
    """The page's header problems and blocked markup, then the same for its htmx fragments."""
    parser = _Inline()
    parser.feed(response.content.decode())
    problems = [f"{url}: {p}" for p in csp_problems(response) + permissions_problems(response)]
    problems += [f"{url}: {p}" for p in parser.blocked]
    for address in parser.htmx_gets:
        fragment_url = urljoin(url, address)
        fragment = client.get(fragment_url, headers={"HX-Request": "true"})
        inner = _Inline()
        inner.feed(fragment.content.decode())
        problems += [f"{fragment_url} (hx-get on {url}): {p}" for p in csp_problems(fragment) + inner.blocked]
    return problems


@pytest.mark.parametrize("username", ["owner", "reviewer", "editor-a", "editor-b"])
def test_every_page_a_demo_user_reaches_is_under_a_strict_policy(db: None, username: str) -> None:
    build_demo()
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(get_user_model().objects.get(username=username))
    problems: list[str] = []
    pages = 0
    for url, _html in html_pages(client):
        pages += 1
        problems += page_problems(client, url, client.get(url))
    assert pages > 10, pages  # the walk reached the project's pages
    assert not problems, "\n".join(problems)


def test_the_signed_out_pages_are_under_a_strict_policy(db: None, client: Client) -> None:
    problems: list[str] = []
    pages = [url for url, _html in html_pages(client, start=reverse("login"))]
    for url in pages:
        problems += page_problems(client, url, client.get(url))
    assert reverse("login") in pages
    assert not problems, "\n".join(problems)


def test_the_admin_pages_are_under_a_strict_policy(db: None, client: Client, settings: Any) -> None:
    """Django's admin has its own pages and scripts: its index, each list and each add form
    (their widgets' scripts included), and a user's change form."""
    settings.DEBUG = True  # the demo refuses to run otherwise (its passwords are well known)
    build_demo()
    settings.DEBUG = False
    root = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(root)
    urls = [reverse("admin:index"), reverse("admin:auth_user_change", args=[root.pk])]
    for model in admin.site._registry:
        meta = model._meta
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_add"))
    problems: list[str] = []
    for url in urls:
        response = client.get(url)
        if response.status_code == 403:  # a read-only model has no add form
            assert url.endswith("/add/"), url
            continue
        assert response.status_code == 200, (url, response.status_code)
        problems += page_problems(client, url, response)
    assert not problems, "\n".join(problems)


def test_refusals_and_redirects_carry_both_headers_too(cast: Cast, client: Client) -> None:
    signed_out = client.get(reverse("home"))
    assert signed_out.status_code == 302
    client.force_login(cast.editor)
    not_found = client.get("/no-such-page/")
    forbidden = client.get(reverse("member_list", kwargs={"slug": cast.alpha.slug}))
    bad = client.get(reverse("home"), {"q": "a\x00b"})
    assert (not_found.status_code, forbidden.status_code, bad.status_code) == (404, 403, 400)
    for response in (signed_out, not_found, forbidden, bad):
        assert csp_problems(response) == [], response.status_code
        assert permissions_problems(response) == [], response.status_code


def test_the_permissions_policy_names_each_feature_with_its_allowed_origins() -> None:
    value = permissions_policy({"camera": [], "fullscreen": ["self", '"https://a.example"']})
    assert value == 'camera=(), fullscreen=(self "https://a.example")'


def test_a_response_that_sets_its_own_permissions_policy_keeps_it(settings: Any) -> None:
    settings.PERMISSIONS_POLICY = {"camera": []}

    def view(request: Any) -> HttpResponse:
        response = HttpResponse()
        if request.path == "/own/":
            response.headers["Permissions-Policy"] = "camera=(self)"
        return response

    middleware = PermissionsPolicyMiddleware(view)
    factory = RequestFactory()
    assert middleware(factory.get("/own/")).headers["Permissions-Policy"] == "camera=(self)"
    assert middleware(factory.get("/other/")).headers["Permissions-Policy"] == "camera=()"
