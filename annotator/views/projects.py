"""Home page, project overview and member management."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.access import HtmxHttpRequest, ProjectRequest, project_role, signed_in
from annotator.forms import MemberAddForm, MemberRoleForm
from annotator.models import Membership, Project, Role


@signed_in
@require_GET
def home(request: HtmxHttpRequest) -> HttpResponse:
    memberships = (
        Membership.objects.filter(user=request.user).select_related("project").order_by("project__name")
    )
    return render(request, "annotator/home.html", {"memberships": memberships})


@project_role(Role.EDITOR)
@require_GET
def project_detail(request: ProjectRequest, slug: str) -> HttpResponse:
    return render(request, "annotator/project_detail.html", {"project": request.project})


@project_role(Role.OWNER)
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
    context = {
        "project": project,
        "memberships": project.memberships.with_users(),
        "form": form,
        "roles": Role.choices,
    }
    template = "annotator/members.html" + ("#member-table" if request.htmx else "")
    return render(request, template, context)


@project_role(Role.OWNER)
@require_POST
def member_update(request: ProjectRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(Membership, pk=membership_id, project=request.project)
    form = MemberRoleForm(request.POST, membership=membership)
    if form.is_valid():
        membership.role = form.cleaned_data["role"]
        membership.save(update_fields=["role"])
        messages.success(
            request,
            _("%(user)s is now %(role)s.")
            % {"user": membership.user.get_username(), "role": membership.get_role_display()},
        )
    else:
        for error in form.errors.get("role", []):
            messages.error(request, error)
    return redirect("member_list", slug=request.project.slug)


@project_role(Role.OWNER)
@require_POST
def member_remove(request: ProjectRequest, slug: str, membership_id: int) -> HttpResponse:
    membership = get_object_or_404(Membership, pk=membership_id, project=request.project)
    if membership.is_last_owner:
        messages.error(request, _("A project needs at least one owner: make someone else owner first."))
    else:
        # Only the membership goes: the person's grades and decisions stay, attributed to them.
        membership.delete()
        messages.success(
            request, _("%(user)s was removed from the project.") % {"user": membership.user.get_username()}
        )
    return redirect("member_list", slug=request.project.slug)
