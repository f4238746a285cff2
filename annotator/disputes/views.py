"""Disputes: editors' reasons and revisions, the reviewer queue and decision, timelines, agreement.

Blind until the reveal: an editor sees only their own disputes, and in them only their own grade
and reason; a reviewer who graded the pair is its editor there and cannot settle it.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db.models import Case, Count, Exists, OuterRef, Prefetch, Q, When
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.disputes import agreement
from annotator.disputes.forms import ReasonForm, RecheckForm, RevisionForm, SettleForm
from annotator.disputes.models import REVEALED_STATUSES
from annotator.disputes.services import (
    AlreadyRechecked,
    AlreadySettled,
    DisputeError,
    PairChangedSinceShown,
    closed_refusal,
    departed_editors,
    dispute_give_reason,
    dispute_hand_to_review,
    dispute_revise,
    dispute_settle,
    final_grade_recheck,
    final_recheck_refusal,
    gone_editor_ids,
    graded_pair,
    pair_timeline,
    pairs_graded_by,
    reason_refusal,
    recheck_reason_codes,
    recheck_token,
    revision_refusal,
)
from annotator.grading.models import count_of
from annotator.models import (
    GRADE_VALUES,
    REASON_MAX_LENGTH,
    Candidate,
    CandidateSource,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    DisputeStatus,
    FinalGrade,
    Grade,
    GradingSet,
    Permission,
    PoolJudgment,
    StaleReason,
)
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import post_from
from annotator.web.paging import Paginator

PER_PAGE = 25
ANONYMOUS_SESSION_KEY = "disputes_anonymous"


def _dispute_or_404(request: ProjectRequest, dispute_id: int) -> Dispute:
    """The dispute, if it is in this project and the person may see it (else 404, like an unknown ID)."""
    statements = Prefetch(
        "statements", queryset=DisputeStatement.objects.select_related("editor").order_by("pk")
    )
    return get_object_or_404(
        Dispute.objects.visible_to(request.membership).with_pair().prefetch_related(statements),
        pk=dispute_id,
    )


def _page(request: ProjectRequest, items: Any, param: str = "page") -> Any:
    return Paginator(items, PER_PAGE).get_page(request.GET.get(param))


# Lists -------------------------------------------------------------------------------------------


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def dispute_list(request: ProjectRequest, slug: str) -> HttpResponse:
    """Editors: their own disputes. Reviewers and owners: every dispute of the project."""
    status = request.GET.get("status", "")
    disputes = Dispute.objects.visible_to(request.membership).with_pair().prefetch_related("statements")
    if status and status not in DisputeStatus.values:
        messages.error(
            request,
            # The filter links above name the statuses in the reader's language; the codes would not.
            _("Unknown status “%(status)s”: showing every dispute. Pick a status from the list above.")
            % {"status": status},
        )
        status = ""
    if status:
        disputes = disputes.filter(status=status)
    # Open disputes first, then the oldest. Not by severity: before the reveal an editor's own
    # disputes hide it, and an order by it would tell them how far off the other grades are (the
    # reviewers' queue, of revealed disputes only, is the list ordered by severity).
    # A dispute whose set was frozen without its pair can no longer move: it sorts with the settled.
    settled_last = Case(
        When(status=DisputeStatus.SETTLED, then=1),
        When(candidate__grading_set__is_open=False, then=1),
        default=0,
    )
    page = _page(request, disputes.order_by(settled_last, "opened_at", "pk"))
    # A dispute left out of a frozen set asks nobody for anything any more (closed_refusal).
    rows = [
        {
            "dispute": d,
            "mine": d.statement_for(request.user),
            "left_out": not d.is_settled and not d.candidate.grading_set.is_open,
        }
        for d in page
    ]
    context = {
        "page": page,
        "rows": rows,
        "status": status,
        "statuses": DisputeStatus.choices,
    }
    template = "annotator/disputes/list.html" + ("#dispute-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.SETTLE_DISPUTES)
@require_GET
def dispute_queue(request: ProjectRequest, slug: str) -> HttpResponse:
    """Disputes waiting for a reviewer: the widest disagreements first, then the oldest."""
    queue = (
        Dispute.objects.in_project(request.project).review_queue().with_pair().prefetch_related("statements")
    )
    page = _page(request, queue)
    rows = [{"dispute": d, "graded_by_me": d.has_participant(request.user)} for d in page]
    template = "annotator/disputes/queue.html" + ("#queue-table" if request.htmx else "")
    # Not in the queue yet, and never would be by themselves: listed here, not only on their page.
    stuck = (
        Dispute.objects.in_project(request.project)
        .waiting_for_departed()
        .with_pair()
        .order_by("opened_at", "pk")
    )
    recheck_count = Candidate.objects.filter(grading_set__project=request.project).final_to_recheck().count()
    context = {"page": page, "rows": rows, "stuck": stuck[:50], "recheck_count": recheck_count}
    return render(request, template, context)


# One dispute, as its editor sees it --------------------------------------------------------------


def _pair_context(dispute: Dispute) -> dict[str, Any]:
    """What the grades were about: the query, the document version and criteria the grades used."""
    candidate = dispute.candidate
    grades = list(
        Grade.objects.filter(candidate=candidate).select_related(
            "document_version", "criteria_version", "editor"
        )
    )
    graded_version = max((g.document_version for g in grades), key=lambda v: v.version, default=None)
    criteria = max((g.criteria_version for g in grades), key=lambda c: c.number, default=None)
    current_criteria = CriteriaVersion.objects.current_for(candidate.grading_set.project)
    # Queries keep no versions: a grade marked for it tells the text changed, and once the set is
    # frozen (imports mark open sets only) the fingerprint its judgment recorded does.
    query_changed = any(g.stale_for(StaleReason.QUERY) for g in grades)
    if not query_changed and not candidate.grading_set.is_open:
        judgment = PoolJudgment.objects.filter(
            version__grading_set=candidate.grading_set,
            query_id=candidate.query.external_id,
            doc_id=candidate.document.external_id,
        ).first()
        query_changed = judgment is not None and judgment.query_changed_since(candidate.query.fingerprint)
    return {
        "candidate": candidate,
        "query": candidate.query,
        "document": candidate.document,
        "document_version": graded_version,
        # The document changed after it was graded: the grades may need a re-check.
        "document_changed": graded_version is not None
        and graded_version.version != candidate.document.version,
        "criteria": criteria or current_criteria,
        "current_criteria": current_criteria,
        "query_changed": query_changed,
        "raw_grades": {g.editor_id: g for g in grades},
    }


def _detail_context(
    request: ProjectRequest,
    dispute: Dispute,
    *,
    reason_form: ReasonForm | None = None,
    revision_form: RevisionForm | None = None,
    flash: str = "",
    flash_level: str = "success",
) -> dict[str, Any]:
    mine = dispute.statement_for(request.user)
    is_grader = mine is not None or graded_pair(candidate_id=dispute.candidate_id, user=request.user)
    # Blindness: someone who graded this pair sees the others only from the reveal on.
    sees_others = dispute.is_revealed or not is_grader
    pair = _pair_context(dispute)
    prefilled = False
    if mine is not None and reason_form is None and dispute.status == DisputeStatus.AWAITING_REASONS:
        raw = pair["raw_grades"].get(request.user.pk)
        initial_reason = mine.reason or (raw.reason if raw else "")
        # The grading page's reason is offered, not given: the page says so.
        prefilled = not mine.has_reason and bool(initial_reason)
        reason_form = ReasonForm(initial={"reason": initial_reason, "criteria_level": mine.criteria_level})
    if (
        mine is not None
        and revision_form is None
        and dispute.status == DisputeStatus.REVEALED
        and not mine.has_responded
    ):
        revision_form = RevisionForm()
    statements = list(dispute.statements.all())
    # With names hidden on the review page (kept for the session), a reviewer reading the dispute
    # sees "Editor N" here too, numbered as there: one click must not bring the names back.
    labels = _editor_labels([s.editor_id for s in statements]) if mine is None and _anonymous(request) else {}
    for statement in statements:
        statement.label = labels.get(statement.editor_id) or statement.editor.get_username()  # type: ignore[attr-defined]
    escalated_by = dispute.escalated_by
    closed = closed_refusal(dispute)
    can_review = request.membership.may(Permission.SETTLE_DISPUTES) and not is_grader
    # A reviewer reading a dispute stuck on someone who left is told, with the way on ("Send to
    # review"), not only on the review page.
    gone = gone_editor_ids(dispute)
    departed = departed_editors(dispute, gone) if can_review and not closed else []
    return {
        **pair,
        "escalated_label": (labels.get(escalated_by.pk) or escalated_by.get_username())
        if escalated_by
        else "",
        "dispute": dispute,
        "closed": closed,
        "gone_ids": gone,
        "mine": mine,
        "is_grader": is_grader,
        "sees_others": sees_others,
        "statements": statements if sees_others else [s for s in statements if s == mine],
        "reasons_given": dispute.reasons_given(),
        "editor_count": len(statements),
        "final_grade": getattr(dispute.candidate, "final_grade", None),
        "reason_prefilled": prefilled,
        "reason_form": reason_form
        if mine is not None and dispute.status == DisputeStatus.AWAITING_REASONS and not closed
        else None,
        "revision_form": revision_form
        if mine is not None
        and dispute.status == DisputeStatus.REVEALED
        and not mine.has_responded
        and not closed
        else None,
        "can_review": can_review,
        "departed": [labels.get(user.pk) or user.get_username() for user in departed],
        "flash": flash,
        "flash_level": flash_level,
    }


def _render_detail(
    request: ProjectRequest, dispute: Dispute, status: int = 200, **kwargs: Any
) -> HttpResponse:
    template = "annotator/disputes/detail.html" + ("#dispute-main" if request.htmx else "")
    return render(request, template, _detail_context(request, dispute, **kwargs), status=status)


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def dispute_detail(request: ProjectRequest, slug: str, dispute_id: int) -> HttpResponse:
    return _render_detail(request, _dispute_or_404(request, dispute_id))


def _after_action(
    request: ProjectRequest, dispute_id: int, message: str, *, error: bool = False
) -> HttpResponse:
    """Post/redirect/get without JavaScript; with htmx, the refreshed dispute in place."""
    if not request.htmx:
        (messages.error if error else messages.success)(request, message)
        return redirect("dispute_detail", slug=request.project.slug, dispute_id=dispute_id)
    dispute = _dispute_or_404(request, dispute_id)
    return _render_detail(request, dispute, flash=message, flash_level="error" if error else "success")


@project_permission(Permission.GRADE)
@post_from("dispute_detail")
def dispute_reason(request: ProjectRequest, slug: str, dispute_id: int) -> HttpResponse:
    dispute = _dispute_or_404(request, dispute_id)
    if refusal := reason_refusal(dispute=dispute, editor=request.user):
        return _after_action(request, dispute_id, refusal, error=True)
    form = ReasonForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, dispute, reason_form=form)
    try:
        dispute = dispute_give_reason(
            dispute=dispute,
            editor=request.user,
            reason=form.cleaned_data.get("reason", ""),
            criteria_level=form.cleaned_data.get("criteria_level"),
        )
    except DisputeError as exc:
        return _after_action(request, dispute_id, exc.message, error=True)
    if dispute.status == DisputeStatus.REVEALED:
        message = _("Your reason is in, and so is everyone else's: the grades and reasons are now revealed.")
    elif dispute.status == DisputeStatus.IN_REVIEW:
        # The others left before giving theirs (dispute_give_reason hands it over then).
        message = _(
            "Your reason is saved. The other editors can no longer give theirs, so the dispute goes to a "
            "reviewer with the grades and reasons on record."
        )
    else:
        message = _(
            "Your reason is saved. The other grades stay hidden until every editor has given a reason."
        )
    return _after_action(request, dispute_id, message)


@project_permission(Permission.GRADE)
@post_from("dispute_detail")
def dispute_revision(request: ProjectRequest, slug: str, dispute_id: int) -> HttpResponse:
    dispute = _dispute_or_404(request, dispute_id)
    refusal = revision_refusal(dispute=dispute, editor=request.user)
    mine = dispute.statement_for(request.user)
    if refusal or mine is None:  # not one of its editors, not revealed yet, or already answered
        return _after_action(request, dispute_id, refusal, error=True)
    form = RevisionForm(request.POST)
    if not form.is_valid():
        return _render_detail(request, dispute, revision_form=form)
    grade = form.cleaned_data["grade"]
    try:
        dispute = dispute_revise(
            dispute=dispute, editor=request.user, grade=grade, note=form.cleaned_data["note"]
        )
    except DisputeError as exc:
        return _after_action(request, dispute_id, exc.message, error=True)
    if grade == mine.original_grade:
        message = _("You kept your grade %(grade)s.") % {"grade": grade}
    else:
        message = _("You revised your grade from %(old)s to %(new)s.") % {
            "old": mine.original_grade,
            "new": grade,
        }
    if dispute.status == DisputeStatus.SETTLED:
        message += " " + _("All editors now agree: the pair is settled by discussion.")
    elif dispute.status == DisputeStatus.IN_REVIEW:
        message += " " + _("The grades still differ: the dispute goes to a reviewer.")
    return _after_action(request, dispute_id, message)


# The reviewer's page -----------------------------------------------------------------------------


def _anonymous(request: ProjectRequest) -> bool:
    """The reviewer's "Editor 1/2" choice, kept for the session so it holds along the queue."""
    if request.GET.get("names") in ("hide", "show"):
        request.session[ANONYMOUS_SESSION_KEY] = request.GET["names"] == "hide"
    return bool(request.session.get(ANONYMOUS_SESSION_KEY, False))


