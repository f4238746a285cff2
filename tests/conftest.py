"""Shared test helpers: a tiny user factory and a cast with stated roles.

The cast, in project "Alpha": owner Olivia, reviewer Rita, editors Ed and Eve. Otto owns project
"Beta" and is a member of nothing else: Otto must never see anything of Alpha's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import DatabaseError, connection
from django.utils import translation

from annotator.grading import counters
from annotator.models import Membership, Project, Role

PASSWORD = "correct horse battery staple"


def make_user(username: str, **kwargs: Any) -> AbstractUser:
    kwargs.setdefault("email", f"{username}@example.com")
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **kwargs)
    return user


@pytest.fixture(autouse=True)
def fast_password_hasher(settings: Any) -> None:
    # PBKDF2 at production strength costs ~0.3 s per user; tests create many.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def language_reset() -> Iterator[None]:
    """Each test starts in the default language: a request in Chinese activates zh-hans on the
    thread (LocaleMiddleware never deactivates), and a later test reading English messages
    outside a request would find it still active."""
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def counters_agree(request: pytest.FixtureRequest) -> Iterator[None]:
    """After every test that uses the database, the grading counters that triggers keep
    (annotator/grading/counters.py) must equal a recount: the whole suite exercises them."""
    names = request.fixturenames
    if not (
        {"db", "transactional_db", "live_server"} & set(names) or request.node.get_closest_marker("django_db")
    ):
        yield
        return
    request.getfixturevalue("transactional_db" if {"transactional_db", "live_server"} & set(names) else "db")
    yield
    try:
        found = counters.drift(connection)
    except DatabaseError:  # the test left its transaction broken on purpose (an expected error)
        return
    assert found == [], found


@dataclass
class Cast:
    alpha: Project
    beta: Project
    owner: AbstractUser
    reviewer: AbstractUser
    editor: AbstractUser
    editor2: AbstractUser
    outsider: AbstractUser

    def by_role(self, role: Role) -> AbstractUser:
        return {Role.OWNER: self.owner, Role.REVIEWER: self.reviewer, Role.EDITOR: self.editor}[role]


@pytest.fixture
def cast(db: None) -> Cast:
    return make_cast()


def make_cast() -> Cast:
    """Alpha (Olivia owns it, Rita reviews, Ed and Eve edit) and Beta (Otto's): also the seed of the
    browser tests that run the app as its own processes (tests/processes.py)."""
    alpha = Project.objects.create(name="Alpha", slug="alpha")
    beta = Project.objects.create(name="Beta", slug="beta")
    c = Cast(
        alpha=alpha,
        beta=beta,
        owner=make_user("olivia"),
        reviewer=make_user("rita"),
        editor=make_user("ed"),
        editor2=make_user("eve"),
        outsider=make_user("otto"),
    )
    Membership.objects.create(project=alpha, user=c.owner, role=Role.OWNER)
    Membership.objects.create(project=alpha, user=c.reviewer, role=Role.REVIEWER)
    Membership.objects.create(project=alpha, user=c.editor, role=Role.EDITOR)
    Membership.objects.create(project=alpha, user=c.editor2, role=Role.EDITOR)
    Membership.objects.create(project=beta, user=c.outsider, role=Role.OWNER)
    return c
