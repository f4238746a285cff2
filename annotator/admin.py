from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.options import ActionLocation
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.translation import gettext as _

from annotator.models import (
    Candidate,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    Document,
    DocumentVersion,
    EditorProgress,
    FinalGrade,
    FinalGradeRecheck,
    Grade,
    GradeHistory,
    GradingSet,
    Job,
    Membership,
    OpenQuery,
    Pool,
    PoolJudgment,
    PoolVersion,
    Project,
    Query,
    Reservation,
    Role,
)
from annotator.projects.services import LastOwnerError, membership_remove
from annotator.web.text import enumeration


class ReadOnlyAdmin(admin.ModelAdmin):
    """Inspection only. Frozen pools are immutable on every path, the admin included; grading
    records, document and criteria versions and pairs change only through the app's services,
    which keep their history and provenance (an admin edit would rewrite it without a trace)."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class MembershipAdminForm(forms.ModelForm):
    class Meta:
        model = Membership
        fields = ["project", "user", "role"]

    def clean_role(self) -> str:
        role = self.cleaned_data["role"]
        if self.instance.pk and role != Role.OWNER:
            # The admin validates and saves in one transaction: the project's row stays locked
            # until the save, as in membership_set_role, so two owners demoting each other at the
            # same moment cannot both pass this check (review).
            Project.objects.select_for_update().filter(pk=self.instance.project_id).first()
            if Membership.objects.get(pk=self.instance.pk).is_last_owner:
                raise forms.ValidationError(str(LastOwnerError()))
        return role


class MembershipInline(admin.TabularInline):
    """Adds members (e.g. a new project's first owner); role changes and removals go through
    the Members page or the Membership admin, which keep the project's last owner."""

    model = Membership
    extra = 0
    autocomplete_fields = ["user"]
    can_delete = False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "content_language", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    """Role changes and removals use the same rules as the Members page: a project keeps an
    owner, and a removed member's grades awaiting their re-check are withdrawn with history."""

    form = MembershipAdminForm
    list_display = ["project", "user", "role", "added_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__name"]
    autocomplete_fields = ["user"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["project", "user"] if obj else []

    def get_actions(self, request: HttpRequest, action_location: Any = ActionLocation.CHANGE_LIST) -> Any:
        actions = super().get_actions(request, action_location)
        actions.pop("delete_selected", None)  # one at a time, through membership_remove
        return actions

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return super().has_delete_permission(request, obj) and not (obj and obj.is_last_owner)

    def delete_model(self, request: HttpRequest, obj: Membership) -> None:
        try:
            membership_remove(membership=obj, by=request.user)  # type: ignore[arg-type]
        except LastOwnerError as refusal:  # another owner left at the same moment
            raise PermissionDenied(str(refusal)) from None


# Content, grading and disputes: inspection only (see ReadOnlyAdmin), with useful lists.
@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "title", "project", "unit", "version", "updated_at"]
    list_filter = ["project", "unit"]
    search_fields = ["external_id", "title"]


@admin.register(DocumentVersion)
class DocumentVersionAdmin(ReadOnlyAdmin):
    list_display = ["document", "version", "content_hash", "created_at"]
    search_fields = ["document__external_id"]


@admin.register(Query)
class QueryAdmin(ReadOnlyAdmin):
    list_display = ["external_id", "text", "project"]
    list_filter = ["project"]
    search_fields = ["external_id", "text"]


@admin.register(CriteriaVersion)
class CriteriaVersionAdmin(ReadOnlyAdmin):
    list_display = ["project", "number", "change", "created_by", "created_at"]
    list_filter = ["project"]


@admin.register(GradingSet)
class GradingSetAdmin(admin.ModelAdmin):
    """Only the name may change here: opening, closing and the grades a pair needs follow the
    app's rules (a frozen set stays closed)."""

    list_display = ["name", "project", "required_grades", "is_open", "pair_count", "done_count", "created_at"]
    list_filter = ["project", "is_open"]
    fields = [
        "name",
        "description",
        "project",
        "required_grades",
        "pool",
        "based_on",
        "is_open",
        "created_by",
    ]
    # Everything but the words: the pool and the version a set continues decide where its grades
    # are frozen (review: a set moved into another project's pool showed its judgments there).
    readonly_fields = ["project", "required_grades", "pool", "based_on", "is_open", "created_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Candidate)
class CandidateAdmin(ReadOnlyAdmin):
    list_display = ["grading_set", "query", "document", "source", "added_at"]
    list_filter = ["source", "grading_set"]


@admin.register(EditorProgress)
class EditorProgressAdmin(ReadOnlyAdmin):  # kept by the database's counter triggers
    list_display = ["grading_set", "editor", "graded"]


@admin.register(Reservation)
class ReservationAdmin(ReadOnlyAdmin):
    list_display = ["candidate", "editor", "expires_at"]


@admin.register(OpenQuery)
class OpenQueryAdmin(ReadOnlyAdmin):
    list_display = ["editor", "grading_set", "query", "touched_at"]


class GradeHistoryInline(admin.TabularInline):
    model = GradeHistory
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Grade)
class GradeAdmin(ReadOnlyAdmin):
    list_display = ["candidate", "editor", "grade", "stale", "updated_at"]
    list_filter = ["stale", "candidate__grading_set"]
    inlines = [GradeHistoryInline]


@admin.register(GradeHistory)
class GradeHistoryAdmin(ReadOnlyAdmin):  # append-only
    list_display = ["grade", "kind", "old_grade", "new_grade", "changed_by", "created_at"]


class DisputeStatementInline(admin.TabularInline):
    model = DisputeStatement
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Dispute)
class DisputeAdmin(ReadOnlyAdmin):
    list_display = ["candidate", "status", "severity", "opened_at", "settled_at"]
    list_filter = ["status", "severity"]
    inlines = [DisputeStatementInline]