def _editor_labels(editor_ids: list[int]) -> dict[int, str]:
    """{editor id: "Editor N"} in the given order, for pages where the reviewer hid the names."""
    return {pk: _("Editor %(n)s") % {"n": i} for i, pk in enumerate(editor_ids, start=1)}


def _review_context(
    request: ProjectRequest,
    dispute: Dispute,
    form: SettleForm | None,
    *,
    flash: str = "",
    flash_level: str = "",
) -> dict[str, Any]:
    anonymous = _anonymous(request)
    statements = list(dispute.statements.all())
    pair = _pair_context(dispute)
    labels = _editor_labels([s.editor_id for s in statements]) if anonymous else {}
    columns = [
        {
            "statement": s,
            "label": labels.get(s.editor_id) or s.editor.get_username(),
            "raw": pair["raw_grades"].get(s.editor_id),
        }
        for s in statements
    ]
    is_grader = graded_pair(candidate_id=dispute.candidate_id, user=request.user)
    closed = closed_refusal(dispute)
    can_settle = dispute.status == DisputeStatus.IN_REVIEW and not is_grader and not closed
    gone = gone_editor_ids(dispute)
    departed = [] if is_grader or closed else departed_editors(dispute, gone)
    # Named as the columns name them: with names hidden, "Editor 2", not the account.
    label_of = {column["statement"].editor_id: column["label"] for column in columns}
    departed_labels = [label_of.get(user.pk, user.get_username()) for user in departed]
    next_in_queue = (
        Dispute.objects.in_project(request.project)
        .review_queue()
        .exclude(pk=dispute.pk)
        .exclude(statements__editor=request.user)
        .first()
    )
    return {
        **pair,
        "dispute": dispute,
        "columns": columns,
        "anonymous": anonymous,
        "is_grader": is_grader,
        "closed": closed,
        "departed": departed_labels,
        "gone_ids": gone,
        "form": (form or SettleForm(on_record=dispute.grades_on_record())) if can_settle else None,
        "on_record": sorted(dispute.grades_on_record()),
        "final_grade": getattr(dispute.candidate, "final_grade", None),
        "next_in_queue": next_in_queue,
        "flash": flash,
        "flash_level": flash_level,
    }


