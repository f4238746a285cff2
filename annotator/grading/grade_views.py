"""The blind grading page: one query's pairs in this editor's order, a grade saved or undone per row.

Blind on the server: a row carries the editor's own grade and reason only, never another editor's
grade, a count of grades per value, or any system's rank or score. Blind to the end of the query:
a pair completed here settles when the editor leaves the query (grading/settlement.py), so no
reply while they are on it says whether they matched a colleague.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import cast

from django.contrib import messages
from django.db.models import Count, OuterRef, Subquery
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.backends.utils import csrf_input
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget, trigger_client_event

from annotator.grading import services
from annotator.grading.forms import GradeForm
from annotator.grading.leaving import keeps_query_open, leave_noted, note_open, noted_query
from annotator.grading.models import GradingSetQuerySet, Progress
from annotator.grading.queue import queue_candidates, shuffled_for
from annotator.grading.settlement import idle_minutes
from annotator.models import (
    REASON_MAX_LENGTH,
    Candidate,
    CriteriaVersion,
    Document,
    Grade,
    GradingSet,
    Permission,
    Query,
)
from annotator.templatetags.content import content_lang
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.converters import parse_id
from annotator.web.http import post_from
from annotator.web.paging import Paginator
from annotator.web.text import sentences

# Pairs per grading page. Help-center queries fit on one; a query continued from a TREC pool can
# hold thousands of judged documents, which on one page would weigh tens of megabytes.
GRADE_PAGE_SIZE = 50


@dataclass
class Row:
    """One candidate as this editor sees it: the document, their own grade, and whether it is locked."""

    candidate: Candidate
    document: Document
    grade: Grade | None
    locked: str
    position: int
    error: str = ""
    just_saved: bool = False
    # What the editor typed in a save the server refused: shown again instead of the stored reason.
    typed_reason: str | None = None
    # Set by `_dress` for the template, which renders 50 rows a page: what each row would
    # otherwise compute again with a tag (the pair's ID as text, its save URL, its grade buttons).
    key: str = ""
    save_url: str = ""
    buttons: SafeString = SafeString("")
    reason_max_length = REASON_MAX_LENGTH  # for the textarea's maxlength; the form enforces it

    @property
    def reason_text(self) -> str:
        if self.typed_reason is not None:
            return self.typed_reason
        return self.grade.reason if self.grade else ""

    @property
    def state(self) -> str:
        if self.error:
            return "failed"
        if self.locked:
            return "locked"
        if self.grade is None:
            return "ungraded"
        return "stale" if self.grade.stale else "saved"


class _Buttons:
    """A page's grade buttons, rendered once per pressed grade (at most five times), not once per
    row: 50 rows of four buttons were the costliest part of the page's template."""

    def __init__(self, criteria: CriteriaVersion) -> None:
        self.criteria = criteria
        self.html: dict[int | None, SafeString] = {}

    def __call__(self, pressed: int | None) -> SafeString:
        if pressed not in self.html:
            context = {"criteria": self.criteria, "pressed": pressed}
            self.html[pressed] = SafeString(
                render_to_string("annotator/grading/_grade_buttons.html", context)
            )
        return self.html[pressed]


def _dress(
    request: ProjectRequest, grading_set: GradingSet, criteria: CriteriaVersion, rows: list[Row]
) -> dict[str, object]:
    """Fill in what the template shows of each row but does not compute per row; returns what the
    rows share, for the context: the CSRF field, the content language and the query's fingerprint
    are the same on every row of a page."""
    buttons = _Buttons(criteria)
    kwargs = {"slug": request.project.slug, "set_id": grading_set.pk}
    for row in rows:
        row.key = str(row.candidate.pk)
        row.save_url = reverse("grade_save", kwargs={**kwargs, "candidate_id": row.candidate.pk})
        row.buttons = buttons(row.grade.grade if row.grade else None)
    return {"csrf_field": csrf_input(request), "lang_attr": content_lang(request.project)}


