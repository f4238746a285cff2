"""The project overview tells each person what is waiting for them, and nothing their role may not see."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from annotator.management.commands.demo import build_demo
from annotator.models import PoolVersion
from tests.conftest import Cast


def overview(client: Client, username: str) -> str:
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))
    return client.get(reverse("project_detail", kwargs={"slug": "help-center-demo"})).content.decode()


def test_an_editor_sees_their_queue_and_disputes_but_no_pools_or_comparisons(
    db: None, client: Client
) -> None:
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
    nobody is asked to grade them, so the overview must not count them."""
    from django.contrib.auth import get_user_model

    from annotator.grading.queue import queue_candidates
    from annotator.pools.services import grading_set_create_from_version

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


def test_a_new_project_shows_its_owner_the_steps_and_its_editors_why_nothing_waits(
    db: None, client: Client
) -> None:
    """An empty project's overview says what to set up, not only "nothing is waiting"."""
    from django.contrib.auth import get_user_model

    from annotator.models import Document, Membership, Project, Role

    users = get_user_model().objects
    owner, editor = users.create_user("o1"), users.create_user("e1")
    project = Project.objects.create(slug="fresh", name="Fresh")
    Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    url = reverse("project_detail", kwargs={"slug": "fresh"})
    client.force_login(owner)
    html = client.get(url).content.decode()
    assert "Getting started" in html
    steps = [
        "Read the grading criteria",
        "Import the documents",
        "Import the queries",
        "Create a grading set",
        "Add candidates to it",
        "Add the editors",
    ]
    positions = [html.index(step) for step in steps]
    assert positions == sorted(positions) and "✓ done" not in html

    Document.upsert(project=project, external_id="A", title="", body="a")
    Membership.objects.create(project=project, user=editor, role=Role.EDITOR)
    html = client.get(url).content.decode()
    assert html.count("✓ done") == 2
    # The owner is the one who creates sets: told where, not "an owner creates one".
    assert (
        "No grading set is open: <a "
        f'href="{reverse("grading_set_list", kwargs={"slug": project.slug})}">create one</a>' in html
    )
    client.force_login(editor)
    html = client.get(url).content.decode()
    assert "Getting started" not in html  # owners set a project up
    assert "No grading set is open yet: an owner creates one and adds its pairs." in html


def test_a_set_up_project_shows_no_steps(db: None, client: Client) -> None:
    build_demo()
    assert "Getting started" not in overview(client, "owner")


def test_a_reviewer_who_graded_a_waiting_dispute_is_told_another_reviewer_settles_it(
    db: None, client: Client
) -> None:
    """The count says which disputes this reviewer graded and so may not settle."""
    from annotator.models import Membership, Role

    build_demo()
    # editor-a graded the pair of the demo's waiting dispute; made a reviewer, she may not settle it.
    Membership.objects.filter(user__username="editor-a", project__slug="help-center-demo").update(
        role=Role.REVIEWER
    )
    html = overview(client, "editor-a")
    assert "Disputes waiting for a reviewer: 1" in html
    assert "You graded 1 of them: another reviewer settles it." in html
    assert "You graded" not in overview(client, "reviewer")


def test_disputes_waiting_for_someone_who_left_are_counted_apart_as_the_queue_lists_them(
    cast: Cast, client: Client
) -> None:
    """Disputes waiting for a deactivated editor are counted apart, as the queue page lists them,
    so the count matches the review table."""
    from annotator.disputes.services import dispute_give_reason
    from tests.factories import disputed_pair, in_review

    in_review(cast.alpha, cast.editor, cast.editor2, (0, 3), document="A")
    stuck = disputed_pair(cast.alpha, cast.editor, cast.editor2, (1, 3), document="B")
    dispute_give_reason(
        dispute=stuck, editor=cast.editor, reason="The deadline is missing."
    )  # editor2's turn
    cast.editor2.is_active = False
    cast.editor2.save(update_fields=["is_active"])
    client.force_login(cast.reviewer)
    html = client.get(reverse("project_detail", kwargs={"slug": cast.alpha.slug})).content.decode()
    assert "Disputes waiting for a reviewer: 1<" in html
    assert "Disputes waiting for someone who left: 1<" in html and "#stuck-heading" in html


def test_each_open_set_shows_its_pairs_done_out_of_all(db: None, client: Client) -> None:
    from annotator.models import Candidate, GradingSet

    build_demo()
    html = overview(client, "owner")
    for grading_set in GradingSet.objects.filter(project__slug="help-center-demo", is_open=True):
        pairs = Candidate.objects.filter(grading_set=grading_set)
        done, total = pairs.filter(done=True).count(), pairs.count()
        assert total > 0
        assert f'max="{total}" value="{done}"' in html
        assert f"{done} of {total}</span>" in html
