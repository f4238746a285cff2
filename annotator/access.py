"""The one place that decides who may open which page.

Every view is wrapped by exactly one of these decorators, and each records its rule on the view
(`view.access_rule`) so the access-matrix test can walk the URL resolver and check every view:

- `public`: anyone (login page, language switch).
- `signed_in`: any logged-in user (home page).
- `project_role(Role.X)`: logged in -> member of the project named by the `slug` URL kwarg ->
  holds role X or higher. Not logged in: redirect to login. Not a member (or no such project):
  404, so a URL never tells an outsider that a project exists. A member without the role: 403.

The check runs before any method check, so an outsider cannot learn which methods a URL takes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseBase
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails

from annotator.models import Membership, Project, Role

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Function views return an HttpResponse, class-based views (`View.as_view()`) an HttpResponseBase.
View = Callable[..., HttpResponseBase]


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class SignedInRequest(HtmxHttpRequest):
    """A request that passed `signed_in` or `project_role`: `login_required` ran first, so the
    user is a real, authenticated account (never `AnonymousUser`)."""

    user: User


class ProjectRequest(SignedInRequest):
    """A request that passed `project_role`: the project and the user's membership are attached."""

    project: Project
    membership: Membership


def _page_to_return_to(request: HtmxHttpRequest) -> str:
    """Where to send someone after they sign in again: the page they were on.

    For a plain GET that is the URL itself. An htmx request or a form post targets an endpoint
    (often POST-only: returning there after login would be a 405), so it is the page that sent it
    (htmx's HX-Current-URL, else the Referer) when that page is on this site.
    """
    if request.method == "GET" and not request.htmx:
        return request.get_full_path()
    sender = (request.htmx.current_url if request.htmx else None) or request.headers.get("Referer", "")
    if sender and url_has_allowed_host_and_scheme(sender, {request.get_host()}, request.is_secure()):
        parts = urlsplit(sender)
        return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return "/"


def login_required(view: View) -> View:
    """Django's login_required, plus what a signed-out person needs when their session ended
    mid-task: an htmx request gets a full-page redirect (not the login page swapped into a
    fragment), and anything but a GET says its action was not carried out."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if request.method != "GET":
            messages.warning(request, _("You were signed out, so your last action was not saved. Sign in to continue."))
        response = redirect_to_login(_page_to_return_to(request))
        return HttpResponseClientRedirect(response["Location"]) if request.htmx else response

    return wrapper


def public(view: View) -> View:
    view.access_rule = "public"  # type: ignore[attr-defined]
    return view


def signed_in(view: View) -> View:
    wrapped = login_required(view)
    wrapped.access_rule = "signed_in"  # type: ignore[attr-defined]
    return wrapped


def membership_for(request: SignedInRequest, slug: str, needed: Role) -> Membership:
    """The user's membership in project `slug`, or 404 (not a member) / 403 (role too low)."""
    membership = (
        Membership.objects.select_related("project")
        .filter(project__slug=slug, user=request.user, user__is_active=True)
        .first()
    )
    if membership is None:
        raise Http404(_("No such project."))
    if not membership.can(needed):
        raise PermissionDenied(
            _("This page needs the %(role)s role in this project.") % {"role": needed.label}
        )
    return membership


def project_role(needed: Role) -> Callable[[View], View]:
    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: SignedInRequest, *args: Any, slug: str, **kwargs: Any) -> HttpResponseBase:
            membership = membership_for(request, slug, needed)
            request.membership = membership  # type: ignore[attr-defined]
            request.project = membership.project  # type: ignore[attr-defined]
            return view(request, *args, slug=slug, **kwargs)

        guarded = login_required(wrapper)
        guarded.access_rule = needed  # type: ignore[attr-defined]
        return guarded

    return decorator