def _lock_message(candidate: Candidate, grade: Grade | None, grading_set: GradingSet) -> str:
    """Why this editor cannot grade the pair here; says nothing about anyone else's grade values."""
    if not grading_set.is_open:
        return _("This grading set is closed.")
    settled, disputed = hasattr(candidate, "final_grade"), hasattr(candidate, "dispute")
    if grade is not None:
        if settled:
            return _("Settled: this pair has its final grade, so your grade is locked.")
        if disputed:
            return _("In dispute: your grade is locked; changes go through the dispute page.")
        return ""
    if settled or disputed or candidate.grade_count >= grading_set.required_grades:
        return _("This pair already has all the grades it needs.")
    return ""


def _order(request: ProjectRequest, grading_set: GradingSet, query: Query) -> list[int]:
    """The query's pairs (IDs) in this editor's order: the numbering of every page and save."""
    return shuffled_for(
        request.user,
        Candidate.objects.filter(grading_set=grading_set, query=query).values_list("pk", flat=True),
    )


def _rows(request: ProjectRequest, grading_set: GradingSet, ids: list[int], first_position: int) -> list[Row]:
    """Rows of the pairs `ids` (in that order, numbered from `first_position`); documents are read
    for these pairs only, so a page costs the same whatever the size of its query."""
    candidates = (
        Candidate.objects.filter(pk__in=ids).select_related("document", "final_grade", "dispute")
    ).in_bulk()
    mine = {g.candidate_id: g for g in Grade.objects.blind_for(request.user).filter(candidate__in=ids)}
    return [
        Row(
            candidate=c,
            document=c.document,
            grade=mine.get(pk),
            locked=_lock_message(c, mine.get(pk), grading_set),
            position=position,
        )
        for position, pk in enumerate(ids, start=first_position)
        if (c := candidates.get(pk)) is not None  # removed since the order was read
    ]


def _page_of(index: int) -> int:
    """The grading page (from 1) holding the pair at `index` (from 0) of an editor's order."""
    return index // GRADE_PAGE_SIZE + 1


def _page_number(request: ProjectRequest, order: list[int], waiting: Callable[[], set[int]]) -> int | str:
    """Which page to show: ?page= as asked (Paginator.get_page tames any value), else the page of
    pair ?cand= (links to one pair: the re-check list, a save without JavaScript), else the first
    page with something for this editor to do, so "Next query" never lands on a finished page."""
    if "page" in request.GET:
        return request.GET["page"]
    wanted = parse_id(request.GET.get("cand", ""))
    if wanted is not None and wanted in order:
        return _page_of(order.index(wanted))
    if len(order) <= GRADE_PAGE_SIZE:
        return 1
    first = next((i for i, pk in enumerate(order) if pk in waiting()), 0)
    return _page_of(first)


def _waiting(request: ProjectRequest, grading_set: GradingSet, query: Query) -> set[int]:
    """The query's pairs with something for this editor: to grade (the queue's rule) or to re-check."""
    return set(
        queue_candidates(project=request.project, editor=request.user, grading_set=grading_set)
        .filter(query=query)
        .values_list("pk", flat=True)
    ) | set(
        Grade.objects.filter(editor=request.user, candidate__grading_set=grading_set, candidate__query=query)
        .to_recheck()
        .values_list("candidate_id", flat=True)
    )


def _progress(request: ProjectRequest, grading_set: GradingSet, query: Query) -> dict[str, Progress]:
    """The three bars, read now in one query: the query's pairs this editor graded, and in the
    whole set the pairs with all their grades and those this editor graded. Each says what it
    counts: a first editor done with a query sees it done, not "0 of 5" pairs complete. (A query
    has a few hundred pairs, read from the pairs' index.)"""
    sets = cast(GradingSetQuerySet, GradingSet.objects.filter(pk=grading_set.pk)).with_progress(request.user)
    pairs = Candidate.objects.filter(grading_set=OuterRef("pk"), query=query).order_by().values("grading_set")
    mine_here = (
        Grade.objects.filter(candidate__grading_set=OuterRef("pk"), candidate__query=query)
        .filter(editor=request.user)
        .order_by()
        .values("candidate__grading_set")
    )
    done, mine, total, query_mine, query_total = (
        sets.annotate(
            query_total=Subquery(pairs.annotate(n=Count("pk")).values("n")),
            query_mine=Subquery(mine_here.annotate(n=Count("pk")).values("n")),
        )
        .values_list("done_count", "pairs_mine", "pair_count", "query_mine", "query_total")
        .get()
    )
    return {
        "query_progress": Progress(done=query_mine or 0, total=query_total or 0),
        "set_progress": Progress(done=done, total=total),
        "my_progress": Progress(done=mine, total=total),
    }