@project_permission(Permission.SETTLE_DISPUTES)
@require_http_methods(["GET", "POST"])
def dispute_review(request: ProjectRequest, slug: str, dispute_id: int) -> HttpResponse:
    """Side by side: query, document, criteria and each editor's grade, reason and revision; decide."""
    dispute = _dispute_or_404(request, dispute_id)
    if dispute.has_participant(request.user) and not dispute.is_revealed:
        # A reviewer who graded the pair is one of its editors: blind until the reveal.
        messages.info(request, _("You graded this pair: it is shown to you as to its other editors."))
        return redirect("dispute_detail", slug=request.project.slug, dispute_id=dispute.pk)
    template = "annotator/disputes/review.html" + ("#dispute-review" if request.htmx else "")
    if request.method != "POST":
        # The names toggle re-renders the page part holding the settle form: what the reviewer
        # had chosen and typed comes along (unvalidated, only shown again).
        kept = {key: request.GET[key] for key in ("grade", "note") if key in request.GET}
        form = SettleForm(initial=kept, on_record=dispute.grades_on_record()) if kept else None
        return render(request, template, _review_context(request, dispute, form))

    form = SettleForm(request.POST, on_record=dispute.grades_on_record())
    if not form.is_valid():
        return render(request, template, _review_context(request, dispute, form))
    try:
        final = dispute_settle(
            dispute=dispute, by=request.user, grade=form.cleaned_data["grade"], note=form.cleaned_data["note"]
        )
    except AlreadySettled as exc:
        # Lost a race (or a stale page): say who settled it and how. 409 without htmx; htmx 2
        # swaps only 2xx, so the same explanation comes with 200 there.
        dispute = _dispute_or_404(request, dispute_id)
        context = _review_context(request, dispute, None, flash=exc.message, flash_level="error")
        return render(request, template, context, status=200 if request.htmx else 409)
    except DisputeError as exc:
        form.add_error(None, exc.message)
        context = _review_context(request, dispute, form)
        if context["form"] is None:  # no form on the page (not in review, or graded by this reviewer)
            context.update(flash=exc.message, flash_level="error")
        # Refused by the dispute's state or the reviewer's part in it, not by the form: 409 for
        # clients without htmx (a 200 reads as success), 200 for htmx, which swaps only 2xx.
        return render(request, template, context, status=200 if request.htmx else 409)
    message = _("Settled: final grade %(grade)s.") % {"grade": final.grade}
    if not request.htmx:
        messages.success(request, message)
        return redirect("dispute_review", slug=request.project.slug, dispute_id=dispute.pk)
    dispute = _dispute_or_404(request, dispute_id)
    return render(
        request, template, _review_context(request, dispute, None, flash=message, flash_level="success")
    )


