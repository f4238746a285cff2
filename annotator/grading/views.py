"""Grading sets and their candidates, the editor's queue, and the list of grades to re-check.

Blind on the server: nothing an editor can reach carries another editor's grade or reason, a
count of grades per value, or any system's rank or score; candidate provenance reaches owners only.
The grading page itself is in grade_views.py.
"""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, Exists, OuterRef, Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.grading import services
from annotator.grading.forms import CandidateAddForm, GradingSetForm
from annotator.grading.leaving import settled_message
from annotator.grading.models import GradeQuerySet, PairsInOrder
from annotator.grading.queue import queue_candidates, queue_next
from annotator.grading.settlement import editor_leave, idle_settle
from annotator.models import Candidate, DisputeStatement, DisputeStatus, Grade, GradingSet, Permission
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.converters import parse_id
from annotator.web.http import gone, post_from, redirect_after_post
from annotator.web.paging import Paginator

PAGE_SIZE = 100


# --- grading sets ------------------------------------------------------------------------------


def _set_list_context(request: ProjectRequest, form: GradingSetForm | None = None) -> dict[str, object]:
    sets = list(
        GradingSet.objects.in_project(request.project)
        .with_progress(request.user)
        .order_by("-is_open", "name")
    )
    if form is None and request.membership.may(Permission.CREATE_SETS):
        form = GradingSetForm(project=request.project)
    return {"sets": [(s, *s.annotated_progress()) for s in sets], "form": form}


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def grading_set_list(request: ProjectRequest, slug: str) -> HttpResponse:
    idle_settle(project=request.project)  # the counts below see idle queries settled
    return render(request, "annotator/grading/set_list.html", _set_list_context(request))


@project_permission(Permission.CREATE_SETS)
@post_from("grading_set_list")
def grading_set_create(request: ProjectRequest, slug: str) -> HttpResponse:
    form = GradingSetForm(request.POST, project=request.project)
    if form.is_valid():
        form.instance.created_by = request.user
        grading_set = form.save()
        messages.success(
            request, _("Grading set “%(name)s” created. Now add its candidates.") % {"name": grading_set.name}
        )
        return redirect_after_post(
            request,
            reverse("grading_set_detail", kwargs={"slug": request.project.slug, "set_id": grading_set.pk}),
        )
    template = "annotator/grading/set_list.html" + ("#set-form" if request.htmx else "")
    return render(request, template, _set_list_context(request, form))


def _set_detail_context(
    request: ProjectRequest, grading_set: GradingSet, add_form: CandidateAddForm | None = None
) -> dict[str, object]:
    me = request.user
    candidates = Candidate.objects.filter(grading_set=grading_set)
    queries = Paginator(grading_set.queries().values("pk"), PAGE_SIZE).get_page(request.GET.get("page"))
    # The counts of this page's queries only.
    per_query = (
        candidates.filter(query__in=[row["pk"] for row in queries])
        .alias(mine_flag=Exists(Grade.objects.filter(candidate=OuterRef("pk"), editor=me)))
        .values("query", "query__external_id", "query__text")
        .annotate(
            total=Count("pk"),
            done=Count("pk", filter=Q(done=True)),
            mine=Count("pk", filter=Q(mine_flag=True)),
        )
        .order_by("query__external_id")
    )
    context: dict[str, object] = {
        "grading_set": grading_set,
        "queries": queries,
        "query_rows": list(per_query),
        **dict(zip(("set_progress", "my_progress"), grading_set.progress_with(me), strict=True)),
        # The queue's own rule, so the button is offered only where it leads to a pair, never to
        # "nothing waiting".
        "waiting_for_me": queue_candidates(
            project=request.project, editor=me, grading_set=grading_set
        ).exists(),
    }
    # Provenance (runs and positions) is for those who pool candidates: built here or not at all.
    if request.membership.may(Permission.POOL_CANDIDATES):
        listed = candidates.select_related("query", "document", "added_by").annotate(
            graded=Exists(Grade.objects.filter(candidate=OuterRef("pk")))
        )
        context["candidates"] = Paginator(PairsInOrder(grading_set, listed), PAGE_SIZE).get_page(
            request.GET.get("cpage")
        )
        context["add_form"] = add_form or CandidateAddForm(project=request.project)
    return context


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def grading_set_detail(request: ProjectRequest, slug: str, set_id: int) -> HttpResponse:
    # The version it started from is named on the page (its frozen text is not needed for that).
    sets = GradingSet.objects.select_related("based_on__pool").defer("based_on__canonical")
    grading_set = get_object_or_404(sets, pk=set_id, project=request.project)
    idle_settle(grading_set=grading_set)
    return render(request, "annotator/grading/set_detail.html", _set_detail_context(request, grading_set))


