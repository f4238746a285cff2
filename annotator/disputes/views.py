"""Disputes: editors' reasons and revisions, the reviewer queue and decision, a pair's timeline.

Blind until the reveal: an editor sees only their own disputes, and in them only their own grade
and reason; a reviewer who graded the pair is its editor there and cannot settle it. Re-checks of
settled pairs are in recheck_views.py, the agreement pages in agreement_views.py.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db.models import Case, Prefetch, When
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.disputes.forms import ReasonForm, RevisionForm, SettleForm
from annotator.disputes.services import (
    AlreadySettled,
    DisputeError,
    closed_refusal,
    departed_editors,
    dispute_give_reason,
    dispute_hand_to_review,
    dispute_revise,
    dispute_settle,
    gone_editor_ids,
    graded_pair,
    reason_refusal,
    revision_refusal,
)
from annotator.disputes.timeline import pair_timeline
from annotator.grading.settlement import idle_settle
from annotator.models import (
    GRADE_VALUES,
    Candidate,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    DisputeStatus,
    Grade,
    Permission,
    PoolJudgment,
    StaleReason,
)
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import post_from
from annotator.web.paging import Paginator

PER_PAGE = 25
ANONYMOUS_SESSION_KEY = "disputes_anonymous"
# Letters, not digits, for "Adopt Editor N's grade": a digit would read as the grade itself.
ADOPT_KEYS = "abcdefgh"


def _dispute_or_404(request: ProjectRequest, dispute_id: int) -> Dispute:
    """The dispute, if it is in this project and the person may see it (else 404, like an unknown ID)."""
    statements = Prefetch(
        "statements", queryset=DisputeStatement.objects.select_related("editor").order_by("pk")
    )
    return get_object_or_404(
        Dispute.objects.visible_to(request.membership).with_pair().prefetch_related(statements),
        pk=dispute_id,
    )


def _page(request: ProjectRequest, items: Any) -> Any:
    return Paginator(items, PER_PAGE).get_page(request.GET.get("page"))


# Lists -------------------------------------------------------------------------------------------


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def dispute_list(request: ProjectRequest, slug: str) -> HttpResponse:
    """Editors: their own disputes. Reviewers and owners: every dispute of the project."""
    idle_settle(project=request.project)  # disputes of idle queries are opened first
    status = request.GET.get("status", "")
    disputes = Dispute.objects.visible_to(request.membership)
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
        When(grading_set__is_open=False, then=1),
        default=0,
    )
    # The page's IDs are sorted on the disputes alone, then its rows are read with their pairs:
    # sorting the joined rows of every dispute took 0.9 s at 122,000 disputes on PostgreSQL.
    page = _page(request, disputes.order_by(settled_last, "opened_at", "pk").values_list("pk", flat=True))
    loaded = Dispute.objects.with_pair().prefetch_related("statements").in_bulk(list(page.object_list))
    page.object_list = [loaded[pk] for pk in page.object_list if pk in loaded]
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
    idle_settle(project=request.project)
    queue = (
        Dispute.objects.in_project(request.project).review_queue().with_pair().prefetch_related("statements")
    )
    page = _page(request, queue)
    rows = [{"dispute": d, "graded_by_me": d.has_participant(request.user)} for d in page]
    template = "annotator/disputes/queue.html" + ("#queue-table" if request.htmx else "")
    # Not in the queue yet, and never would be by themselves: listed here, not only on their page.
    stuck = (
        Dispute.objects.in_project(request.project)
        .waiting_for_departed(request.project)
        .with_pair()
        .order_by("opened_at", "pk")
    )
    recheck_count = (
        Candidate.objects.filter(grading_set_id__in=request.project.set_ids()).final_to_recheck().count()
    )
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
    labels = editor_labels([s.editor_id for s in statements]) if mine is None and _anonymous(request) else {}
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
        # "Change to …" buttons beside "Keep my N": every other grade.
        "change_grades": [g for g in GRADE_VALUES if mine is None or g != mine.original_grade],
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


def editor_labels(editor_ids: list[int]) -> dict[int, str]:
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
    labels = editor_labels([s.editor_id for s in statements]) if anonymous else {}
    columns = [
        {
            "statement": s,
            "label": labels.get(s.editor_id) or s.editor.get_username(),
            "raw": pair["raw_grades"].get(s.editor_id),
            # "Adopt Editor 1's grade": pressed by a, b, c … in the columns' order.
            "key": ADOPT_KEYS[i] if i < len(ADOPT_KEYS) else "",
        }
        for i, s in enumerate(statements)
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
        labels = editor_labels(editors)
    events = [
        (e, labels.get(e.actor.pk, e.actor.get_username()) if e.actor is not None else "")
        for e in timeline.events
    ]
    return render(
        request,
        "annotator/disputes/timeline.html",
        {"timeline": timeline, "events": events, "candidate": candidate},
    )
