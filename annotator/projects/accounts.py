"""Signing out, and passwords: Django's own views for changing one and for a reset by email.

Sign-in throttling is in `sign_in.py`; the warning about demo passwords in `demo_password.py`.
"""

from __future__ import annotations

from axes.utils import reset as unlock
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import SetPasswordForm
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotator.web.access import public, signed_in

_logout = auth_views.LogoutView.as_view()


@public
@require_http_methods(["GET", "POST"])
def logout_page(request: HttpRequest) -> HttpResponseBase | HttpResponse:
    """POST signs out (CSRF-checked) and says so on the login page. A GET (a bookmark, a typed
    address) only asks, with a button: a link must not sign anyone out, and Django's view answers
    it with an empty 405 page."""
    if request.method == "POST":
        response = _logout(request)
        messages.info(request, _("You are logged out."))
        return response
    return render(request, "registration/logged_out.html")


class _ResetConfirm(auth_views.PasswordResetConfirmView):
    def form_valid(self, form: SetPasswordForm) -> HttpResponse:  # type: ignore[type-arg]
        # Whoever opened the link controls the account's email: the account's lockout ends.
        response = super().form_valid(form)
        unlock(username=form.user.get_username())
        return response


# The reset mail is rendered inside the request, so it is in the language the page was in.
password_change = signed_in(auth_views.PasswordChangeView.as_view())
password_change_done = signed_in(auth_views.PasswordChangeDoneView.as_view())
password_reset = public(auth_views.PasswordResetView.as_view())
password_reset_done = public(auth_views.PasswordResetDoneView.as_view())
password_reset_confirm = public(_ResetConfirm.as_view())
password_reset_complete = public(auth_views.PasswordResetCompleteView.as_view())
