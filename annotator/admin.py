from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from annotator.models import (
    Candidate,
    CriteriaVersion,
    Dispute,
    DisputeStatement,
    Document,
    DocumentVersion,
    FinalGrade,
    Grade,
    GradeHistory,
    GradingSet,
    Membership,
    Pool,
    PoolJudgment,
    PoolVersion,
    Project,
    Query,
    Reservation,
)


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["project", "user", "role", "added_at"]
    list_filter = ["role", "project"]
    search_fields = ["user__username", "project__name"]
    autocomplete_fields = ["user"]


# Content, grading and disputes: editable by staff like any admin, with useful lists.
@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "project", "unit", "version", "updated_at"]
    list_filter = ["project", "unit"]
    search_fields = ["external_id", "title"]


@admin.register(DocumentVersion)
class DocumentVersionAdmin(admin.ModelAdmin):
    list_display = ["document", "version", "content_hash", "created_at"]
    search_fields = ["document__external_id"]


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["external_id", "text", "project"]
    list_filter = ["project"]
    search_fields = ["external_id", "text"]


@admin.register(CriteriaVersion)
class CriteriaVersionAdmin(admin.ModelAdmin):
    list_display = ["project", "number", "change", "created_by", "created_at"]
    list_filter = ["project"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a criteria version is never edited: publish the next one


@admin.register(GradingSet)
class GradingSetAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "required_grades", "is_open", "created_at"]
    list_filter = ["project", "is_open"]


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["grading_set", "query", "document", "source", "added_at"]
    list_filter = ["source", "grading_set"]


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    list_display = ["candidate", "editor", "expires_at"]


class GradeHistoryInline(admin.TabularInline):
    model = GradeHistory
    extra = 0
    can_delete = False
    readonly_fields = ["changed_by", "kind", "old_grade", "new_grade", "old_reason", "new_reason", "created_at"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Grade)
class GradeAdmin(admin.ModelAdmin):
    list_display = ["candidate", "editor", "grade", "stale", "updated_at"]
    list_filter = ["stale", "candidate__grading_set"]
    inlines = [GradeHistoryInline]


@admin.register(GradeHistory)
class GradeHistoryAdmin(admin.ModelAdmin):
    list_display = ["grade", "kind", "old_grade", "new_grade", "changed_by", "created_at"]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # append-only


class DisputeStatementInline(admin.TabularInline):
    model = DisputeStatement
    extra = 0


@admin.register(Dispute)
class DisputeAdmin(admin.ModelAdmin):
    list_display = ["candidate", "status", "severity", "opened_at", "settled_at"]
    list_filter = ["status", "severity"]
    inlines = [DisputeStatementInline]


@admin.register(DisputeStatement)
class DisputeStatementAdmin(admin.ModelAdmin):
    list_display = ["dispute", "editor", "original_grade", "revised_grade"]


@admin.register(FinalGrade)
class FinalGradeAdmin(admin.ModelAdmin):
    list_display = ["candidate", "grade", "source", "decided_by", "decided_at"]
    list_filter = ["source"]


class ReadOnlyAdmin(admin.ModelAdmin):
    """Frozen pools are immutable on every path, the admin included."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Pool)
class PoolAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "created_at"]


@admin.register(PoolVersion)
class PoolVersionAdmin(ReadOnlyAdmin):
    list_display = ["pool", "number", "source", "sha256", "frozen_by", "frozen_at"]


@admin.register(PoolJudgment)
class PoolJudgmentAdmin(ReadOnlyAdmin):
    list_display = ["version", "query_id", "doc_id", "grade", "source"]
    list_filter = ["version"]
