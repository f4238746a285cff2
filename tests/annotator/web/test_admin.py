"""Django's admin can look at everything, and changes nothing the app keeps history or provenance of.

Grades, their history, disputes, final grades, pairs, document and criteria versions, runs and
comparisons change only through the app's services; a pool stays in its project; memberships
follow the Members page's rules (a project keeps an owner).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.models import FinalGrade, Grade, GradeHistory, GradingSet, Membership, Pool, Project, Role
from evaluation.models import Comparison, Run, RunQuery
from tests.conftest import make_user

READ_ONLY = [
    "annotator.Document",
    "annotator.DocumentVersion",
    "annotator.Query",
    "annotator.CriteriaVersion",
    "annotator.Candidate",
    "annotator.Grade",
    "annotator.GradeHistory",
    "annotator.Dispute",
    "annotator.DisputeStatement",
    "annotator.FinalGrade",
    "annotator.PoolVersion",
    "annotator.PoolJudgment",
    "evaluation.RunQuery",
]


@pytest.fixture
def root(db: None, client: Client, settings: Any) -> Client:
    settings.DEBUG = True  # the demo refuses to run otherwise (its passwords are well known)
    call_command("demo", verbosity=0)
    settings.DEBUG = False
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def _admin_url(model: type, action: str, *args: object) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{action}", args=args)


@pytest.mark.parametrize("label", READ_ONLY)
def test_records_with_history_are_shown_but_cannot_be_added_changed_or_deleted(
    root: Client, label: str
) -> None:
    model = apps.get_model(label)
    row = model.objects.order_by("pk").first()
    assert row is not None, f"the demo has no {label}"
    before = model.objects.count()
    assert root.get(_admin_url(model, "changelist")).status_code == 200
    page = root.get(_admin_url(model, "change", row.pk))
    assert page.status_code == 200  # the view-only page
    assert 'name="_save"' not in page.content.decode()
    assert root.post(_admin_url(model, "change", row.pk), {}).status_code == 403
    assert root.post(_admin_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert root.get(_admin_url(model, "add")).status_code == 403
    action = {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"}
    root.post(_admin_url(model, "changelist"), action)
    assert model.objects.count() == before


def test_every_admin_page_of_the_demo_opens(root: Client) -> None:
    for model in admin.site._registry:
        assert root.get(_admin_url(model, "changelist")).status_code == 200, model
        row = model.objects.order_by("pk").first()
        if row is not None:
            assert root.get(_admin_url(model, "change", row.pk)).status_code == 200, model


def test_a_final_grade_edit_is_refused_and_the_grade_stays(root: Client) -> None:
    final = FinalGrade.objects.order_by("pk").first()
    assert final is not None
    grade, source = final.grade, final.source
    response = root.post(
        _admin_url(FinalGrade, "change", final.pk), {"grade": (grade + 1) % 4, "source": source}
    )
    assert response.status_code == 403
    final.refresh_from_db()
    assert (final.grade, final.source) == (grade, source)
    assert GradeHistory.objects.count() > 0 and Grade.objects.count() > 0


def test_a_pool_keeps_its_project_and_a_set_its_open_state(root: Client) -> None:
    pool = Pool.objects.order_by("pk").first()
    assert pool is not None
    other = Project.objects.create(name="Other", slug="other")
    response = root.post(_admin_url(Pool, "change", pool.pk), {"name": "Renamed", "project": other.pk})
    assert response.status_code == 302
    pool.refresh_from_db()
    assert (pool.name, pool.project_id) != ("Renamed", other.pk)
    assert pool.name == "Renamed" and pool.project_id != other.pk
    assert root.post(_admin_url(Pool, "delete", pool.pk), {"post": "yes"}).status_code == 403

    frozen = GradingSet.objects.filter(is_open=False).order_by("pk").first()
    assert frozen is not None
    elsewhere = Pool.objects.create(project=other, name="Other pool")
    before = (frozen.required_grades, frozen.pool_id, frozen.based_on_id, frozen.created_by_id)
    response = root.post(
        _admin_url(GradingSet, "change", frozen.pk),
        {
            "name": "Renamed set",
            "is_open": "on",
            "required_grades": frozen.required_grades + 1,
            "pool": elsewhere.pk,
            "based_on": "",
            "created_by": "",
            "project": other.pk,
        },
    )
    assert response.status_code == 302
    frozen.refresh_from_db()
    assert frozen.name == "Renamed set" and not frozen.is_open
    assert (frozen.required_grades, frozen.pool_id, frozen.based_on_id, frozen.created_by_id) == before
    assert frozen.project_id != other.pk


def test_memberships_keep_an_owner_and_removal_follows_the_members_page(root: Client) -> None:
    owner = Membership.objects.get(user__username="owner")
    assert owner.is_last_owner
    response = root.post(
        _admin_url(Membership, "change", owner.pk),
        {"project": owner.project_id, "user": owner.user_id, "role": "editor"},
    )
    assert response.status_code == 200
    assert "at least one owner" in response.content.decode()
    assert Membership.objects.get(pk=owner.pk).role == Role.OWNER
    assert root.post(_admin_url(Membership, "delete", owner.pk), {"post": "yes"}).status_code == 403

    editor = Membership.objects.get(user__username="editor-b", project=owner.project)
    assert root.post(_admin_url(Membership, "delete", editor.pk), {"post": "yes"}).status_code == 302
    assert not Membership.objects.filter(pk=editor.pk).exists()
    bulk = {"action": "delete_selected", "_selected_action": [owner.pk], "post": "yes"}
    root.post(_admin_url(Membership, "changelist"), bulk)
    assert Membership.objects.filter(pk=owner.pk).exists()


def test_runs_and_comparisons_are_not_deleted_from_the_admin(root: Client) -> None:
    for model in (Run, Comparison, RunQuery):
        row = model.objects.order_by("pk").first()
        assert row is not None
        assert root.post(_admin_url(model, "delete", row.pk), {"post": "yes"}).status_code == 403
        assert model.objects.filter(pk=row.pk).exists()


def test_the_only_active_owner_cannot_be_deactivated_in_the_admin(root: Client) -> None:
    """Unticking "active" on the only owner would leave the project with nobody to manage it."""
    from django.contrib.auth import get_user_model

    user_model = get_user_model()
    owner = user_model.objects.get(username="owner")
    url = reverse("admin:auth_user_change", args=[owner.pk])
    form = {"username": "owner", "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"}
    response = root.post(url, form)  # "is_active" left out: unticked
    assert response.status_code == 200
    assert "is the only active owner of" in response.content.decode()
    assert user_model.objects.get(pk=owner.pk).is_active
    editor = user_model.objects.get(username="editor-b")
    response = root.post(
        reverse("admin:auth_user_change", args=[editor.pk]), {**form, "username": "editor-b"}
    )
    assert response.status_code == 302
    assert not user_model.objects.get(pk=editor.pk).is_active  # anyone else can be deactivated
