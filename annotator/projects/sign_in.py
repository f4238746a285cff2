"""Sign-in throttling, on top of django-axes (settings: AXES_*, LOGIN_ADDRESS_FAILURE_LIMIT).

An account locks after AXES_FAILURE_LIMIT failed sign-ins within the cool-off, wherever they came
from; an address locks after LOGIN_ADDRESS_FAILURE_LIMIT failures over any accounts. While locked,
even the right password is refused, and each further failure restarts the cool-off. Unlocking:
the admin's "Access attempts" (delete the row) or `manage.py axes_reset_username NAME` /
`axes_reset_ip ADDRESS`.
"""

from __future__ import annotations

import math
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_cool_off
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import QuerySet, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import time_format
from django.utils.translation import ngettext


def _failures(attempts: QuerySet[Any]) -> int:
    return attempts.aggregate(n=Sum("failures_since_start"))["n"] or 0


class AccountOrAddressHandler(AxesDatabaseHandler):
    """Axes compares one failure count with one limit; this count reaches the account's limit
    when either the account's failures or the address's (against its larger limit) do."""

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        by_account, by_address = (_failures(a) for a in self.get_user_attempts(request, credentials))
        if by_address >= settings.LOGIN_ADDRESS_FAILURE_LIMIT:
            return max(by_account, settings.AXES_FAILURE_LIMIT)
        return by_account


def client_address(request: HttpRequest) -> str:
    """The address a sign-in counts against: REMOTE_ADDR, or behind LOGIN_PROXY_COUNT proxies the
    entry they appended to X-Forwarded-For (the ones before it the client may have forged)."""
    proxies = settings.LOGIN_PROXY_COUNT
    if proxies:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if len(forwarded) >= proxies:
            return forwarded[-proxies]
    return request.META.get("REMOTE_ADDR", "")


def lockout_message(request: HttpRequest) -> str:
    """When to try again: this refusal was itself a failure, so the wait runs from now."""
    cool_off = get_cool_off(request)
    minutes = math.ceil(cool_off.total_seconds() / 60) if cool_off else 0
    until = time_format(timezone.localtime(timezone.now() + cool_off)) if cool_off else ""
    return ngettext(
        "Too many failed sign-ins for this account or from this network: signing in is locked. "
        "Try again in %(minutes)d minute, after %(time)s; each further attempt restarts the wait. "
        "An administrator can unlock it sooner.",
        "Too many failed sign-ins for this account or from this network: signing in is locked. "
        "Try again in %(minutes)d minutes, after %(time)s; each further attempt restarts the wait. "
        "An administrator can unlock it sooner.",
        minutes,
    ) % {"minutes": minutes, "time": until}


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """The login page again, with the lockout said in the reader's language (429)."""
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    form = AuthenticationForm(request, initial={"username": username})
    context = {
        "form": form,
        "locked_out": lockout_message(request),
        "next": request.POST.get("next", request.GET.get("next", "")),
    }
    return render(request, "registration/login.html", context, status=429)
