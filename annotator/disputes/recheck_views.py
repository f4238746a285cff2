"""Re-checking settled pairs whose grades went stale: the reviewers' list and the page of one pair.

A settled pair's editors cannot re-grade it, so a reviewer who did not grade it re-reads it as it
reads now and keeps or changes its final grade (`final_grade_recheck`).
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Prefetch
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotator.disputes.forms import RecheckForm
from annotator.disputes.rechecks import (
    AlreadyRechecked,
    PairChangedSinceShown,
    final_grade_recheck,
    final_recheck_refusal,
    recheck_reason_codes,
    recheck_token,
)
from annotator.disputes.services import DisputeError, pairs_graded_by
from annotator.disputes.views import editor_labels
from annotator.models import (
    GRADE_VALUES,
    REASON_MAX_LENGTH,
    Candidate,
    CandidateSource,
    CriteriaVersion,
    DisputeStatement,
    FinalGrade,
    Grade,
    Permission,
    PoolJudgment,
    StaleReason,
)
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.paging import Paginator

PER_PAGE = 25


def _to_recheck(request: ProjectRequest) -> Any:
    return (
        Candidate.objects.filter(grading_set__project=request.project)
        .final_to_recheck()
        .select_related("query", "document", "grading_set", "final_grade")
        .prefetch_related(
            Prefetch("grades", queryset=Grade.objects.filter(stale=True), to_attr="stale_grades")
        )
        .order_by("grading_set__name", "query__external_id", "document__external_id", "pk")
    )


@project_permission(Permission.RECHECK_FINAL)
@require_GET
def final_recheck_list(request: ProjectRequest, slug: str) -> HttpResponse:
    """Settled pairs whose grades are marked for re-checking: their editors cannot re-grade them."""
    page = Paginator(_to_recheck(request), PER_PAGE).get_page(request.GET.get("page"))
    mine = pairs_graded_by(request.user, [c.pk for c in page])
    rows = [
        {
            "candidate": c,
            "reasons": StaleReason.labels_for_others(recheck_reason_codes(c.final_grade, c.stale_grades)),  # type: ignore[attr-defined]
            "graded_by_me": c.pk in mine,
        }
        for c in page
    ]
    return render(request, "annotator/disputes/recheck_list.html", {"page": page, "rows": rows})


def _recheck_context(
    request: ProjectRequest, candidate: Candidate, form: RecheckForm | None = None, *, flash: str = ""
) -> dict[str, Any]:
    final = (
        FinalGrade.objects.select_related("decided_by", "criteria_version")
        .filter(candidate=candidate)
        .first()
    )
    grades = list(
        candidate.grades.select_related("editor", "document_version", "criteria_version").order_by("pk")
    )
    labels = editor_labels([g.editor_id for g in grades])
    # A pair settled by a dispute: each editor's reason and revision were the basis of its final
    # grade, so the reviewer re-reads them too: a revised grade shows as revised.
    statements = {s.editor_id: s for s in DisputeStatement.objects.filter(dispute__candidate=candidate)}
    current_criteria = CriteriaVersion.objects.current_for(request.project)
    refusal = final_recheck_refusal(candidate=candidate, user=request.user)
    if not refusal and final is not None:
        token = recheck_token(candidate)
        if form is None:
            form = RecheckForm(initial={"seen": token}, current=final.grade)
    else:
        form = None
    rechecks = list(candidate.final_rechecks.select_related("reviewer", "document_version"))
    # A pair copied from a frozen version: no editor graded it here; its final grade came with the
    # judgment, which records the document version it was decided on (imported ones: none).
    copied = None
    if candidate.source == CandidateSource.COPIED and candidate.grading_set.based_on_id:
        copied = (
            PoolJudgment.objects.filter(
                version_id=candidate.grading_set.based_on_id,
                query_id=candidate.query.external_id,
                doc_id=candidate.document.external_id,
            )
            .select_related("document_version", "version__pool")
            .first()
        )
    # The criteria the grades were given under, where newer ones replaced them: the reviewer compares.
    decided_under = {g.criteria_version for g in grades} | (
        {final.criteria_version} if copied and final else set()
    )
    older_criteria = sorted(
        {c for c in decided_under if c.number != current_criteria.number}, key=lambda c: c.number
    )
    # The texts the editors read, where the document changed since: the reviewer compares.
    read = {g.document_version for g in grades}
    if copied is not None and copied.document_version is not None:
        read.add(copied.document_version)
    older = sorted({v for v in read if v.version != candidate.document.version}, key=lambda v: v.version)
    return {
        # What _pair.html shows: the query, the criteria and the document as they are now.
        "candidate": candidate,
        "query": candidate.query,
        "document": candidate.document,
        "document_version": candidate.document.current_version,  # named in the heading: "version N"
        "criteria": current_criteria,
        "current_criteria": current_criteria,
        "final_grade": final,
        "grades": [
            {
                "label": labels[g.editor_id],
                "grade": g,
                "reasons": g.stale_reasons_for_others(),
                "statement": statements.get(g.editor_id),
            }
            for g in grades
        ],
        "copied": copied,
        "copied_reasons": StaleReason.labels_for_others(final.stale_reason.split(",")) if final else [],
        "older_versions": older,
        "older_criteria": older_criteria,
        # Queries keep no versions: the page says so rather than show nothing to compare.
        "query_changed": any(g.stale_for(StaleReason.QUERY) for g in grades)
        or (final is not None and StaleReason.QUERY.value in final.stale_reason.split(",")),
        "rechecks": rechecks,
        "final_note": "" if final is None or (rechecks and rechecks[-1].changed_grade) else final.note,
        "refusal": refusal,
        "form": form,
        "flash": flash,
    }


def _next_to_recheck(request: ProjectRequest, after: Candidate) -> Candidate | None:
    """The pair that follows `after` in the list (from the top again at its end) that this reviewer
    may take: the list's order, not a jump back to its first row."""
    order = ("grading_set__name", "query__external_id", "document__external_id", "pk")
    rows = list(_to_recheck(request).exclude(pk=after.pk).values_list(*order))
    here = (after.grading_set.name, after.query.external_id, after.document.external_id, after.pk)
    following = [row for row in rows if row > here] + [row for row in rows if row < here]
    mine = pairs_graded_by(request.user, [row[-1] for row in following[:200]])
    pk = next((row[-1] for row in following[:200] if row[-1] not in mine), None)
    return None if pk is None else Candidate.objects.get(pk=pk)


