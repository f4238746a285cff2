"""The project overview tells each person what is waiting for them, and nothing their role may not see."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotator.management.commands.demo import build_demo
from annotator.models import PoolVersion


def overview(client: Client, username: str) -> str:
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))
    return client.get(reverse("project_detail", kwargs={"slug": "help-center-demo"})).content.decode()


def test_an_editor_sees_their_queue_and_disputes_but_no_pools_or_comparisons(db: None, client: Client) -> None:
    build_demo()
    html = overview(client, "editor-a")
    # The demo's open set: editor-b graded K, L and M; editor-a only L (now in dispute).
    assert "Pairs waiting for your grade: 2" in html
    assert "Open disputes you are part of: 1" in html
    assert "Frozen pools" not in html and "Comparisons" not in html
    assert "甲" not in html  # no system name reaches an editor


def test_a_reviewer_sees_the_review_queue_pools_and_comparisons(db: None, client: Client) -> None:
    build_demo()
    html = overview(client, "reviewer")
    assert "Disputes waiting for a reviewer: 1" in html
    for version in PoolVersion.objects.select_related("pool"):
        assert f"{version.pool.name} v{version.number}" in html
        assert version.sha256[:12] in html
    assert "甲 vs 乙" in html
    assert "Members" not in html  # owners only


def test_an_owner_also_sees_the_project_settings(db: None, client: Client) -> None:
    build_demo()
    html = overview(client, "owner")
    assert reverse("member_list", kwargs={"slug": "help-center-demo"}) in html
    assert reverse("import_page", kwargs={"slug": "help-center-demo"}) in html
