"""Grading sets (open pools), their candidate pairs, editors' grades and the grade history.

A grade is one editor's judgment of one candidate (query, document) pair. Grades are never deleted
or overwritten silently: every change appends a `GradeHistory` row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Count, Q
from django.utils.translation import gettext_lazy as _

from annotator.models.documents import CriteriaVersion, Document, DocumentVersion, Query
from annotator.models.projects import Project

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

GRADE_VALUES = (0, 1, 2, 3)


class GradingSet(models.Model):
    """An open pool: queries and, per query, the candidate documents to grade."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="grading_sets")
    name = models.CharField(_("name"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    required_grades = models.PositiveSmallIntegerField(
        _("grades required per pair"), default=2, help_text=_("Grades from distinct editors needed for each pair.")
    )
    # The pool lineage this set freezes into, and the frozen version it was started from (if any).
    pool = models.ForeignKey(
        "annotator.Pool", on_delete=models.PROTECT, null=True, blank=True, related_name="grading_sets"
    )
    based_on = models.ForeignKey(
        "annotator.PoolVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    is_open = models.BooleanField(_("open for grading"), default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["project", "-created_at"]
        verbose_name = _("grading set")
        verbose_name_plural = _("grading sets")
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="grading_set_unique_name"),
            models.CheckConstraint(condition=Q(required_grades__gte=1), name="grading_set_required_grades_positive"),
        ]

    def __str__(self) -> str:
        return self.name


class CandidateSource(models.TextChoices):
    POOLED = "pooled", _("Pooled from runs")
    MANUAL = "manual", _("Added by hand")
    IMPORTED = "imported", _("Imported")
    COPIED = "copied", _("Copied from a frozen version")


class CandidateQuerySet(models.QuerySet["Candidate"]):
    def with_grade_counts(self) -> CandidateQuerySet:
        return self.annotate(grade_count=Count("grades__editor", distinct=True))

    def needing_grades(self) -> CandidateQuerySet:
        """Pairs that still lack their required number of grades from distinct editors."""
        return self.with_grade_counts().filter(grade_count__lt=models.F("grading_set__required_grades"))

    def not_graded_by(self, editor: AbstractBaseUser) -> CandidateQuerySet:
        return self.exclude(grades__editor=editor)


class Candidate(models.Model):
    """One (query, document) pair to grade in a grading set, with where it came from."""

    grading_set = models.ForeignKey(GradingSet, on_delete=models.CASCADE, related_name="candidates")
    query = models.ForeignKey(Query, on_delete=models.PROTECT, related_name="candidates")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="candidates")
    source = models.CharField(_("source"), max_length=16, choices=CandidateSource.choices)
    # e.g. "run bm25.trec, depth 10" or the import file name; shown as provenance, never to editors.
    source_detail = models.CharField(_("source detail"), max_length=500, blank=True)
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    added_at = models.DateTimeField(_("added at"), auto_now_add=True)

    objects = CandidateQuerySet.as_manager()

    class Meta:
        ordering = ["grading_set", "query", "document"]
        verbose_name = _("candidate")
        verbose_name_plural = _("candidates")
        constraints = [
            models.UniqueConstraint(fields=["grading_set", "query", "document"], name="candidate_unique_pair"),
        ]

    def __str__(self) -> str:
        return f"{self.query.external_id} / {self.document.external_id}"


class Reservation(models.Model):
    """A short claim on a pair by an editor, so two editors are not sent to the same last pair."""

    candidate = models.ForeignKey(Candidate, on_delete=models.CASCADE, related_name="reservations")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    expires_at = models.DateTimeField(_("expires at"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["candidate", "editor"], name="reservation_unique_editor"),
        ]

    def __str__(self) -> str:
        return f"{self.candidate} reserved by {self.editor} until {self.expires_at:%H:%M}"


class GradeQuerySet(models.QuerySet["Grade"]):
    def blind_for(self, editor: AbstractBaseUser) -> GradeQuerySet:
        """What an editor may see before a dispute reveals others' grades: only their own."""
        return self.filter(editor=editor)


class Grade(models.Model):
    """One editor's grade for one pair. Unique per (pair, editor); every change is in `history`."""

    candidate = models.ForeignKey(Candidate, on_delete=models.PROTECT, related_name="grades")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="grades")
    grade = models.PositiveSmallIntegerField(_("grade"), choices=[(g, str(g)) for g in GRADE_VALUES])
    reason = models.TextField(_("reason"), blank=True)
    criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="grades")
    document_version = models.ForeignKey(DocumentVersion, on_delete=models.PROTECT, related_name="grades")
    # Stale: the document or the criteria changed meaningfully since; the grade must be re-checked.
    stale = models.BooleanField(_("needs re-check"), default=False)
    stale_reason = models.CharField(_("why it needs re-check"), max_length=200, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    objects = GradeQuerySet.as_manager()

    class Meta:
        ordering = ["candidate", "created_at"]
        verbose_name = _("grade")
        verbose_name_plural = _("grades")
        constraints = [
            models.UniqueConstraint(fields=["candidate", "editor"], name="grade_unique_per_editor"),
            models.CheckConstraint(condition=Q(grade__gte=0) & Q(grade__lte=3), name="grade_between_0_and_3"),
        ]

    def __str__(self) -> str:
        return f"{self.candidate}: {self.grade} by {self.editor}"


class GradeHistory(models.Model):
    """Append-only log of every grade change: who, old, new, reason, when."""

    class Kind(models.TextChoices):
        CREATED = "created", _("Graded")
        CHANGED = "changed", _("Changed")
        UNDONE = "undone", _("Undone")
        REVISED = "revised", _("Revised after the reveal")
        RECHECKED = "rechecked", _("Re-checked")

    grade = models.ForeignKey(Grade, on_delete=models.PROTECT, related_name="history")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    old_grade = models.PositiveSmallIntegerField(null=True, blank=True)
    new_grade = models.PositiveSmallIntegerField(null=True, blank=True)
    old_reason = models.TextField(blank=True)
    new_reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["grade", "created_at", "pk"]
        verbose_name = _("grade history entry")
        verbose_name_plural = _("grade history")

    def __str__(self) -> str:
        return f"{self.grade.candidate}: {self.old_grade} -> {self.new_grade} ({self.kind})"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ValueError("Grade history is append-only.")
        super().save(*args, **kwargs)  # type: ignore[arg-type]