@project_permission(Permission.RECHECK_FINAL)
@require_http_methods(["GET", "POST"])
def final_recheck(request: ProjectRequest, slug: str, candidate_id: int) -> HttpResponse:
    """One settled pair, as it reads now: keep or change its final grade (final_grade_recheck)."""
    candidate = get_object_or_404(
        Candidate.objects.select_related("query", "document", "grading_set"),
        pk=candidate_id,
        grading_set__project=request.project,
    )
    template = "annotator/disputes/recheck.html"
    if request.method != "POST":
        return render(request, template, _recheck_context(request, candidate))
    final = FinalGrade.objects.filter(candidate=candidate).first()
    if final is None or final_recheck_refusal(candidate=candidate, user=request.user):
        # Nothing this reviewer may record here (the page says why, as an alert: the answer to
        # their action), whatever the form holds; a grade they chose (e.g. another reviewer
        # re-checked the pair first) is shown as not recorded, so a disagreement is not lost.
        context = _recheck_context(request, candidate)
        context["flash"] = context["refusal"]
        chosen = request.POST.get("grade", "")
        if chosen in {str(g) for g in GRADE_VALUES}:
            note = request.POST.get("note", "").strip()[:REASON_MAX_LENGTH]
            context["unrecorded"] = {"grade": int(chosen), "note": note}
        return render(request, template, context, status=409)
    form = RecheckForm(request.POST, current=final.grade)
    if not form.is_valid():
        return render(request, template, _recheck_context(request, candidate, form))
    try:
        recheck = final_grade_recheck(
            candidate=candidate,
            by=request.user,
            grade=form.cleaned_data["grade"],
            note=form.cleaned_data["note"],
            seen=form.cleaned_data["seen"],
        )
    except (AlreadyRechecked, PairChangedSinceShown) as exc:
        # Someone was faster, or the pair changed under the page: show it as it is now, with what
        # the reviewer had chosen and typed (the hidden token is the new page's). With no form
        # left (another reviewer re-checked it), their choice is shown as not recorded.
        candidate.refresh_from_db()
        context = _recheck_context(request, candidate, flash=exc.message)
        context["unrecorded"] = {"grade": form.cleaned_data["grade"], "note": form.cleaned_data["note"]}
        if context["form"] is not None:
            context["form"] = RecheckForm(
                initial={
                    **context["form"].initial,
                    "grade": form.cleaned_data["grade"],
                    "note": form.cleaned_data["note"],
                },
                current=context["final_grade"].grade,
            )
        return render(request, template, context, status=409)
    except DisputeError as exc:
        return render(request, template, _recheck_context(request, candidate, flash=exc.message), status=409)
    pair = {"query": candidate.query.external_id, "document": candidate.document.external_id}
    if recheck.changed_grade:
        text = _("Re-checked %(query)s / %(document)s: final grade changed from %(old)d to %(new)d.") % {
            **pair,
            "old": recheck.old_grade,
            "new": recheck.new_grade,
        }
    else:
        text = _("Re-checked %(query)s / %(document)s: final grade %(grade)d kept.") % {
            **pair,
            "grade": recheck.new_grade,
        }
    messages.success(request, text)
    following = _next_to_recheck(request, candidate)
    if following is not None:
        return redirect("final_recheck", slug=request.project.slug, candidate_id=following.pk)
    return redirect("final_recheck_list", slug=request.project.slug)