@admin.register(DisputeStatement)
class DisputeStatementAdmin(ReadOnlyAdmin):
    list_display = ["dispute", "editor", "original_grade", "revised_grade"]


@admin.register(FinalGrade)
class FinalGradeAdmin(ReadOnlyAdmin):
    list_display = ["candidate", "grade", "source", "decided_by", "decided_at"]
    list_filter = ["source"]


@admin.register(FinalGradeRecheck)
class FinalGradeRecheckAdmin(ReadOnlyAdmin):  # append-only
    list_display = ["candidate", "old_grade", "new_grade", "reviewer", "created_at"]


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    """The name may change; the project may not (its versions, judgments and comparisons are
    that project's data, and moving them would show them to another project's members)."""

    list_display = ["name", "project", "created_at"]
    readonly_fields = ["project"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(PoolVersion)
class PoolVersionAdmin(ReadOnlyAdmin):
    list_display = ["pool", "number", "source", "sha256", "frozen_by", "frozen_at"]


@admin.register(PoolJudgment)
class PoolJudgmentAdmin(ReadOnlyAdmin):
    list_display = ["version", "query_id", "doc_id", "grade", "source"]
    list_filter = ["version"]


class AccountChangeForm(UserChangeForm):
    def clean_is_active(self) -> bool:
        active = bool(self.cleaned_data["is_active"])
        if self.instance.pk and self.instance.is_active and not active:
            owned = Membership.objects.filter(user=self.instance, role=Role.OWNER).select_related("project")
            # Lock the projects first, as membership_set_role does: no other owner leaves meanwhile.
            list(Project.objects.select_for_update().filter(pk__in=owned.values("project_id")).order_by("pk"))
            stranded = sorted(m.project.display_name for m in owned if m.is_last_owner)
            if stranded:
                raise forms.ValidationError(
                    _(
                        "%(user)s is the only active owner of %(projects)s: make someone else owner there "
                        "first (a deactivated account cannot manage a project)."
                    )
                    % {"user": self.instance.get_username(), "projects": enumeration(stranded)}
                )
        return active


# Django's user admin, except that an account stays active while it is a project's only owner:
# deactivated, it would leave the project with nobody who can manage it.
admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    form = AccountChangeForm


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):  # jobs change only by running; cancel from the job's page
    list_display = ("pk", "project", "kind", "state", "started_by", "created_at", "done", "total")
    list_filter = ("state", "kind")
    exclude = ("input_data",)