@project_permission(Permission.SETTLE_DISPUTES)
@require_POST
def dispute_hand_over(request: ProjectRequest, slug: str, dispute_id: int) -> HttpResponse:
    """Send to review a dispute that waits for an editor who left (see dispute_hand_to_review)."""
    dispute = _dispute_or_404(request, dispute_id)
    try:
        dispute_hand_to_review(dispute=dispute, by=request.user)
    except DisputeError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, _("Sent to review: settle it with the grades and reasons on record."))
    return redirect("dispute_review", slug=slug, dispute_id=dispute.pk)


# Timeline ----------------------------------------------------------------------------------------


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def pair_history(request: ProjectRequest, slug: str, candidate_id: int) -> HttpResponse:
    candidate = get_object_or_404(
        Candidate.objects.select_related("query", "document", "grading_set"),
        pk=candidate_id,
        grading_set__project=request.project,
    )
    timeline = pair_timeline(candidate=candidate, viewer=request.user, membership=request.membership)
    # With names hidden on the review page (the choice is kept for the session), the editors here
    # are "Editor N" too, numbered as there; reviewers keep their names.
    labels: dict[int, str] = {}
    if _anonymous(request):
        if timeline.dispute is not None:
            editors = [s.editor_id for s in timeline.dispute.statements.all()]
        else:
            editors = list(
                dict.fromkeys(e.actor.pk for e in timeline.events if e.kind == "graded" and e.actor)
            )
        labels = _editor_labels(editors)
    events = [
        (e, labels.get(e.actor.pk, e.actor.get_username()) if e.actor is not None else "")
        for e in timeline.events
    ]
    return render(
        request,
        "annotator/disputes/timeline.html",
        {"timeline": timeline, "events": events, "candidate": candidate},
    )


