"""A database that cannot be reached (PostgreSQL stopped, restarting or cut off) answers 503.

It is a wait, not a fault of the app: the person is told nothing was saved and to try again, in
their language, and the log gets one warning line. Two paths lead here: an error in a view
(`DatabaseBusyMiddleware.process_exception`) and one outside any view, e.g. the session or
`request.user` loaded by a middleware (`server_error`, the handler500), since no
process_exception sees those. Django calls handler500 only with DEBUG off (production); with it on,
such an error shows Django's debug page, as every other error does.

Django reconnects by itself: it closes a connection that failed at the end of the request
(`close_old_connections`), and the next request opens a new one.
"""

from __future__ import annotations

import logging
import sys

import psycopg
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.utils.cache import add_never_cache_headers
from django.utils.translation import gettext_lazy
from django.views import defaults

from annotator.web.http import same_site_referer

logger = logging.getLogger(__name__)

UNREACHABLE_MESSAGE = gettext_lazy(
    "The database cannot be reached right now (it may be restarting), so nothing was saved. "
    "Try again in a minute."
)
RETRY_AFTER_SECONDS = 30

# Server codes that mean the connection itself failed: class 08 (connection exception), and the
# server shutting down, crashing or still starting (57P01-57P03). Any other code (a deadlock, a
# statement timeout, a full disk) is an answer from a running database: a server error as before.
_CONNECTION_LOST_CODES = ("57P01", "57P02", "57P03")
# The same failures as other drivers word them (psycopg2, libpq), for an error psycopg did not raise.
_CONNECTION_LOST_PHRASES = (
    "connection refused",
    "could not connect to server",
    "server closed the connection unexpectedly",
    "terminating connection due to administrator command",
    "the database system is starting up",
    "the database system is shutting down",
    "connection already closed",
    "the connection is closed",
)


def database_unreachable(error: BaseException | None) -> bool:
    """True for an error that says the database could not be reached or the connection was lost.

    psycopg's own error is read by its server code: with none, the client failed to connect or
    lost the connection (refused, closed, timed out), whatever the locale of the message.
    """
    if not isinstance(error, (OperationalError, InterfaceError)):
        return False
    cause = error.__cause__
    if isinstance(cause, psycopg.Error):
        code = cause.sqlstate
        return isinstance(cause, psycopg.OperationalError) and (
            code is None or code.startswith("08") or code in _CONNECTION_LOST_CODES
        )
    text = str(error).lower()
    return any(phrase in text for phrase in _CONNECTION_LOST_PHRASES)


def unreachable_response(request: HttpRequest, error: BaseException) -> HttpResponse:
    """The 503 page, rendered without the database: a standalone template (not base.html, whose
    user, messages and navigation read it) and no context processors. An htmx request gets the
    same answer, as the busy case does: htmx swaps no 5xx, and app.js says the page's sentence.

    No-store: the page says how things stood for a moment. With Cache-Control set,
    PrivatePagesMiddleware does not load `request.user` either, which would fail again.
    """
    # One line: libpq's messages carry a newline and a hint.
    logger.warning(
        "Database unreachable on %s %s: %s", request.method, request.path, " ".join(str(error).split())
    )
    retry_url = request.get_full_path() if request.method == "GET" else ""
    context = {
        "message": UNREACHABLE_MESSAGE,
        "retry_url": retry_url,
        "back_url": "" if retry_url else same_site_referer(request),
    }
    response = HttpResponse(
        loader.render_to_string("annotator/database_unreachable.html", context), status=503
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    add_never_cache_headers(response)
    # Logged above, once, as a warning: without this Django logs the 503 as an error, with the
    # traceback when it comes through handler500.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the 503 page for a database that cannot be reached (the error is the one being
    handled), Django's own 500 page (templates/500.html) for anything else."""
    error = sys.exc_info()[1]
    if error is not None and database_unreachable(error):
        return unreachable_response(request, error)
    return defaults.server_error(request)
