"""Request hygiene that every view relies on."""

from __future__ import annotations

from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.utils.translation import gettext as _


class RejectNulCharactersMiddleware:
    """Answer 400 to a NUL character in a query string or form field.

    No ID, search or setting of this app can contain one, and PostgreSQL refuses NUL in text
    columns: without this, a crafted URL would reach the database and become a server error.
    Form fields already refuse NUL (Django's validator); this covers views that read
    `request.GET` directly (filters, search boxes, what-if parameters).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        params = [request.GET]
        if request.method == "POST" and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            params.append(request.POST)  # parsed once; the view reuses it
        for query in params:
            for key, values in query.lists():
                if "\x00" in key or any("\x00" in v for v in values):
                    return HttpResponseBadRequest(
                        _("The parameter “%(name)s” contains a NUL character, which no field here accepts.")
                        % {"name": key.replace("\x00", "\\0")},
                        content_type="text/plain; charset=utf-8",
                    )
        return self.get_response(request)


class PrivatePagesMiddleware:
    """Headers that keep a signed-in person's pages true to the moment.

    - `Vary: HX-Request` on every response: one URL answers an htmx request with a fragment and a
      navigation with the whole page, so no cache may hand one out for the other.
    - `no-store` on pages for signed-in users (unless a view set its own Cache-Control): pages show
      grades, disputes and progress that change with every click; without it the Back button
      showed a just-saved grade as still missing, from the browser's page cache.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        patch_vary_headers(response, ("HX-Request",))
        if request.user.is_authenticated and not response.has_header("Cache-Control"):
            add_never_cache_headers(response)
        return response


TIME_ZONE_COOKIE = "tz"


class BrowserTimeZoneMiddleware:
    """Show times in the reader's time zone, as their browser names it (app.js sets the cookie).

    Times are stored in UTC; shown in UTC, an editor in Beijing read every time 8 hours off (QA).
    An unknown or malformed name is ignored (UTC, as before), never an error. The page footer
    says which zone the times are in.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        name = request.COOKIES.get(TIME_ZONE_COOKIE, "")
        zone = _zone(name) if 0 < len(name) <= 64 else None
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # e.g. "../x", "", a directory
        return None
