"""Admin for runs and comparisons: inspection only, because both are fixed once created.

Runs are made by upload and comparisons by `comparison_create`, and deleting goes through the app
(a comparison is the record of a result): the admin may only look, rename and annotate.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from evaluation.models import COMPARISON_SETTINGS, Comparison, Run, RunQuery


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "project",
        "format",
        "file_name",
        "query_count",
        "entry_count",
        "uploaded_by",
        "uploaded_at",
    )
    list_filter = ("project", "format")
    search_fields = ("name", "file_name", "sha256")
    exclude = ("raw",)
    readonly_fields = (
        "project",
        "format",
        "file_name",
        "sha256",
        "size",
        "has_scores",
        "query_count",
        "entry_count",
        "uploaded_by",
        "uploaded_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Comparison)
class ComparisonAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "project",
        "pool_version",
        "run_a",
        "run_b",
        "k",
        "gain",
        "created_by",
        "created_at",
    )
    list_filter = ("project", "gain")
    search_fields = ("name",)
    exclude = ("results", "summary")
    readonly_fields = ("project", *COMPARISON_SETTINGS, "engine", "created_by", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).defer("results")


@admin.register(RunQuery)
class RunQueryAdmin(admin.ModelAdmin):
    """One query's parsed ranking: read-only, like the run it belongs to."""

    list_display = ("run", "position", "query_id", "size")
    list_filter = ("run__project",)
    search_fields = ("query_id", "run__name")
    exclude = ("scores", "lines")
    readonly_fields = ("run", "position", "query_id", "doc_ids", "size")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
