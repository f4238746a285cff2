"""Leaving a query on the grading page: its held pairs settle (settlement.py) and the editor is told.

The session notes the query the editor holds open. Any other page of a project settles it
(`LeaveOpenQueryMiddleware`), before the page reads anything; the grading page's own views
(`keeps_query_open`) keep it open while the editor stays on that query. Reading the note costs
no statement: the session is read for the user anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotator.grading.settlement import SESSION_KEY, Settled, query_grades_settle, query_touch


def keeps_query_open[V: Callable[..., Any]](view: V) -> V:
    """Mark a grading-page view: the editor stays on their query, so it is not settled before it runs."""
    view.keeps_query_open = True  # type: ignore[attr-defined]
    return view


def noted_query(request: HttpRequest) -> tuple[int, int] | None:
    """(set ID, query ID) of the query the session notes as open, or None."""
    noted = request.session.get(SESSION_KEY)
    if isinstance(noted, list) and len(noted) == 2 and all(type(n) is int for n in noted):
        return noted[0], noted[1]
    return None


def settled_message(settled: Settled) -> str:
    """What leaving a query did, now that the editor may know: final grades and disputes opened."""
    pairs = ngettext("%(n)d pair got its final grade", "%(n)d pairs got their final grade", settled.pairs) % {
        "n": settled.pairs
    }
    if not settled.disputes:
        return _("Your grades of the query you left are settled: %(pairs)s.") % {"pairs": pairs}
    disputes = ngettext(
        "%(n)d dispute waits for your reason", "%(n)d disputes wait for your reason", settled.disputes
    ) % {"n": settled.disputes}
    return _("Your grades of the query you left are settled: %(pairs)s, and %(disputes)s.") % {
        "pairs": pairs,
        "disputes": disputes,
    }


def leave_noted(request: HttpRequest, *, staying: tuple[int, int] | None = None) -> Settled:
    """Settle the query the session notes as open unless it is `staying` (then note activity on it);
    the editor is told what settled."""
    noted = noted_query(request)
    if noted is None:
        return Settled()
    if noted == staying:
        query_touch(grading_set_id=noted[0], query_id=noted[1], editor=request.user)  # type: ignore[arg-type]
        return Settled()
    del request.session[SESSION_KEY]
    editor_id = request.user.pk
    assert editor_id is not None  # signed in: only a grading editor's session notes a query
    settled = query_grades_settle(grading_set_id=noted[0], query_id=noted[1], editor_id=editor_id)
    if settled:
        messages.info(request, settled_message(settled))
    return settled


def note_open(request: HttpRequest, grading_set_id: int, query_id: int) -> None:
    """Note in the session that the editor holds this query open (written only when it changes)."""
    if noted_query(request) != (grading_set_id, query_id):
        request.session[SESSION_KEY] = [grading_set_id, query_id]


class LeaveOpenQueryMiddleware:
    """Any project page other than the grading page's own settles the query the editor left."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        rule = getattr(view, "access_rule", None)
        # Project pages only: a favicon or a static file the browser asks for is not leaving.
        if not (isinstance(rule, tuple) and rule[0] == "permission") or getattr(
            view, "keeps_query_open", False
        ):
            return
        if request.user.is_authenticated:
            leave_noted(request)
