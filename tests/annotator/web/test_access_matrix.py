"""Every URL of the project, walked from the resolver, against every kind of visitor.

The contract (annotator/web/access.py): anonymous -> login page; not a member -> 404; member without
the permission -> 403; member with it -> the page. Which roles have a permission is read from
PERMISSIONS. A view that declares no rule fails here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from annotator.models import PERMISSIONS, Permission, Role
from tests.conftest import Cast
from tests.samples import sample_kwargs


def walk(
    resolver: URLResolver, namespace: str = "", params: frozenset[str] = frozenset()
) -> Iterator[tuple[str, URLPattern, frozenset[str]]]:
    """(reversible name, pattern, names of all URL kwargs including those of enclosing includes)."""
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            if entry.app_name == "admin":
                continue  # Django's admin has its own staff check, tested separately below
            yield from walk(
                entry,
                namespace + (f"{entry.namespace}:" if entry.namespace else ""),
                params | set(entry.pattern.converters),
            )
        else:
            yield namespace + (entry.name or ""), entry, params | set(entry.pattern.converters)


ALL_PATTERNS = list(walk(get_resolver()))
PATTERN_IDS = [name or str(p.pattern) for name, p, _ in ALL_PATTERNS]
ACTORS = ["anonymous", "outsider", "editor", "reviewer", "owner"]


def test_every_url_pattern_is_named_and_declares_an_access_rule() -> None:
    assert ALL_PATTERNS, "the resolver returned no URL patterns"
    for name, pattern, _ in ALL_PATTERNS:
        assert pattern.name, f"URL pattern {pattern.pattern} has no name"
        assert hasattr(pattern.callback, "access_rule"), (
            f"view {name} has no access rule: wrap it in public, signed_in or project_permission "
            "(annotator/web/access.py)"
        )


def call(client: Client, url: str) -> int:
    """GET the URL; if the view only takes POST, POST an empty form instead."""
    response = client.get(url)
    if response.status_code == 405:
        response = client.post(url, {})
    return response.status_code


def lowest_role(rule: tuple[str, tuple[Permission, ...]]) -> Role:
    """The lowest role a `project_permission` rule lets in: that of the lowest of its permissions."""
    kind, permissions = rule
    assert kind == "permission" and permissions, rule
    return min((PERMISSIONS[p] for p in permissions), key=lambda role: role.rank)


def login(client: Client, cast: Cast, actor: str) -> None:
    if actor == "anonymous":
        return
    user = cast.outsider if actor == "outsider" else cast.by_role(Role(actor))
    client.force_login(user)


@pytest.mark.parametrize("actor", ACTORS)
@pytest.mark.parametrize(("name", "pattern", "params"), ALL_PATTERNS, ids=PATTERN_IDS)
def test_access_contract_holds_for_every_view_and_visitor(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str], actor: str
) -> None:
    rule = pattern.callback.access_rule
    kwargs = {k: v for k, v in sample_kwargs(cast.alpha).items() if k in params}
    missing = params - set(kwargs)
    assert not missing, f"tests/samples.py has no sample for URL kwargs {missing} of {name}"
    url = reverse(name, kwargs=kwargs)
    login(client, cast, actor)
    response = client.get(url)
    status = response.status_code
    if status == 405:
        response = client.post(url, {})
        status = response.status_code

    if rule == "public":
        assert status in (200, 302), (name, actor, status)
    elif actor == "anonymous":
        assert status == 302, (name, actor, status)
        assert response["Location"].startswith(reverse("login")), (name, response["Location"])
    elif rule == "signed_in":
        assert status in (200, 302), (name, actor, status)
    elif actor == "outsider":
        assert status == 404, (name, actor, status)
    elif Role(actor).includes(lowest_role(rule)):
        assert status in (200, 204, 302), (name, actor, status)
    else:
        assert status == 403, (name, actor, status)


@pytest.mark.parametrize(("name", "pattern", "params"), ALL_PATTERNS, ids=PATTERN_IDS)
def test_objects_of_another_project_are_not_found_through_my_project(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str]
) -> None:
    """Olivia owns Alpha; IDs that belong to Beta must 404 even inside Alpha's URLs."""
    if pattern.callback.access_rule in ("public", "signed_in") or params <= {"slug"}:
        pytest.skip("no object IDs in this URL")
    kwargs = {k: v for k, v in sample_kwargs(cast.beta).items() if k in params}
    kwargs["slug"] = cast.alpha.slug
    client.force_login(cast.owner)
    url = reverse(name, kwargs=kwargs)
    if hasattr(pattern.callback, "page_for_get"):
        # A POST-only action whose GET goes to its page (annotator.web.http.post_from): both 404.
        assert client.get(url, follow=True).status_code == 404
        assert client.post(url, {}).status_code == 404
    else:
        assert call(client, url) == 404


def test_admin_refuses_people_who_are_not_staff(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
