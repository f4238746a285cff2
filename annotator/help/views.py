"""The help pages: one committed HTML fragment per page and language (see annotator.help)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotator.help import DOCS_DIR, PAGES
from annotator.projects.models import PERMISSIONS, Role
from annotator.web.access import SignedInRequest, signed_in

TITLES = dict(PAGES)

# Where a page shows the table of permissions, built from PERMISSIONS so it cannot drift from the
# rules the views apply.
PERMISSIONS_MARK = "<!-- permissions -->"


@signed_in
@require_GET
def help_index(request: SignedInRequest) -> HttpResponse:
    return _page(request, "index")


@signed_in
@require_GET
def help_page(request: SignedInRequest, page: str) -> HttpResponse:
    if page == "index" or page not in TITLES:  # the index lives at /help/ only
        raise Http404(_("No such help page."))
    return _page(request, page)


def _page(request: SignedInRequest, page: str) -> HttpResponse:
    language = "zh_Hans" if get_language() == "zh-hans" else "en"
    content = (DOCS_DIR / language / f"{page}.html-fragment").read_text(encoding="utf-8")
    if PERMISSIONS_MARK in content:
        content = content.replace(PERMISSIONS_MARK, _permissions_table(request))
    context = {"page": page, "title": TITLES[page], "pages": PAGES, "content": content}
    return render(request, "docs/page.html", context)


def _permissions_table(request: SignedInRequest) -> str:
    """One row per permission, ticked for every role that has it (its lowest role and above)."""
    roles = list(Role)
    rows = [
        (permission.label, [role.includes(lowest) for role in roles])
        for permission, lowest in PERMISSIONS.items()
    ]
    return render_to_string("docs/_permissions.html", {"roles": roles, "rows": rows}, request)