def _set_and_query(request: ProjectRequest, set_id: int, query_id: int) -> tuple[GradingSet, Query]:
    grading_set = get_object_or_404(GradingSet, pk=set_id, project=request.project)
    query = get_object_or_404(Query, pk=query_id, project=request.project)
    if not Candidate.objects.filter(grading_set=grading_set, query=query).exists():
        raise Http404(_("This query has no documents to grade in this set."))
    return grading_set, query


def _page_context(
    request: ProjectRequest, grading_set: GradingSet, query: Query, *, at: int | None = None
) -> dict[str, object]:
    """The grading page of `query`: the page holding pair `at` when given, else as `_page_number` says."""
    order = _order(request, grading_set, query)
    waiting = cache(lambda: _waiting(request, grading_set, query))  # read once, if at all
    number = _page_of(order.index(at)) if at in order else _page_number(request, order, waiting)
    page = Paginator(order, GRADE_PAGE_SIZE).get_page(number)
    rows = _rows(request, grading_set, list(page.object_list), page.start_index())
    criteria = CriteriaVersion.objects.current_for(request.project)
    # Where "every document on this page has your grade" sends the editor: the next page with
    # something left for them, not merely the next page, which may be finished.
    next_work_page = None
    if page.has_next():
        later = next(
            (i for i, pk in enumerate(order[page.end_index() :], page.end_index()) if pk in waiting()), None
        )
        next_work_page = None if later is None else _page_of(later)
    return {
        "grading_set": grading_set,
        "query": query,
        "page": page,
        "next_work_page": next_work_page,
        # Pager links name the page's own URL: the page is also rendered in answer to a refused save.
        "page_url": reverse(
            "grade_page",
            kwargs={"slug": request.project.slug, "set_id": grading_set.pk, "query_id": query.pk},
        ),
        "rows": rows,
        "criteria": criteria,
        "fingerprint": query.fingerprint,
        "idle_minutes": idle_minutes(),
        "undo_page": page.number,
        "can_undo": services.undo_available(editor=request.user, grading_set=grading_set, query=query),
        **_dress(request, grading_set, criteria, rows),
        **_progress(request, grading_set, query),
    }


@project_permission(Permission.GRADE)
@keeps_query_open
@require_GET
def grade_page(request: ProjectRequest, slug: str, set_id: int, query_id: int) -> HttpResponse:
    grading_set, query = _set_and_query(request, set_id, query_id)
    # Opening another query leaves the one held open before; reading this one is activity on it.
    leave_noted(request, staying=(grading_set.pk, query.pk))
    return render(request, "annotator/grading/grade.html", _page_context(request, grading_set, query))


def _row(
    request: ProjectRequest,
    candidate: Candidate,
    order: list[int] | None = None,
    *,
    saved: Grade | None = None,
    position: int | None = None,
) -> Row:
    """`candidate`'s row alone, numbered as on its page (`order`: the editor's, when read already;
    `position`: the number the page showed, sent with a save, so that the order is not read again).
    `saved`: the grade this request saved, its `candidate` read under the save's lock
    (`services.grade_submit`): the row is made from them, without reading the pair again."""
    if position is None:
        order = _order(request, candidate.grading_set, candidate.query) if order is None else order
        position = order.index(candidate.pk) + 1 if candidate.pk in order else 0
    if saved is not None:
        pair = saved.candidate
        locked = _lock_message(pair, saved, pair.grading_set)
        return Row(candidate=pair, document=pair.document, grade=saved, locked=locked, position=position)
    rows = _rows(request, candidate.grading_set, [candidate.pk], position)
    if not rows:
        raise Http404(_("This pair is no longer in the set."))
    return rows[0]


