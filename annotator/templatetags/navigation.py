"""Marks the navigation link of the page being shown, for screen readers and for the eye."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.simple_tag(takes_context=True)
def current(context: dict[str, Any], url: str, *, exact: bool = False) -> SafeString:
    """` aria-current="page"` on the link to this very page; ` aria-current="true"` on the link of
    the section it belongs to (a set's page is in "Grading sets"); nothing elsewhere. `exact` for
    links whose URL prefixes every page (the project overview)."""
    request = context.get("request")
    path = getattr(request, "path", "")
    if path == url:
        return mark_safe(' aria-current="page"')  # noqa: S308 - a constant
    if not exact and path.startswith(url):
        return mark_safe(' aria-current="true"')  # noqa: S308 - a constant
    return SafeString("")
