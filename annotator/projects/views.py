"""Home page, project overview and member management."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.disputes.models import step_pending
from annotator.grading.queue import queue_candidates
from annotator.models import (
    Candidate,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    Document,
    Grade,
    GradingSet,
    Membership,
    Permission,
    PoolVersion,
    Project,
    Query,
    Role,
)
from annotator.projects.forms import MemberAddForm, MemberRoleForm, ProjectSettingsForm
from annotator.projects.overview import sections_context
from annotator.projects.services import LastOwnerError, membership_remove, membership_set_role
from annotator.web.access import ProjectRequest, SignedInRequest, project_permission, signed_in
from annotator.web.http import gone


@signed_in
@require_GET
def home(request: SignedInRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user).select_related("project").order_by("project__name")
    )
    return render(request, "annotator/projects/home.html", {"memberships": memberships})


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def project_detail(request: ProjectRequest, slug: str) -> HttpResponse:
    """The project's front page: what is waiting for this person, by role.

    Editors see only their own work (blindness): their queue, re-checks and disputes. Pools and
    comparisons carry system scores and final grades, so they appear from the reviewer role up.
    """
    project, me, membership = request.project, request.user, request.membership
    open_sets = GradingSet.objects.in_project(project).open().with_progress(me).order_by("name")
    context: dict[str, object] = {
        "project": project,
        "open_sets": open_sets,
        # The queue's own count, so the overview and "Start grading" never disagree.
        "waiting_for_me": queue_candidates(project=project, editor=me).count(),
        "stale_count": Grade.objects.filter(editor=me, candidate__grading_set__project=project)
        .to_recheck()
        .count(),
        "my_open_disputes": Dispute.objects.in_project(project).involving(me).open().count(),
    }
    if membership.may(Permission.EDIT_SETTINGS):
        context["setup_steps"] = _setup_steps(project)
    if membership.may(Permission.SETTLE_DISPUTES):
        disputes = Dispute.objects.in_project(project)
        # Those waiting for someone who left need a reviewer too: the queue page lists them apart,
        # and so does the overview, so that its count matches the queue's table.
        context["review_count"] = disputes.review_queue().count()
        context["departed_count"] = disputes.waiting_for_departed(project).count()
        # Counted in, but not theirs to settle: a reviewer never settles a pair they graded.
        context["review_graded_by_me"] = (
            disputes.review_queue().filter(statements__editor=request.user).count()
        )
    if membership.may(Permission.RECHECK_FINAL):
        context["final_recheck_count"] = (
            Candidate.objects.filter(grading_set_id__in=project.set_ids()).final_to_recheck().count()
        )
    if membership.may(Permission.VIEW_POOLS):
        context["pool_versions"] = (
            PoolVersion.objects.in_project(project)
            .select_related("pool")
            .defer("canonical")
            .order_by("-frozen_at")[:5]
        )
    context.update(sections_context(project, membership))
    return render(request, "annotator/projects/project_detail.html", context)


def _setup_steps(project: Project) -> list[tuple[str, str, bool]] | None:
    """(what to do, where, done) for a new project, in order; None once every step is done."""
    slug = {"slug": project.slug}
    steps = [
        (
            _("Read the grading criteria, and edit them if your team grades differently"),
            reverse("criteria", kwargs=slug),
            CriteriaVersion.objects.filter(project=project).exists(),
        ),
        (
            _("Import the documents"),
            reverse("import_page", kwargs=slug) + "#import-documents",
            Document.objects.filter(project=project).exists(),
        ),
        (
            _("Import the queries"),
            reverse("import_page", kwargs=slug) + "#import-queries",
            Query.objects.filter(project=project).exists(),
        ),
        (
            _("Create a grading set"),
            reverse("grading_set_list", kwargs=slug),
            GradingSet.objects.in_project(project).exists(),
        ),
        (
            _("Add candidates to it: pool them from run files, or add documents by hand on the set's page"),
            reverse("import_page", kwargs=slug) + "#import-candidates",
            Candidate.objects.filter(grading_set__project=project).exists(),
        ),
        (
            _("Add the editors (and a reviewer) on the Members page"),
            reverse("member_list", kwargs=slug),
            project.memberships.exclude(role=Role.OWNER).exists(),
        ),
    ]
    return None if all(done for _what, _where, done in steps) else steps


@project_permission(Permission.EDIT_SETTINGS)
@require_http_methods(["GET", "POST"])
def project_settings(request: ProjectRequest, slug: str) -> HttpResponse:
    """The project's names, description and the language its queries and documents are in."""
    project: Project = request.project
    form = ProjectSettingsForm(request.POST or None, instance=project)
    if request.method == "POST" and form.is_valid():
        if form.has_changed():
            form.save()
            messages.success(request, _("The project settings were saved."))
        else:
            messages.info(request, _("Nothing changed: the settings are as they were."))
        return redirect("project_settings", slug=project.slug)
    return render(request, "annotator/projects/project_settings.html", {"project": project, "form": form})