# Re-checking settled pairs whose grades went stale -----------------------------------------------


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
    page = _page(request, _to_recheck(request))
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
    labels = _editor_labels([g.editor_id for g in grades])
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


# Agreement ---------------------------------------------------------------------------------------

NOT_ENOUGH = {
    agreement.NO_PAIRS: gettext_lazy("Not enough data: no pair has grades from two editors yet."),
    agreement.ONE_PAIR: gettext_lazy("Not enough data: only one pair has grades from two editors."),
    agreement.TOO_FEW_ITEMS: gettext_lazy(
        "Not enough data: these two editors share fewer than two graded pairs."
    ),
    agreement.NO_VARIATION: gettext_lazy(
        "Not enough data: every grade involved is the same, so agreement cannot be told apart from chance."
    ),
    agreement.ONE_GRADE_EDITOR: gettext_lazy(
        "Not enough data: one of these editors gave the same grade to every pair they share, so agreement "
        "cannot be told apart from chance."
    ),
}


def _figure(fig: agreement.Figure) -> dict[str, Any]:
    """A figure for the template: its value, or the sentence that replaces a misleading number."""
    percent = fig.value * 100 if fig.value is not None else None
    return {"value": fig.value, "percent": percent, "n": fig.n, "note": NOT_ENOUGH.get(fig.reason, "")}