def _grade_page_url(slug: str, candidate: Candidate) -> str:
    """The grading page at `candidate`'s row: on the page that holds it, scrolled to it."""
    url = reverse(
        "grade_page",
        kwargs={"slug": slug, "set_id": candidate.grading_set_id, "query_id": candidate.query_id},
    )
    return f"{url}?cand={candidate.pk}#cand-{candidate.pk}"


def _row_response(
    request: ProjectRequest,
    candidate: Candidate,
    *,
    error: str = "",
    typed_reason: str | None = None,
    announce: str = "",
    saved: bool = False,
    undone: bool = False,
    criteria_changed: bool = False,
    query_seen: str | None = None,
    unsaved_reason: str | None = None,
    order: list[int] | None = None,
    saved_grade: Grade | None = None,
    position: int | None = None,
    can_undo: bool | None = None,
) -> HttpResponse:
    """The row of `candidate` plus out-of-band progress bars and a screen-reader announcement.
    `criteria_changed`: the criteria panel and every row's form catch up too. `query_seen`: the
    Query.fingerprint the page sent; when the query has changed since, its heading and every row's
    form catch up (the row alone would carry the new fingerprint under the old heading, and a grade
    given on that heading would then be taken). `unsaved_reason`: text for the reason box of an
    ungraded row that is not stored (an undone grade's). `position`: the row's number as the page
    sent it. `saved_grade`: the grade just saved, whose criteria are the current ones, read by
    the save (so they are not read again). `can_undo`: whether undo can act now, when this
    request changed it (the undo button comes and goes with it)."""
    grading_set, query = candidate.grading_set, candidate.query
    row = _row(request, candidate, order, saved=saved_grade, position=position)
    row.error = error
    if error:
        row.typed_reason = typed_reason
    row.just_saved = saved and not error
    if unsaved_reason and row.grade is None and not row.locked:
        row.typed_reason = unsaved_reason
    # A save sets the grade's criteria to the current ones, read under its lock (a double submit,
    # which stores nothing, leaves them unread): those are shown, without reading them again.
    criteria = (
        saved_grade.criteria_version
        if saved_grade is not None and Grade.criteria_version.is_cached(saved_grade)
        else CriteriaVersion.objects.current_for(request.project)
    )
    fingerprint = query.fingerprint
    context = {
        "grading_set": grading_set,
        "query": query,
        "row": row,
        "announce": announce or error,
        "criteria": criteria,
        "criteria_changed": criteria_changed,
        "query_changed": query_seen is not None and query_seen != fingerprint,
        "fingerprint": fingerprint,
        "can_undo": can_undo,
        "undo_changed": can_undo is not None,
        "undo_page": _page_of(max(row.position, 1) - 1),
        **_dress(request, grading_set, criteria, [row]),
        **_progress(request, grading_set, query),
    }
    response = render(request, "annotator/grading/grade.html#row-response", context)
    # After settling, so the script finds the new row to put the focus back on.
    return trigger_client_event(
        response,
        "grade-row",
        {"candidate": candidate.pk, "state": row.state, "undone": undone},
        after="settle",
    )


def _stay(request: ProjectRequest, candidate: Candidate) -> None:
    """After a save on `candidate`'s query: a query held before on another is left, and this one is
    noted as open when the save held it (`held_open`), or its activity noted when it was open."""
    here = (candidate.grading_set_id, candidate.query_id)
    if not getattr(candidate, "held_open", False):
        leave_noted(request, staying=here)
        return
    if noted_query(request) != here:
        leave_noted(request, staying=here)  # the save noted activity itself
        note_open(request, *here)


