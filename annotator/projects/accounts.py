"""Signing out: Django's LogoutView, plus a page for a GET of its address."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from annotator.web.access import public

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
