"""Sign-in throttling: an account locks after AXES_FAILURE_LIMIT failures from anywhere, an address
after LOGIN_ADDRESS_FAILURE_LIMIT over any accounts; while locked the right password fails too."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client, RequestFactory
from django.urls import reverse
from django.utils import timezone

from annotator.projects.sign_in import client_address
from tests.conftest import PASSWORD, Cast

LOCKED = "signing in is locked"


def sign_in(client: Client, username: str, password: str, address: str = "10.0.0.1") -> Any:
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def fail(client: Client, username: str, times: int, address: str = "10.0.0.1") -> Any:
    response = None
    for _ in range(times):
        response = sign_in(client, username, "not the password", address)
    return response


def test_an_account_locks_at_the_limit_and_then_refuses_the_right_password(cast: Cast, settings: Any) -> None:
    client = Client()
    limit = settings.AXES_FAILURE_LIMIT
    before = fail(client, "ed", limit - 1)
    assert before.status_code == 200 and "match. Please try again" in before.content.decode()
    locked = fail(client, "ed", 1)
    assert locked.status_code == 429 and LOCKED in locked.content.decode()
    right = sign_in(client, "ed", PASSWORD)
    assert right.status_code == 429 and LOCKED in right.content.decode()
    assert "_auth_user_id" not in client.session


def test_an_account_stays_locked_from_another_address_while_others_sign_in(cast: Cast, settings: Any) -> None:
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        fail(client, "ed", 1, address=f"10.0.1.{n}")
    assert sign_in(client, "ed", PASSWORD, address="10.0.2.1").status_code == 429
    other = sign_in(client, "eve", PASSWORD, address="10.0.1.0")
    assert other.status_code == 302 and client.session["_auth_user_id"] == str(cast.editor2.pk)


def test_an_address_locks_after_its_own_limit_over_many_accounts(cast: Cast, settings: Any) -> None:
    settings.AXES_FAILURE_LIMIT, settings.LOGIN_ADDRESS_FAILURE_LIMIT = 3, 6
    client = Client()
    for name in ("a", "b", "c"):  # two failures each: no account reaches 3, the address reaches 6
        fail(client, name, 2)
    assert sign_in(client, "rita", PASSWORD).status_code == 429
    elsewhere = sign_in(client, "rita", PASSWORD, address="10.9.9.9")
    assert elsewhere.status_code == 302 and client.session["_auth_user_id"] == str(cast.reviewer.pk)


def test_the_lockout_says_when_to_try_again_in_both_languages(cast: Cast, settings: Any) -> None:
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    client = Client()
    english = fail(client, "ed", settings.AXES_FAILURE_LIMIT).content.decode()
    until = timezone.now() + timedelta(minutes=15)
    assert "Try again in 15 minutes, after" in english and "An administrator can unlock it" in english
    assert f"{until:%-I}:{until:%M}" in english  # the time the wait ends (English TIME_FORMAT "P")
    client.cookies["django_language"] = "zh-hans"
    chinese = sign_in(client, "ed", PASSWORD).content.decode()
    assert "15 分钟后再试" in chinese and f"{until:%H:%M}" in chinese
    assert 'role="alert"' in chinese and "Try again" not in chinese


def test_the_lock_lifts_by_itself_after_the_cool_off(cast: Cast, settings: Any) -> None:
    client = Client()
    fail(client, "ed", settings.AXES_FAILURE_LIMIT)
    assert sign_in(client, "ed", PASSWORD).status_code == 429
    AccessAttempt.objects.update(
        attempt_time=timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    )
    assert sign_in(client, "ed", PASSWORD).status_code == 302


def test_the_reset_command_unlocks_an_account(cast: Cast, settings: Any) -> None:
    client = Client()
    fail(client, "ed", settings.AXES_FAILURE_LIMIT)
    call_command("axes_reset_username", "ed")
    assert sign_in(client, "ed", PASSWORD).status_code == 302


def test_deleting_the_attempt_in_the_admin_unlocks_an_account(cast: Cast, settings: Any) -> None:
    fail(Client(), "ed", settings.AXES_FAILURE_LIMIT)
    attempt = AccessAttempt.objects.get(username="ed")
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("root", "root@example.com", "x"))
    url = reverse("admin:axes_accessattempt_delete", args=[attempt.pk])
    assert admin.get(reverse("admin:axes_accessattempt_changelist")).status_code == 200
    assert admin.post(url, {"post": "yes"}).status_code == 302
    assert sign_in(Client(), "ed", PASSWORD).status_code == 302


def test_a_failure_with_no_lock_leaves_the_right_password_working(cast: Cast, settings: Any) -> None:
    client = Client()
    fail(client, "ed", settings.AXES_FAILURE_LIMIT - 1)
    assert sign_in(client, "ed", PASSWORD).status_code == 302


@pytest.mark.parametrize(
    ("proxies", "meta", "expected"),
    [
        (0, {"REMOTE_ADDR": "192.0.2.7", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}, "192.0.2.7"),
        # The proxy appended the address it saw; the first entry is the client's own claim.
        (1, {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 198.51.100.1"}, "198.51.100.1"),
        (
            2,
            {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 198.51.100.1, 10.0.0.2"},
            "198.51.100.1",
        ),
        (1, {"REMOTE_ADDR": "127.0.0.1"}, "127.0.0.1"),  # no header: the proxy's own address
    ],
)
def test_the_counted_address_is_the_one_the_trusted_proxies_saw(
    settings: Any, proxies: int, meta: dict[str, str], expected: str
) -> None:
    settings.LOGIN_PROXY_COUNT = proxies
    request = RequestFactory().post("/accounts/login/", **meta)  # type: ignore[arg-type]
    assert client_address(request) == expected
