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


def test_the_overview_counts_the_pairs_the_queue_would_give(db: None, client: Client) -> None:
    """A set continued from a frozen version holds copied pairs that already have final grades:
    nobody is asked to grade them, so the overview must not count them (it did; QA report)."""
    from django.contrib.auth import get_user_model

    from annotator.services.grading import queue_candidates
    from annotator.services.pools import grading_set_create_from_version

    build_demo()
    users = get_user_model().objects
    version = PoolVersion.objects.order_by("pk").first()
    assert version is not None
    copied = grading_set_create_from_version(version=version, by=users.get(username="reviewer"))
    assert copied.candidates.filter(final_grade__isnull=False).exists()
    editor = users.get(username="editor-a")
    waiting = queue_candidates(project=version.pool.project, editor=editor).count()
    assert waiting > 0  # the demo's open set still has pairs for editor-a
    line = f"Pairs waiting for your grade: {waiting}<"
    assert line in overview(client, "editor-a")
    queue = client.get(reverse("grading_queue", kwargs={"slug": "help-center-demo"})).content.decode()
    assert line in queue