@project_permission(Permission.SEE_ALL_GRADES)
@require_GET
def agreement_index(request: ProjectRequest, slug: str) -> HttpResponse:
    sets = (
        GradingSet.objects.filter(project=request.project)
        # Counted in subqueries: COUNT(DISTINCT) over the join of pairs, grades and disputes read
        # every grade twice over (2.5 s → 0.4 s at a million grades, SQLite).
        .annotate(
            pairs=count_of(Candidate.objects.all(), "grading_set"),
            grade_count=count_of(Grade.objects.all(), "candidate__grading_set"),
            dispute_count=count_of(Dispute.objects.all(), "candidate__grading_set"),
        )
        .order_by("name")
    )
    template = "annotator/disputes/agreement_index.html" + ("#agreement-table" if request.htmx else "")
    return render(request, template, {"page": _page(request, sets)})


@project_permission(Permission.SEE_ALL_GRADES)
@require_GET
def agreement_detail(request: ProjectRequest, slug: str, set_id: int) -> HttpResponse:
    """Agreement on raw grades (before any discussion or decision) for one grading set."""
    grading_set = get_object_or_404(GradingSet, pk=set_id, project=request.project)
    # Reviewers and owners grade too, so the figures obey the timeline's rules: a pair still being
    # graded stays out (the viewer may be asked to grade it next), and so does a pair the viewer
    # graded until it is settled or its dispute revealed; a confusion matrix or a severity count
    # would otherwise give them grades they must not see yet.
    # Subqueries, not ID lists: a large set early in grading has thousands of incomplete pairs.
    unfinished = Candidate.objects.filter(
        Exists(Grade.objects.filter(candidate=OuterRef("pk"))),  # an ungraded pair leaves nothing out
        grading_set=grading_set,
        final_grade__isnull=True,
        dispute__isnull=True,
    )
    waiting = Q(candidate__dispute__isnull=False) & ~Q(candidate__dispute__status__in=REVEALED_STATUSES)
    if grading_set.is_open:
        incomplete = unfinished
    else:
        # A closed set's unfinished pairs get no more grades here, so the grades they have count
        # (left out, they would stay "still being graded" for good); except for whoever graded
        # them, who may grade them blind again if they come back in a later set.
        incomplete = Candidate.objects.none()
        waiting |= Q(candidate__dispute__isnull=True)
    blind = (
        Grade.objects.filter(candidate__grading_set=grading_set, editor=request.user)
        .filter(candidate__final_grade__isnull=True)
        .filter(waiting)
        .values("candidate_id")
    )
    rows = list(
        Grade.objects.filter(candidate__grading_set=grading_set)
        .exclude(candidate_id__in=incomplete.values("pk"))
        .exclude(candidate_id__in=blind)
        .order_by()  # the default order joins queries and documents to sort a million grades
        .values_list("candidate_id", "editor_id", "grade", "candidate__query_id")
    )
    # Columns, not a dict per pair: 13 s → 5.5 s at a million grades (SQLite); texts and names are
    # read once per query and editor, not once per grade.
    units, editors, grades, query_of = zip(*rows, strict=True) if rows else ((), (), (), ())
    table = agreement.Table.from_triples(units, editors, grades)
    report = agreement.agreement_report(table, dict(zip(units, query_of, strict=True)))
    # The set's queries by a subquery, not an ID list: SQLite refuses a list of 32,767 IDs.
    queries = {
        pk: (external_id, text)
        for pk, external_id, text in grading_set.queries().values_list("pk", "external_id", "text")
    }
    names = dict(get_user_model().objects.filter(pk__in=table.raters).values_list("pk", "username"))

    # Ambiguous queries first: lowest alpha on top, queries without a figure last.
    by_query = sorted(
        report.alpha_by_group,
        key=lambda item: (not item[1].available, item[1].value or 0.0, queries[item[0]][0]),
    )
    query_page = _page(
        request,
        [{"external_id": queries[q][0], "text": queries[q][1], "alpha": _figure(fig)} for q, fig in by_query],
        "qpage",
    )
    pairs = [
        {
            "a": names[p.rater_a],
            "b": names[p.rater_b],
            "shared": p.shared,
            "exact": _figure(p.exact),
            "within_one": _figure(p.within_one),
            "kappa": _figure(p.kappa),
            "matrix": list(zip(range(4), p.confusion, strict=True)),
        }
        for p in report.pairs
    ]
    counts = {
        (row["status"], row["severity"]): row["n"]
        for row in Dispute.objects.filter(candidate__grading_set=grading_set)
        .exclude(candidate_id__in=blind)  # incomplete pairs have no dispute
        .values("status", "severity")
        .annotate(n=Count("pk"))
        .order_by()
    }
    dispute_table = [
        {
            "status": label,
            "by_severity": [counts.get((value, s), 0) for s in (1, 2, 3)],
            "total": sum(counts.get((value, s), 0) for s in (1, 2, 3)),
        }
        for value, label in DisputeStatus.choices
    ]
    context = {
        "grading_set": grading_set,
        "report": report,
        "exact": _figure(report.exact),
        "within_one": _figure(report.within_one),
        "alpha": _figure(report.alpha),
        "pairs": pairs,
        "query_page": query_page,
        "dispute_table": dispute_table,
        "dispute_total": sum(counts.values()),
        "severity_totals": [sum(counts.get((v, s), 0) for v in DisputeStatus.values) for s in (1, 2, 3)],
        "settled_count": FinalGrade.objects.filter(candidate__grading_set=grading_set).count(),
        "blind_count": blind.count(),
        "incomplete_count": incomplete.count(),
        # Counted in: the viewer's own are among the blind ones, so no pair is named by both notes.
        "unfinished_count": 0 if grading_set.is_open else unfinished.exclude(pk__in=blind).count(),
        # Copied from a frozen version with their final grades, without raw grades: nothing to
        # measure agreement on; counted, so the page says why they are left out.
        "copied_count": grading_set.candidates.filter(
            source=CandidateSource.COPIED, grades__isnull=True
        ).count(),
    }
    template = "annotator/disputes/agreement.html" + ("#query-alpha" if request.htmx else "")
    return render(request, template, context)
