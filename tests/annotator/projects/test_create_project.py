"""Starting a project of one's own: accounts and the first owner from the command line, the
documented way past the demo."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.models import Membership, Project, Role


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_a_project_with_its_owner_then_an_editor_the_owner_adds(db: None, client: Client) -> None:
    out = run(
        "create_project",
        "help-center",
        "Help center",
        "--owner",
        "alice",
        "--create-owner",
        "--name-zh",
        "帮助中心",
    )
    assert "Set a password with: python manage.py changepassword alice" in out
    assert "Created project 'Help center' at /p/help-center/ with owner alice." in out
    alice = User.objects.get(username="alice")
    assert not alice.has_usable_password()
    project = Project.objects.get(slug="help-center")
    assert project.name_zh_hans == "帮助中心"
    assert Membership.objects.get(project=project).role == Role.OWNER

    run("create_user", "bo")
    alice.set_password("pw-for-alice-123")
    alice.save()
    client.force_login(alice)
    client.post(reverse("member_list", kwargs={"slug": "help-center"}), {"username": "bo", "role": "editor"})
    assert Membership.objects.get(project=project, user__username="bo").role == Role.EDITOR


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("create_project", "x", "X", "--owner", "ghost"), "No active user 'ghost'"),
        (("create_project", "bad slug", "X", "--owner", "alice"), "is not a valid slug"),
        (("create_project", "taken", "X", "--owner", "alice"), "exists already"),
        (("create_project", "x", "  ", "--owner", "alice"), "needs a name"),
        (("create_project", "x", "N" * 201, "--owner", "alice"), "name has at most 200 characters"),
        (("create_user", "alice"), "A user 'alice' exists already"),
        (("create_user", "bad name!"), "Cannot create user 'bad name!'"),
    ],
)
def test_bad_input_is_refused_with_exit_status_2_and_nothing_made(
    db: None, args: tuple[str, ...], message: str
) -> None:
    run("create_user", "alice")
    Project.objects.create(slug="taken", name="Taken")
    before = (Project.objects.count(), User.objects.count(), Membership.objects.count())
    with pytest.raises(CommandError, match=message) as refused:
        run(*args)
    assert refused.value.returncode == 2
    assert (Project.objects.count(), User.objects.count(), Membership.objects.count()) == before