@project_permission(Permission.POOL_CANDIDATES)
@post_from("grading_set_detail")
def candidate_add(request: ProjectRequest, slug: str, set_id: int) -> HttpResponse:
    grading_set = get_object_or_404(GradingSet, pk=set_id, project=request.project)
    form = CandidateAddForm(request.POST, project=request.project)
    if form.is_valid():
        try:
            summary = services.candidates_add_by_hand(
                grading_set=grading_set,
                query=form.cleaned_data["query_id"],
                documents=form.cleaned_data["doc_ids"],
                by=request.user,
            )
        except services.GradingError as error:
            messages.error(request, str(error))
            return redirect_after_post(
                request,
                reverse(
                    "grading_set_detail", kwargs={"slug": request.project.slug, "set_id": grading_set.pk}
                ),
            )
        messages.success(
            request,
            _("Candidates: added %(added)d, already in the set %(already)d.")
            % {"added": summary.added, "already": summary.already},
        )
        return redirect_after_post(
            request,
            reverse("grading_set_detail", kwargs={"slug": request.project.slug, "set_id": grading_set.pk}),
        )
    template = "annotator/grading/set_detail.html" + ("#candidate-add" if request.htmx else "")
    return render(request, template, _set_detail_context(request, grading_set, add_form=form))


@project_permission(Permission.POOL_CANDIDATES)
@require_POST
def candidate_remove(request: ProjectRequest, slug: str, set_id: int, candidate_id: int) -> HttpResponse:
    candidate = (
        Candidate.objects.select_related("query", "document")
        .filter(pk=candidate_id, grading_set_id=set_id, grading_set__project=request.project)
        .first()
    )
    if candidate is None:  # removed in another tab, say: a page that explains, not a bare 404
        grading_set = get_object_or_404(GradingSet, pk=set_id, project=request.project)
        return gone(
            request,
            _("This pair is no longer in the set: removed already."),
            reverse("grading_set_detail", kwargs={"slug": request.project.slug, "set_id": grading_set.pk}),
            _("Back to the grading set"),
        )
    try:
        services.candidate_remove(candidate=candidate)
    except services.GradingError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("Removed %(document)s from query %(query)s.")
            % {"document": candidate.document.external_id, "query": candidate.query.external_id},
        )
    return redirect("grading_set_detail", slug=request.project.slug, set_id=set_id)


# --- the queue ---------------------------------------------------------------------------------


def _my_stale(request: ProjectRequest) -> GradeQuerySet:
    return (
        Grade.objects.blind_for(request.user)
        .stale()
        .in_open_sets()
        .filter(candidate__grading_set__project=request.project)
    )


@project_permission(Permission.GRADE)
@require_GET
def grading_queue(request: ProjectRequest, slug: str) -> HttpResponse:
    # The query the editor left settled before this view (leaving.py); one held open in another
    # browser is left by coming here too, and idle ones settle for everyone.
    _leave(request)
    idle_settle(project=request.project)
    left = dict(
        queue_candidates(project=request.project, editor=request.user)
        .values("grading_set")
        .annotate(n=Count("pk"))
        .values_list("grading_set", "n")
    )
    sets = GradingSet.objects.in_project(request.project).open().with_progress(request.user).order_by("name")
    context = {
        "rows": [(s, left.get(s.pk, 0), *s.annotated_progress()) for s in sets],
        "total_left": sum(left.values()),
        # Only what the editor can act on; the list itself also shows settled pairs, saying why not.
        "stale_count": _my_stale(request).to_recheck().count(),
        "reasons_waiting": DisputeStatement.objects.filter(
            editor=request.user,
            reason_given_at__isnull=True,
            dispute__status=DisputeStatus.AWAITING_REASONS,
            dispute__grading_set__project=request.project,
            dispute__grading_set__is_open=True,
        ).count(),
    }
    return render(request, "annotator/grading/queue.html", context)


