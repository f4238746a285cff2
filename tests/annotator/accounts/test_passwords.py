"""Passwords without a shell: Django's change view for the signed-in, and a reset by email."""

from __future__ import annotations

import re
from typing import Any

from axes.models import AccessAttempt
from django.core import mail
from django.test import Client
from django.urls import reverse

from tests.annotator.web.test_settings import PROD_ENV, manage
from tests.conftest import PASSWORD, Cast

NEW = "a new and long passphrase 42"


def test_the_header_offers_change_password_to_the_signed_in(cast: Cast, client: Client) -> None:
    assert f'href="{reverse("password_change")}"' not in client.get(reverse("login")).content.decode()
    client.force_login(cast.editor)
    assert f'href="{reverse("password_change")}"' in client.get(reverse("home")).content.decode()


def test_a_signed_in_user_changes_the_password_and_stays_signed_in(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    url = reverse("password_change")
    wrong = client.post(url, {"old_password": "nope", "new_password1": NEW, "new_password2": NEW})
    assert wrong.status_code == 200 and "Your old password was entered incorrectly" in wrong.content.decode()
    done = client.post(url, {"old_password": PASSWORD, "new_password1": NEW, "new_password2": NEW})
    assert done["Location"] == reverse("password_change_done")
    cast.editor.refresh_from_db()
    assert cast.editor.check_password(NEW) and not cast.editor.check_password(PASSWORD)
    assert client.get(reverse("home")).status_code == 200  # the session survived the change


def test_a_weak_new_password_is_refused_with_the_reason(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    weak = client.post(
        reverse("password_change"), {"old_password": PASSWORD, "new_password1": "123", "new_password2": "123"}
    )
    assert weak.status_code == 200 and "This password is too short" in weak.content.decode()
    cast.editor.refresh_from_db()
    assert cast.editor.check_password(PASSWORD)


def reset_link(message: Any) -> str:
    found = re.search(r"https?://[^/\s]+(/accounts/password/reset/[^\s]+/)", message.body)
    assert found, message.body
    return found.group(1)


def test_a_reset_by_email_sets_a_new_password_that_signs_in(cast: Cast, client: Client) -> None:
    sent = client.post(reverse("password_reset"), {"email": cast.editor.email})
    assert sent["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == [cast.editor.email]
    assert "“ed”" in mail.outbox[0].body and mail.outbox[0].subject == "Reset your ranking-lab password"
    form = client.get(reset_link(mail.outbox[0]), follow=True)
    assert "new_password1" in form.content.decode()
    done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    assert done["Location"] == reverse("password_reset_complete")
    signed_in = client.post(reverse("login"), {"username": "ed", "password": NEW})
    assert signed_in.status_code == 302 and client.session["_auth_user_id"] == str(cast.editor.pk)


def test_a_reset_link_works_only_once(cast: Cast, client: Client) -> None:
    client.post(reverse("password_reset"), {"email": cast.editor.email})
    link = reset_link(mail.outbox[0])
    form = client.get(link, follow=True)
    client.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    again = Client().get(link, follow=True).content.decode()
    assert "This link no longer works" in again and "new_password1" not in again


def test_an_unknown_address_gets_the_same_answer_and_no_mail(cast: Cast, client: Client) -> None:
    known = client.post(reverse("password_reset"), {"email": cast.editor.email})
    unknown = client.post(reverse("password_reset"), {"email": "nobody@example.com"})
    assert unknown["Location"] == known["Location"] == reverse("password_reset_done")
    assert len(mail.outbox) == 1


def test_the_reset_email_is_in_the_language_of_the_page(cast: Cast, client: Client) -> None:
    client.cookies["django_language"] = "zh-hans"
    client.post(reverse("password_reset"), {"email": cast.editor.email})
    assert mail.outbox[0].subject == "重置你的 ranking-lab 密码"
    assert "要设置新密码" in mail.outbox[0].body and "To choose" not in mail.outbox[0].body


def test_a_reset_ends_the_accounts_lockout(cast: Cast, client: Client, settings: Any) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(reverse("login"), {"username": "ed", "password": "wrong"})
    assert client.post(reverse("login"), {"username": "ed", "password": PASSWORD}).status_code == 429
    client.post(reverse("password_reset"), {"email": cast.editor.email})
    form = client.get(reset_link(mail.outbox[0]), follow=True)
    client.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    assert not AccessAttempt.objects.filter(username="ed").exists()
    assert client.post(reverse("login"), {"username": "ed", "password": NEW}).status_code == 302


def test_smtp_is_configured_from_the_environment() -> None:
    code = (
        "from django.conf import settings; o = settings.MAILERS['default']; "
        "print(o['BACKEND'], o.get('OPTIONS'))"
    )
    smtp = {**PROD_ENV, "DJANGO_EMAIL_HOST": "mail.example.com", "DJANGO_EMAIL_USER": "lab"}
    result = manage("shell", "--no-imports", "-c", code, env=smtp)
    assert "smtp.EmailBackend" in result.stdout, result.stderr
    assert "'host': 'mail.example.com'" in result.stdout and "'port': 587" in result.stdout
    assert "'use_tls': True" in result.stdout and "'username': 'lab'" in result.stdout
    console = manage("shell", "--no-imports", "-c", code)
    assert "console.EmailBackend" in console.stdout, console.stderr


def test_check_deploy_stays_clean_with_limits_set() -> None:
    env = {**PROD_ENV, "DJANGO_LOGIN_FAILURE_LIMIT": "10", "DJANGO_PROXY_COUNT": "1"}
    result = manage("check", "--deploy", "--fail-level", "DEBUG", env=env)
    assert result.returncode == 0, result.stdout + result.stderr


def test_check_deploy_says_when_production_has_no_mail_server() -> None:
    env = {k: v for k, v in PROD_ENV.items() if k != "DJANGO_EMAIL_HOST"}
    result = manage("check", "--deploy", env=env)
    assert result.returncode != 0 and "mail.E001" in result.stderr


def test_a_malformed_limit_or_mail_setting_refuses_to_start() -> None:
    limit = manage("check", env={"DJANGO_LOGIN_FAILURE_LIMIT": "five"})
    assert limit.returncode != 0 and "DJANGO_LOGIN_FAILURE_LIMIT must be a whole number" in limit.stderr
    both = manage("check", env={"DJANGO_EMAIL_HOST": "m", "DJANGO_EMAIL_SSL": "1", "DJANGO_EMAIL_TLS": "1"})
    assert both.returncode != 0 and "not both" in both.stderr
