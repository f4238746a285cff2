"""Production settings, migrations and the demo command, checked the way an operator runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from annotator.models import Membership, Project
from tests.conftest import Cast

ROOT = Path(__file__).resolve().parents[3]
PROD_ENV = {
    "DJANGO_DEBUG": "0",
    "DJANGO_SECRET_KEY": "q8Zr!v2Lp#9sWm4Tx@7Ky%3Nb^6Hd&1Fj*5Gc(0Ae)RuYiOo-PlKjHg",
    "DJANGO_ALLOWED_HOSTS": "lab.example.com",
    # Password reset mails need a real mail server in production (Django's check --deploy: mail.E001).
    "DJANGO_EMAIL_HOST": "smtp.example.com",
}


def manage(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_reports_nothing_under_production_settings() -> None:
    result = manage("check", "--deploy", "--fail-level", "DEBUG", env=PROD_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize("missing", ["DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS"])
def test_production_refuses_to_start_without_secret_key_or_hosts(missing: str) -> None:
    env = {k: v for k, v in PROD_ENV.items() if k != missing}
    result = manage("check", env=env)
    assert result.returncode != 0
    assert missing in result.stderr


def test_no_model_change_lacks_a_migration() -> None:
    result = manage("makemigrations", "--check", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr


def test_demo_refuses_to_run_in_production() -> None:
    result = manage("demo", env=PROD_ENV)
    assert result.returncode != 0
    assert "DJANGO_DEBUG=0" in result.stderr


def test_demo_is_idempotent_and_prints_the_logins(
    db: None, settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.DEBUG = True  # the test runner forces DEBUG off; the demo is for development
    call_command("demo")
    call_command("demo")
    out = capsys.readouterr().out
    project = Project.objects.get(slug="help-center-demo")
    assert project.name == "Help center demo"
    assert project.name_zh_hans == "帮助中心示例"
    assert Project.objects.filter(slug="help-center-demo").count() == 1
    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles == {"owner": "owner", "reviewer": "reviewer", "editor-a": "editor", "editor-b": "editor"}
    assert "ranking-lab-demo" in out and "editor-a" in out


def test_demo_command_raises_command_error_when_debug_is_off(db: None, settings: Any) -> None:
    settings.DEBUG = False
    with pytest.raises(CommandError):
        call_command("demo")


def test_every_model_is_registered_in_the_admin() -> None:
    from django.apps import apps
    from django.contrib import admin

    for app_label in ("annotator", "evaluation"):
        for model in apps.get_app_config(app_label).get_models():
            assert admin.site.is_registered(model), f"{model.__name__} is not registered in the admin"


def test_a_refused_request_is_logged_in_one_line_and_a_crash_with_its_traceback(
    client: Client, cast: Cast
) -> None:
    """A 403 is one log line, not a PermissionDenied traceback burying the real ones."""
    import logging

    from annotator.web.log_filters import OneLineForbidden

    console = next(
        h for h in logging.getLogger().handlers if any(isinstance(f, OneLineForbidden) for f in h.filters)
    )
    # Django's own logger writes through that handler alone: with DEBUG on, its own console
    # handler would print each 403 a second time, with the traceback.
    django_logger = logging.getLogger("django")
    streams = [h for h in django_logger.handlers if type(h) is logging.StreamHandler]  # not pytest's own
    assert not django_logger.propagate and streams
    assert all(any(isinstance(f, OneLineForbidden) for f in h.filters) for h in streams)
    lines: list[str] = []

    class Keep(logging.Handler):  # the console handler's filters, writing where the test can read
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    keep = Keep()
    keep.filters = console.filters
    logger = logging.getLogger("django.request")
    logger.addHandler(keep)
    try:
        client.force_login(cast.editor)
        assert client.get(reverse("pool_list", kwargs={"slug": "alpha"})).status_code == 403
    finally:
        logger.removeHandler(keep)
    assert lines == ["Forbidden (Permission denied): /p/alpha/pools/"]
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        crash = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "crash", (), sys.exc_info())
    crash.status_code = 500
    assert OneLineForbidden().filter(crash) and crash.exc_info is not None