@project_permission(Permission.GRADE)
@keeps_query_open
@require_http_methods(["GET", "POST"])
def grade_save(request: ProjectRequest, slug: str, set_id: int, candidate_id: int) -> HttpResponse:
    def read() -> Candidate:
        return get_object_or_404(
            Candidate.objects.select_related("grading_set", "query", "document"),
            pk=candidate_id,
            grading_set_id=set_id,
            grading_set__project=request.project,
        )

    if request.method == "GET":
        candidate = read()
        # This URL ends up in the address bar after a refused save without JavaScript (the page is
        # rendered here to keep the typed reason): reloading it or switching language GETs it.
        return redirect(_grade_page_url(slug, candidate))
    form = GradeForm(request.POST)
    error = done = ""
    saved_grade: Grade | None = None
    status = 200
    criteria_changed = False
    if form.is_valid():
        try:
            # The save reads the pair itself, under its lock, in this project and set only (a pair
            # of another set or project is a 404): it is not read here first.
            grade = services.grade_submit(
                candidate=Candidate(pk=candidate_id, grading_set_id=set_id),
                project=request.project,
                editor=request.user,
                value=form.cleaned_data["grade"],
                reason=form.cleaned_data["reason"],
                document_version=form.cleaned_data["document_version"],
                criteria_version=form.cleaned_data["criteria_version"],
                query_seen=form.cleaned_data["query_seen"],
                settle_now=False,
            )
        except Candidate.DoesNotExist:
            raise Http404(_("This pair is no longer in the set.")) from None
        except services.UnknownDocumentVersion as exc:
            error, status = str(exc), 400
        except services.CriteriaChanged as exc:
            # The page's criteria panel and every row's form are brought up to date with the row.
            error, status, criteria_changed = str(exc), 409, True
        except services.QueryChanged as exc:
            # The reply shows the text read now (the pair is read after the refusal): the heading is
            # outside the row, so _row_response swaps it too (as the criteria panel), seeing the
            # fingerprint differ.
            error, status = str(exc), 409
        except services.GradingError as exc:  # closed set, pair locked, document changed since it was read
            error, status = str(exc), 409
        else:
            saved_grade = grade
            candidate = grade.candidate
            _stay(request, candidate)
            done = _("Saved grade %(grade)d for %(document)s.") % {
                "grade": grade.grade,
                "document": candidate.document.external_id,
            }
            # Saved under a wording-only change published since the page was read: the panel and
            # the forms catch up too, not the old wording.
            seen = form.cleaned_data["criteria_version"]
            criteria_changed = seen is not None and seen != grade.criteria_version.number
    else:
        error = " ".join(str(e) for errors in form.errors.values() for e in errors)
        # A grade that comes without a usable version of the text it judges (or with a query
        # fingerprint of the wrong shape) was not sent by this page (it always sends one): bad
        # input. Anything else is an ordinary invalid form (200 + the form, as everywhere), also an
        # empty post, which has no grade to refuse.
        bad_version = form.has_error("document_version") or form.has_error("query_seen")
        bad_version = bad_version and not form.has_error("grade")
        status = 400 if bad_version else 200
    if saved_grade is None:
        candidate = read()
    # A refused save must not cost the editor the reason they typed: both paths show it again.
    typed_reason = request.POST.get("reason", "")
    if request.htmx:
        # htmx 2 swaps only 2xx responses, so the refusal comes back as 200 with the failed row.
        return _row_response(
            request,
            candidate,
            error=error,
            typed_reason=typed_reason,
            announce=done,
            saved=True,
            criteria_changed=criteria_changed,
            query_seen=form.cleaned_data.get("query_seen"),
            saved_grade=saved_grade,
            # The row's number on the page (only shown): a value the page did not send is ignored.
            position=parse_id(request.POST.get("position", "")),
            # A saved grade can be undone (its pair is not settled while the editor is here).
            can_undo=True if saved_grade is not None else None,
        )
    if not error:
        messages.success(request, done)
        return redirect(_grade_page_url(slug, candidate))
    # Without JavaScript a redirect would drop the typed reason, so the page is rendered here,
    # with the row marked failed (the form's action ends in #cand-<id>, so the browser lands on it);
    # 400 bad input, 409 refused by the pair's or document's state, 200 an ordinary invalid form.
    messages.error(request, error)
    context = _page_context(request, candidate.grading_set, candidate.query, at=candidate.pk)
    for row in cast(list[Row], context["rows"]):
        if row.candidate.pk == candidate.pk:
            row.error, row.typed_reason = error, typed_reason
    return render(request, "annotator/grading/grade.html", context, status=status)


