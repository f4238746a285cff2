"""Response headers Django has no setting for."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Permissions-Policy"


def permissions_policy(features: dict[str, list[str]]) -> str:
    """The header's value: `camera=(), fullscreen=(self)`; an empty list turns a feature off."""
    return ", ".join(f"{name}=({' '.join(origins)})" for name, origins in features.items())


class PermissionsPolicyMiddleware:
    """Send settings.PERMISSIONS_POLICY on every response that does not set its own."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.value = permissions_policy(settings.PERMISSIONS_POLICY)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.value and HEADER not in response:
            response.headers[HEADER] = self.value
        return response