@project_permission(Permission.MANAGE_MEMBERS)
@require_http_methods(["GET", "POST"])
def member_list(request: ProjectRequest, slug: str) -> HttpResponse:
    project: Project = request.project
    form = MemberAddForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        membership = form.save()
        messages.success(
            request,
            _("%(user)s was added as %(role)s.")
            % {"user": membership.user.get_username(), "role": membership.get_role_display()},
        )
        return redirect("member_list", slug=project.slug)
    # What removing each member would withdraw (membership_remove): said in the confirmation
    # before it is sent, not only in the message after.
    to_withdraw = dict(
        Grade.objects.to_recheck()
        .filter(candidate__grading_set__project=project)
        .order_by()  # the default order joins pairs' queries and documents into the count
        .values("editor_id")
        .annotate(n=Count("pk"))
        .values_list("editor_id", "n")
    )
    waiting_on = dict(
        DisputeStatement.objects.filter(dispute__candidate__grading_set__project=project)
        .filter(step_pending())
        .values("editor_id")
        .annotate(n=Count("pk"))
        .values_list("editor_id", "n")
    )
    memberships = list(project.memberships.with_users())
    for m in memberships:
        m.to_withdraw = to_withdraw.get(m.user_id, 0)  # type: ignore[attr-defined]
        m.disputes_waiting = waiting_on.get(m.user_id, 0)  # type: ignore[attr-defined]
    context = {
        "project": project,
        "memberships": memberships,
        "form": form,
        "roles": Role.choices,
    }
    template = "annotator/projects/members.html" + ("#member-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.MANAGE_MEMBERS)
@require_POST
def member_update(request: ProjectRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(Membership, pk=membership_id, project=request.project)
    form = MemberRoleForm(request.POST)
    if form.is_valid():
        try:
            membership = membership_set_role(membership=membership, role=form.cleaned_data["role"])
        except LastOwnerError as refusal:
            messages.error(request, str(refusal))
        else:
            if membership.user_id == request.user.pk and not membership.may(Permission.MANAGE_MEMBERS):
                # Owners only may open the Members page: send them where their new role can go.
                messages.success(
                    request,
                    _("You are now %(role)s in this project; managing members needs the owner role.")
                    % {"role": membership.get_role_display()},
                )
                return redirect("project_detail", slug=request.project.slug)
            messages.success(
                request,
                _("%(user)s is now %(role)s.")
                % {"user": membership.user.get_username(), "role": membership.get_role_display()},
            )
    else:
        for error in form.errors.get("role", []):
            # ErrorList yields message strings (its __getitem__ renders ValidationErrors); the stubs
            # type the items as ValidationError | str.
            messages.error(request, cast(str, error))
    return redirect("member_list", slug=request.project.slug)


@project_permission(Permission.MANAGE_MEMBERS)
@require_POST
def member_remove(request: ProjectRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = Membership.objects.filter(pk=membership_id, project=request.project).first()
    if membership is None:  # removed in another tab, say: a page that explains, not a bare 404
        return gone(
            request,
            _("This member is no longer in the project: removed already."),
            reverse("member_list", kwargs={"slug": request.project.slug}),
            _("Back to the members"),
        )
    try:
        # Only the membership goes: the person's grades and decisions stay, attributed to them
        # (but for grades awaiting their own re-check, which nobody else could ever clear).
        withdrawn, to_review = membership_remove(membership=membership, by=request.user)
    except LastOwnerError as refusal:
        messages.error(request, str(refusal))
    else:
        left = membership.user_id == request.user.pk
        if left:
            messages.success(
                request, _("You left the project “%(project)s”.") % {"project": request.project.display_name}
            )
        else:
            messages.success(
                request,
                _("%(user)s was removed from the project.") % {"user": membership.user.get_username()},
            )
        if withdrawn:
            messages.info(
                request,
                ngettext(
                    "%(count)d grade awaited a re-check by them; it was withdrawn, and its pair goes to "
                    "another editor.",
                    "%(count)d grades awaited a re-check by them; they were withdrawn, and their pairs go to "
                    "other editors.",
                    withdrawn,
                )
                % {"count": withdrawn},
            )
        if to_review:
            messages.info(
                request,
                ngettext(
                    "%(count)d dispute was waiting for them; it went to the reviewers with the grades and "
                    "reasons on record.",
                    "%(count)d disputes were waiting for them; they went to the reviewers with the grades "
                    "and reasons on record.",
                    to_review,
                )
                % {"count": to_review},
            )
        if left:
            # They left the project: its pages are no longer theirs to open.
            return redirect("home")
    return redirect("member_list", slug=request.project.slug)
