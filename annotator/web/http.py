"""Request-method and signed-out handling shared by the views of both apps."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseBase, HttpResponseNotAllowed
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header, url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect

View = Callable[..., HttpResponseBase]


def post_from(page: str) -> Callable[[View], View]:
    """A POST-only action whose refusals re-render its page (`page`, a URL name taking the same
    URL kwargs) at the action's own URL, so that a person without JavaScript keeps what they
    typed. That URL then sits in the address bar: a GET of it (reload, language switch, the return
    after signing in again) goes to the page instead of answering 405."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
            if request.method == "GET":
                return redirect(page, *args, **kwargs)
            if request.method != "POST":
                return HttpResponseNotAllowed(["POST"])
            return view(request, *args, **kwargs)

        wrapper.page_for_get = page  # type: ignore[attr-defined]  # read by the tests
        return wrapper

    return decorator


def redirect_after_post(request: HttpRequest, url: str) -> HttpResponse:
    """After a successful POST: a plain redirect, or for htmx a full-page one (HX-Redirect), since
    the next page must replace the whole page, not be swapped into the form that was sent."""
    return HttpResponseClientRedirect(url) if _is_htmx(request) else redirect(url)


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def _page_to_return_to(request: HttpRequest) -> str:
    """Where to send someone after they sign in again: the page they were on.

    For a plain GET that is the URL itself. An htmx request or a form post targets an endpoint
    (returning there after login would show no page), so it is the page that sent it (htmx's
    HX-Current-URL, else the Referer) when that page is on this site.
    """
    if request.method == "GET" and not _is_htmx(request):
        return request.get_full_path()
    sender = request.headers.get("HX-Current-URL") or request.headers.get("Referer", "")
    if sender and url_has_allowed_host_and_scheme(sender, {request.get_host()}, request.is_secure()):
        parts = urlsplit(sender)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return "/"


def same_site_referer(request: HttpRequest) -> str:
    """The page the request came from, when it is this site's ("" otherwise): a refusal page's
    link back to the form."""
    referer = request.headers.get("Referer", "")
    return (
        referer if url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure()) else ""
    )


def sign_in_again(request: HttpRequest) -> HttpResponseBase:
    """The answer to a signed-out request: the login page, then back to the page they were on.
    An htmx request gets a full-page redirect (not the login page swapped into a fragment), and
    anything but a GET says its action was not carried out."""
    if request.method != "GET":
        messages.warning(
            request, _("You were signed out, so your last action was not saved. Sign in to continue.")
        )
    response = redirect_to_login(_page_to_return_to(request))
    return HttpResponseClientRedirect(response["Location"]) if _is_htmx(request) else response


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponseBase:
    """CSRF_FAILURE_VIEW. With every cookie gone (cleared, a browser restarted) a form post fails
    the CSRF check before any login check: it is a signed-out person, so they are sent to log in.
    A signed-in person gets a translated page that says to reload, not Django's technical one."""
    if not request.user.is_authenticated:
        return sign_in_again(request)
    return render(request, "403_csrf.html", status=403)


def gone(request: HttpRequest, message: str, back_url: str, back_label: str) -> HttpResponse:
    """404 for an action on something no longer there (a second tab removing it again): the page
    says so and links back, instead of the bare "not found". Still 404, with the same words for an
    ID that never was in the project, so nothing is revealed about other projects."""
    context = {"gone_message": message, "back_url": back_url, "back_label": back_label}
    return render(request, "404.html", context, status=404)


def attachment_header(name: str) -> str:
    """Content-Disposition for a download named `name` (RFC 6266): a name beyond ASCII goes as
    filename*=utf-8''..., with an ASCII filename= beside it for clients that read only that one
    (both: some clients drop a non-ASCII filename=, others read no filename*)."""
    header = content_disposition_header(True, name) or ""
    if "filename*=" not in header:
        return header
    fallback = re.sub(r"-{2,}", "-", name.encode("ascii", "ignore").decode()).strip("-") or "download"
    return f'attachment; filename="{fallback}"; {header.removeprefix("attachment; ")}'
