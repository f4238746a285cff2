"""The one Paginator of every list: Django's, with one rule changed for a page number that names
no page. Django shows page 1 for "abc" but the *last* page for 0 or -1; here a number below 1
shows page 1, a number past the end the last page, and templates/_pager.html says which number
was asked for, so a last page shown for ?page=0 is not left unexplained.
"""

from __future__ import annotations

from typing import Any

from django.core import paginator


class Page(paginator.Page):
    asked: str | None = None  # the page number asked for, when it named no page


class Paginator(paginator.Paginator):
    def get_page(self, number: Any) -> Page:
        try:
            valid = self.validate_number(number)
        except paginator.PageNotAnInteger:
            valid = 1
        except paginator.EmptyPage:
            valid = 1 if int(number) < 1 else self.num_pages
        page = self.page(valid)
        if number not in (None, "") and str(valid) != str(number):
            page.asked = str(number)
        return page

    def _get_page(self, *args: Any, **kwargs: Any) -> Page:
        return Page(*args, **kwargs)

    def page(self, number: Any) -> Page:
        return super().page(number)  # type: ignore[return-value]
