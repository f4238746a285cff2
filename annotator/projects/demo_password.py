"""The guard against a production site whose demo accounts keep the published password.

`manage.py demo` refuses to run with DJANGO_DEBUG=0, but a database made in development can be
deployed as it is. While any demo account (by its username) is active with the password that the
README publishes, owners and superusers see a warning on every page (`WARN_DEMO_PASSWORD`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.http import HttpRequest
from django.utils.translation import ngettext

from annotator.management.commands.demo import DEMO_PASSWORD, DEMO_USERS
from annotator.models import Membership, Role
from annotator.web.text import enumeration


@lru_cache(maxsize=256)
def _is_published_password(encoded: str) -> bool:
    # Keyed by the stored hash, salt included: a changed password is a new key. One hash costs
    # ~0.3 s, so each stored hash is checked once per process, not on every page.
    return check_password(DEMO_PASSWORD, encoded)


def demo_accounts_with_published_password() -> list[str]:
    """Usernames of the active demo accounts that still have the demo's password."""
    rows = (
        get_user_model()
        .objects.filter(username__in=[username for username, _ in DEMO_USERS], is_active=True)
        .values_list("username", "password")
    )
    return sorted(username for username, encoded in rows if _is_published_password(encoded))


def warning_for(names: list[str]) -> str:
    return ngettext(
        "The demo account %(names)s still has the published password “%(password)s”: anyone can "
        "sign in with it. Change its password (manage.py changepassword NAME) or deactivate it in "
        "the admin.",
        "The demo accounts %(names)s still have the published password “%(password)s”: anyone can "
        "sign in with them. Change their passwords (manage.py changepassword NAME) or deactivate "
        "them in the admin.",
        len(names),
    ) % {"names": enumeration(names), "password": DEMO_PASSWORD}


def _warning_for(request: HttpRequest) -> Callable[[], str]:
    def warning() -> str:
        user = request.user
        if not user.is_authenticated:
            return ""
        if not user.is_superuser and not Membership.objects.filter(user=user, role=Role.OWNER).exists():
            return ""
        names = demo_accounts_with_published_password()
        return warning_for(names) if names else ""

    return warning


def demo_password_warning(request: HttpRequest) -> dict[str, Any]:
    """A context processor. A callable, so the queries run only when base.html shows the banner
    (whole pages, not htmx fragments)."""
    if not settings.WARN_DEMO_PASSWORD:
        return {}
    return {"demo_password_warning": _warning_for(request)}
