"""In production (WARN_DEMO_PASSWORD), owners are warned on every page while a demo account keeps
the published password."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotator.management.commands.demo import DEMO_PASSWORD
from tests.conftest import Cast

WARNING = "still has the published password"


@pytest.fixture
def demo_owner(cast: Cast) -> Any:
    return get_user_model().objects.create_user("owner", password=DEMO_PASSWORD)


def page_for(user: Any) -> str:
    client = Client()
    client.force_login(user)
    return client.get(reverse("home")).content.decode()


def test_owners_see_the_warning_in_production(cast: Cast, demo_owner: Any, settings: Any) -> None:
    settings.WARN_DEMO_PASSWORD = True
    html = page_for(cast.owner)
    assert WARNING in html and "demo account owner" in html and 'role="alert"' in html


def test_editors_are_not_warned(cast: Cast, demo_owner: Any, settings: Any) -> None:
    settings.WARN_DEMO_PASSWORD = True
    assert WARNING not in page_for(cast.editor)


def test_the_warning_goes_once_the_password_changes(cast: Cast, demo_owner: Any, settings: Any) -> None:
    settings.WARN_DEMO_PASSWORD = True
    demo_owner.set_password("something only the team knows 7")
    demo_owner.save()
    assert WARNING not in page_for(cast.owner)


def test_a_deactivated_demo_account_is_no_warning(cast: Cast, demo_owner: Any, settings: Any) -> None:
    settings.WARN_DEMO_PASSWORD = True
    demo_owner.is_active = False
    demo_owner.save()
    assert WARNING not in page_for(cast.owner)


def test_development_shows_no_warning(cast: Cast, demo_owner: Any, settings: Any) -> None:
    settings.WARN_DEMO_PASSWORD = False
    assert WARNING not in page_for(cast.owner)


def test_production_turns_the_warning_on() -> None:
    from tests.annotator.web.test_settings import PROD_ENV, manage

    code = "from django.conf import settings; print(settings.WARN_DEMO_PASSWORD)"
    assert manage("shell", "--no-imports", "-c", code, env=PROD_ENV).stdout.strip() == "True"
    assert manage("shell", "--no-imports", "-c", code).stdout.strip() == "False"
