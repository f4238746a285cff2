"""Request hygiene that every view relies on."""

from __future__ import annotations

import logging
from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.template.defaultfilters import filesizeformat
from django.utils import timezone
from django.utils.cache import add_never_cache_headers, patch_vary_headers
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.web.http import same_site_referer
from annotator.web.outage import database_unreachable, unreachable_response

logger = logging.getLogger(__name__)

# Said by DatabaseBusyMiddleware's page and, for a request htmx sent, by the page's own script
# (base.html's data-busy, through the `project` context processor).
BUSY_MESSAGE = gettext_lazy(
    "The database is busy writing something large (an import, most likely), so nothing was saved. "
    "Try again in a minute."
)


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
        if request.method == "POST" and request.content_type in (
            "application/x-www-form-urlencoded",
            "multipart/form-data",
        ):
            try:
                params.append(request.POST)  # parsed once; the view reuses it
            except (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent, MultiPartParserError) as error:
                return _refused_request(request, error)
        for query in params:
            for key, values in query.lists():
                if "\x00" in key or any("\x00" in v for v in values):
                    return HttpResponseBadRequest(
                        _("The parameter “%(name)s” contains a NUL character, which no field here accepts.")
                        % {"name": key.replace("\x00", "\\0")},
                        content_type="text/plain; charset=utf-8",
                    )
        return self.get_response(request)


def _refused_request(request: HttpRequest, error: Exception) -> HttpResponse:
    """A post beyond Django's limits, read first here: a page saying which limit and that nothing
    was saved, not Django's bare 400 that replaces the whole page and logs a traceback. The view
    never runs, so nothing was written.

    An htmx post gets the sentence in the page's message area (htmx does not swap a 4xx).
    """
    if isinstance(error, RequestDataTooBig):
        limit = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        message, status = (
            _(
                "What was sent is larger than the %(limit)s one form may carry (files aside). "
                "Nothing was saved: send less at once, or as a file."
            )
            % {"limit": limit},
            413,
        )
    elif isinstance(error, TooManyFilesSent):
        message, status = (
            _(
                "More than %(limit)d files were sent at once. Nothing was saved: send them in "
                "groups of at most %(limit)d."
            )
            % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FILES},
            400,
        )
    elif isinstance(error, TooManyFieldsSent):
        message, status = (
            _("The form sent more than %(limit)d fields, more than any form here has. Nothing was saved.")
            % {"limit": settings.DATA_UPLOAD_MAX_NUMBER_FIELDS},
            400,
        )
    else:
        message, status = (
            _(
                "The upload could not be read (%(detail)s). Nothing was saved: try again, and "
                "give the file a shorter name if it has a very long one."
            )
            % {"detail": error},
            400,
        )
    logger.warning("Refused %s %s: %s", request.method, request.path, error)
    context = {"message": message, "back_url": same_site_referer(request)}
    if getattr(request, "htmx", False):
        response = render(request, "annotator/request_refused.html#refusal", context)
        response["HX-Retarget"] = "#messages"
        response["HX-Reswap"] = "innerHTML"
        return response
    return render(request, "annotator/request_refused.html", context, status=status)


class DatabaseBusyMiddleware:
    """Answer 503 (Retry-After) when SQLite stays locked past its busy timeout, or when the
    database cannot be reached (`annotator.web.outage`; a failure outside a view reaches it
    through handler500).

    SQLite takes one writer at a time. An import of tens of thousands of documents holds the
    write lock for its whole transaction (all or nothing), and a grade saved meanwhile waited the
    20-second timeout, then failed with a server error. It is a moment's wait, not a fault:
    the person is told nothing was saved and to try again (the grading page retries by itself).
    PostgreSQL, which takes writers side by side, never gets locked.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if database_unreachable(exception):
            return unreachable_response(request, exception)
        if not (isinstance(exception, OperationalError) and "database is locked" in str(exception)):
            return None
        logger.warning("Database busy on %s %s: %s", request.method, request.path, exception)
        context = {"message": BUSY_MESSAGE, "back_url": same_site_referer(request), "title": _("Not saved")}
        response = render(request, "annotator/request_refused.html", context, status=503)
        response["Retry-After"] = "30"
        return response


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
        # The header first: a page that set its own (the database-unreachable page) must not
        # need the user, loaded from the database.
        if not response.has_header("Cache-Control") and request.user.is_authenticated:
            add_never_cache_headers(response)
        return response


TIME_ZONE_COOKIE = "tz"


class BrowserTimeZoneMiddleware:
    """Show times in the reader's time zone, as their browser names it (app.js sets the cookie).

    Times are stored in UTC; shown in UTC, they read hours off to anyone outside it.
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