@project_permission(Permission.GRADE)
@keeps_query_open
@post_from("grade_page")
def grade_undo(request: ProjectRequest, slug: str, set_id: int, query_id: int) -> HttpResponse:
    grading_set, query = _set_and_query(request, set_id, query_id)
    leave_noted(request, staying=(grading_set.pk, query.pk))
    page_url = reverse("grade_page", kwargs={"slug": slug, "set_id": set_id, "query_id": query_id})
    try:
        result = services.grade_undo(editor=request.user, grading_set=grading_set, query=query)
    except services.GradingError as exc:
        if request.htmx:
            response = render(
                request, "annotator/grading/grade.html#announcer", {"announce": str(exc), "oob": True}
            )
            return reswap(response, "none")
        messages.error(request, str(exc))
        return redirect(page_url)
    candidate = Candidate.objects.select_related("grading_set", "query", "document").get(
        pk=result.candidate.pk
    )
    document = candidate.document.external_id
    # Undoing a first grade deletes it with its reason: the text stays in the box, unsaved, so that
    # the next key saves it with the right grade, without typing the reason again.
    # (Only where the row is swapped in place: a reloaded page shows stored text alone.) It is
    # swapped when it is on the page the editor sees (the form sends its number); a grade undone on
    # another page of the query takes the editor there, where the message shows.
    order = _order(request, grading_set, query)
    on_page = str(_page_of(order.index(candidate.pk)))
    in_place = bool(request.htmx) and request.POST.get("page", "1") == on_page
    kept_reason = result.undone[1] if result.grade is None and result.undone and in_place else None
    if result.grade is None:
        text = _("Undone: %(document)s is ungraded again.") % {"document": document}
        if kept_reason:
            text = sentences(
                [text, _("Your reason stays in its box, not saved: a grade key saves it with the grade.")]
            )
    elif result.undone is not None and result.undone[0] == result.grade.grade:
        # Only the reason changed back: the message names the reason, not only the grade.
        if result.grade.reason:
            text = _("Undone: the reason for %(document)s is back to what it was; the grade stays %(grade)d.")
        else:
            text = _("Undone: the reason you wrote for %(document)s is removed; the grade stays %(grade)d.")
        text %= {"document": document, "grade": result.grade.grade}
    else:
        text = _("Undone: %(document)s is back to grade %(grade)d.") % {
            "document": document,
            "grade": result.grade.grade,
        }
    if in_place:
        # The row comes back with the current query's fingerprint: if the query changed since the
        # page was read, its heading catches up too, so that no grade is given on the old text.
        query_seen = request.POST.get("query_seen") or None
        if query_seen is not None and not Query.is_fingerprint(query_seen):
            query_seen = None  # not sent by this page: nothing to tell about the query
        if query_seen is not None and query_seen != query.fingerprint:
            text = sentences(
                [text, _("This query changed while you were reading it. The new text is shown now.")]
            )
        response = _row_response(
            request,
            candidate,
            announce=text,
            undone=True,
            unsaved_reason=kept_reason,
            order=order,
            query_seen=query_seen,
            can_undo=services.undo_available(editor=request.user, grading_set=grading_set, query=query),
        )
        return reswap(retarget(response, f"#cand-{candidate.pk}"), "outerHTML")
    messages.success(request, text)
    if request.htmx:
        return HttpResponseClientRedirect(_grade_page_url(slug, candidate))
    return redirect(_grade_page_url(slug, candidate))
