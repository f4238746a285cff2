"""Named permissions: `PERMISSIONS` is the one place that says which role may do what."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from annotator.models import PERMISSIONS, Membership, Permission, Role
from tests.conftest import Cast

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# `membership.role == "owner"`, `"owner" != m.role`, ...: a permission asked as a role.
ROLE_COMPARE = re.compile(r"\brole\s*(==|!=)|[\"'](editor|reviewer|owner)[\"']\s*(==|!=)")


def test_every_permission_has_a_lowest_role() -> None:
    assert set(PERMISSIONS) == set(Permission)
    assert all(isinstance(role, Role) for role in PERMISSIONS.values())


@pytest.mark.parametrize("role", list(Role))
def test_a_member_may_what_their_role_or_a_lower_one_is_given(role: Role) -> None:
    member = Membership(role=role)
    for permission, lowest in PERMISSIONS.items():
        assert member.may(permission) == role.includes(lowest), (role, permission)
    assert member.permissions == {p for p, lowest in PERMISSIONS.items() if role.includes(lowest)}


def test_each_role_may_do_everything_the_roles_below_it_may() -> None:
    editor, reviewer, owner = (Membership(role=role).permissions for role in Role)
    assert editor < reviewer < owner
    assert owner == set(Permission)


def test_no_template_compares_role_strings() -> None:
    found = [
        f"{path.relative_to(TEMPLATES)}:{number}: {line.strip()}"
        for path in TEMPLATES.rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if ROLE_COMPARE.search(line)
    ]
    assert not found, "ask for a permission ({% if 'x' in may %}), not a role:\n" + "\n".join(found)


def test_pages_get_what_the_member_may_do_as_may(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    response = client.get(reverse("project_detail", kwargs={"slug": cast.alpha.slug}))
    assert response.context["may"] == Membership(role=Role.REVIEWER).permissions
    assert "freeze" in response.context["may"]
    assert "manage_members" not in response.context["may"]


def test_moving_one_permission_in_the_mapping_moves_its_pages(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Letting reviewers import candidates is the one line in PERMISSIONS."""
    imports = reverse("import_page", kwargs={"slug": cast.alpha.slug})
    candidates = reverse("import_candidates", kwargs={"slug": cast.alpha.slug})
    client.force_login(cast.reviewer)
    assert client.get(imports).status_code == 403
    assert client.post(candidates, {}).status_code == 403

    monkeypatch.setitem(PERMISSIONS, Permission.POOL_CANDIDATES, Role.REVIEWER)

    response = client.get(imports)
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="import-candidates"' in page
    assert 'id="import-documents"' not in page  # documents and queries stay the owner's
    assert client.post(candidates, {}).status_code == 200  # the form, with its errors
    assert client.post(reverse("import_documents", kwargs={"slug": cast.alpha.slug}), {}).status_code == 403