def _leave(request: ProjectRequest) -> None:
    """Settle every query the editor holds open in the project (the session's one settled already,
    before the view: leaving.py), and tell them what settled."""
    if settled := editor_leave(editor=request.user, project=request.project):
        messages.info(request, settled_message(settled))


@project_permission(Permission.GRADE)
@require_POST
def grading_next(request: ProjectRequest, slug: str) -> HttpResponse:
    # "Next query" leaves the query: its pairs settle before the next one is chosen.
    _leave(request)
    grading_set = None
    raw = request.POST.get("set_id", "").strip()
    if raw:
        set_id = parse_id(raw)
        grading_set = (
            GradingSet.objects.filter(project=request.project, pk=set_id).first() if set_id else None
        )
        if grading_set is None:
            messages.error(request, _("No grading set “%(value)s” in this project.") % {"value": raw})
            return redirect("grading_queue", slug=request.project.slug)
    found = queue_next(project=request.project, editor=request.user, grading_set=grading_set)
    if found is None and grading_set is not None:
        # Asked from a set's page: the answer is about that set. Another set with work waiting is
        # offered on the queue, which lists them; else the editor stays on the set's page.
        if queue_next(project=request.project, editor=request.user) is not None:
            messages.info(
                request,
                _("Nothing in %(set)s is waiting for your grade right now. Other sets are: pick one below.")
                % {"set": grading_set.name},
            )
            return redirect("grading_queue", slug=request.project.slug)
        messages.info(
            request, _("Nothing in %(set)s is waiting for your grade right now.") % {"set": grading_set.name}
        )
        return redirect("grading_set_detail", slug=request.project.slug, set_id=grading_set.pk)
    if found is None:
        messages.info(request, _("Nothing is waiting for your grade right now. Thank you!"))
        return redirect("grading_queue", slug=request.project.slug)
    found_set, query = found
    return redirect("grade_page", slug=request.project.slug, set_id=found_set.pk, query_id=query.pk)


# --- stale grades ---------------------------------------------------------------------------------


def _locked_stale(candidate: Candidate) -> str | None:
    """Why the editor cannot re-check this grade themselves (None: they can)."""
    if hasattr(candidate, "final_grade"):
        # Not a dead end: the reviewers' list of settled pairs to re-check takes it from here.
        return _(
            "This pair is settled: a reviewer re-checks its final grade on the new text, and the flag clears "
            "then."
        )
    return services.pair_lock_reason(candidate)


@project_permission(Permission.GRADE)
@require_GET
def stale_list(request: ProjectRequest, slug: str) -> HttpResponse:
    grades = (
        _my_stale(request)
        .select_related(
            "candidate__query",
            "candidate__document",
            "candidate__grading_set",
            "candidate__final_grade",
            "candidate__dispute",
            "document_version",
            "criteria_version",
        )
        .order_by(
            "candidate__grading_set__name",
            "candidate__query__external_id",
            "candidate__document__external_id",
        )
    )
    # Two tables: the grades this editor re-checks (what every "need re-checking" count counts,
    # Grade.to_recheck), and those on settled or disputed pairs, which a reviewer takes: the first
    # table matches the overview's count.
    mine = grades.to_recheck()
    page = Paginator(mine, PAGE_SIZE).get_page(request.GET.get("page"))
    waiting = Paginator(grades.exclude(pk__in=mine.values("pk")), PAGE_SIZE).get_page(
        request.GET.get("waiting_page")
    )
    # A settled or disputed pair cannot be re-graded here: each row says who takes it instead.
    waiting_rows = [(grade, _locked_stale(grade.candidate)) for grade in waiting]
    context = {
        "page": page,
        "rows": [(grade, None) for grade in page],
        "waiting": waiting,
        "waiting_rows": waiting_rows,
    }
    return render(request, "annotator/grading/stale_list.html", context)
