"""From raw grades to one final grade per pair: unanimity, discussion or a reviewer's decision.

Raw grades are never overwritten. The final grade is its own record and says where it came from.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models.documents import CriteriaVersion
from annotator.models.grading import Candidate


class DisputeStatus(models.TextChoices):
    # Each editor must give the basis of their grade before anyone sees anyone else's.
    AWAITING_REASONS = "awaiting_reasons", _("Waiting for every editor's reason")
    # Reasons are in; grades and reasons are revealed and each editor may revise once.
    REVEALED = "revealed", _("Revealed: editors may revise once")
    # Still no agreement: a reviewer decides.
    IN_REVIEW = "in_review", _("Waiting for a reviewer")
    SETTLED = "settled", _("Settled")


class Dispute(models.Model):
    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="dispute")
    status = models.CharField(
        _("status"), max_length=20, choices=DisputeStatus.choices, default=DisputeStatus.AWAITING_REASONS
    )
    # max - min of the raw grades when the dispute opened: 1, 2 or 3.
    severity = models.PositiveSmallIntegerField(_("severity"))
    opened_at = models.DateTimeField(_("opened at"), auto_now_add=True)
    revealed_at = models.DateTimeField(_("revealed at"), null=True, blank=True)
    escalated_at = models.DateTimeField(_("sent to review at"), null=True, blank=True)
    settled_at = models.DateTimeField(_("settled at"), null=True, blank=True)

    class Meta:
        ordering = ["-severity", "opened_at"]
        verbose_name = _("dispute")
        verbose_name_plural = _("disputes")
        constraints = [
            models.CheckConstraint(condition=Q(severity__gte=1) & Q(severity__lte=3), name="dispute_severity_1_to_3"),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in DisputeStatus]), name="dispute_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.candidate} ({self.get_status_display()})"


class DisputeStatement(models.Model):
    """One editor's side of a dispute: the basis of the grade, and at most one revision."""

    dispute = models.ForeignKey(Dispute, on_delete=models.PROTECT, related_name="statements")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    original_grade = models.PositiveSmallIntegerField(_("original grade"))
    reason = models.TextField(_("reason"), blank=True)
    # Optional: which criteria level (0-3) the editor's reading rests on.
    criteria_level = models.PositiveSmallIntegerField(_("criteria level"), null=True, blank=True)
    reason_given_at = models.DateTimeField(_("reason given at"), null=True, blank=True)
    revised_grade = models.PositiveSmallIntegerField(_("revised grade"), null=True, blank=True)
    revision_note = models.TextField(_("revision note"), blank=True)
    revised_at = models.DateTimeField(_("revised at"), null=True, blank=True)

    class Meta:
        ordering = ["dispute", "pk"]
        verbose_name = _("dispute statement")
        verbose_name_plural = _("dispute statements")
        constraints = [
            models.UniqueConstraint(fields=["dispute", "editor"], name="dispute_statement_unique_editor"),
            models.CheckConstraint(condition=Q(original_grade__lte=3), name="statement_original_grade_0_to_3"),
            models.CheckConstraint(
                condition=Q(revised_grade__isnull=True) | Q(revised_grade__lte=3), name="statement_revised_grade_0_to_3"
            ),
            models.CheckConstraint(
                condition=Q(criteria_level__isnull=True) | Q(criteria_level__lte=3), name="statement_criteria_level_0_to_3"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dispute.candidate}: {self.editor} gave {self.original_grade}"


class FinalSource(models.TextChoices):
    UNANIMOUS = "unanimous", _("Unanimous")
    DISCUSSION = "discussion", _("Agreed after discussion")
    ADJUDICATED = "adjudicated", _("Settled by a reviewer")


class FinalGrade(models.Model):
    """The settled grade of a pair, with its provenance. One per pair, enforced by the database."""

    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="final_grade")
    grade = models.PositiveSmallIntegerField(_("grade"))
    source = models.CharField(_("source"), max_length=16, choices=FinalSource.choices)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    note = models.TextField(_("note"), blank=True)
    criteria_version = models.ForeignKey(CriteriaVersion, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(_("decided at"), auto_now_add=True)

    class Meta:
        verbose_name = _("final grade")
        verbose_name_plural = _("final grades")
        constraints = [
            models.CheckConstraint(condition=Q(grade__lte=3), name="final_grade_between_0_and_3"),
            models.CheckConstraint(
                condition=Q(source__in=[s.value for s in FinalSource]), name="final_grade_source_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.candidate}: {self.grade} ({self.get_source_display()})"
