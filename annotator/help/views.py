"""The help pages: one committed HTML fragment per page and language (see annotator.help)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotator.help import DOCS_DIR, PAGES
from annotator.web.access import SignedInRequest, signed_in

TITLES = dict(PAGES)


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
    context = {"page": page, "title": TITLES[page], "pages": PAGES, "content": content}
    return render(request, "docs/page.html", context)
