"""`{% pager page %}`: the one set of previous/next links under every paginated table."""

from __future__ import annotations

from typing import Any

from django import template
from django.core.paginator import Page

register = template.Library()


@register.inclusion_tag("_pager.html", takes_context=True)
def pager(
    context: template.Context,
    page: Page,
    target: str = "",
    *,
    param: str = "page",
    fragment: str = "",
    base: str = "",
) -> dict[str, Any]:
    """Links to the previous and next page of `page`.

    Each link is the current query string with only `param` changed, so filters and the page
    number of another table on the same page survive paging. With `target` (a CSS selector of the
    element a view returns as its `request.htmx` partial) htmx swaps just that element and puts the
    link in the address bar, so reload and Back show the same page; without it, or without
    JavaScript, the link loads the whole page (at `#fragment`, when given). `base`: the path the
    links lead to when it is not the current URL's (a page rendered in answer to a post).
    """
    query = context["request"].GET

    def link(number: int) -> str:
        params = query.copy()
        params[param] = str(number)
        return f"{base}?{params.urlencode()}" + (f"#{fragment}" if fragment else "")

    return {
        "page": page,
        "target": target,
        "previous": link(page.previous_page_number()) if page.has_previous() else "",
        "next": link(page.next_page_number()) if page.has_next() else "",
    }
