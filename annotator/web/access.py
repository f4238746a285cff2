"""The one place that decides who may open which page.

Every view wears exactly one of `public`, `signed_in` or `project_permission(...)`, which records
its rule for the access-matrix test. A non-member gets 404, so a URL never tells an outsider that
a project exists; a member without the permission 403; both before any method check.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponseBase
from django.utils.translation import gettext as _
from django_htmx.middleware import HtmxDetails

from annotator.models import PERMISSIONS, Membership, Permission, Project
from annotator.web.http import sign_in_again

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Function views return an HttpResponse, class-based views (`View.as_view()`) an HttpResponseBase.
View = Callable[..., HttpResponseBase]


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


class SignedInRequest(HtmxHttpRequest):
    """A request that passed `signed_in` or `project_permission`: `login_required` ran first, so the
    user is a real, authenticated account (never `AnonymousUser`)."""

    user: User


class ProjectRequest(SignedInRequest):
    """A request that passed `project_permission`: the project and the user's membership are attached."""

    project: Project
    membership: Membership


def login_required(view: View) -> View:
    """Django's login_required, with what a person whose session ended mid-task needs
    (`annotator.web.http.sign_in_again`)."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        return sign_in_again(request)

    return wrapper


def public(view: View) -> View:
    view.access_rule = "public"  # type: ignore[attr-defined]
    return view


def signed_in(view: View) -> View:
    wrapped = login_required(view)
    wrapped.access_rule = "signed_in"  # type: ignore[attr-defined]
    return wrapped


def membership_for(request: SignedInRequest, slug: str, needed: tuple[Permission, ...]) -> Membership:
    """The user's membership in project `slug`, or 404 (not a member) / 403 (holds none of `needed`)."""
    membership = (
        Membership.objects.select_related("project")
        .filter(project__slug=slug, user=request.user, user__is_active=True)
        .first()
    )
    if membership is None:
        raise Http404(_("No such project."))
    if not any(membership.may(permission) for permission in needed):
        lowest = min((PERMISSIONS[permission] for permission in needed), key=lambda role: role.rank)
        raise PermissionDenied(
            _("This page needs the %(role)s role in this project.") % {"role": lowest.label}
        )
    return membership


def project_permission(*needed: Permission) -> Callable[[View], View]:
    """Members holding one of `needed` (the imports page: any import); the rule is read when the
    page is asked for, so a change in `PERMISSIONS` takes effect everywhere."""
    assert needed, "name at least one permission"

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: SignedInRequest, *args: Any, slug: str, **kwargs: Any) -> HttpResponseBase:
            membership = membership_for(request, slug, needed)
            request.membership = membership  # type: ignore[attr-defined]
            request.project = membership.project  # type: ignore[attr-defined]
            return view(request, *args, slug=slug, **kwargs)

        guarded = login_required(wrapper)
        guarded.access_rule = ("permission", needed)  # type: ignore[attr-defined]
        return guarded

    return decorator
