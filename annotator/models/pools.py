"""Frozen judgment pools: immutable, hashed versions that every score is computed against."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models.projects import Project


class Pool(models.Model):
    """A named lineage of frozen versions (1, 2, ...)."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="pools")
    name = models.CharField(_("name"), max_length=200)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["project", "name"]
        verbose_name = _("pool")
        verbose_name_plural = _("pools")
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="pool_unique_name")]

    def __str__(self) -> str:
        return self.name


class PoolVersionSource(models.TextChoices):
    FROZEN = "frozen", _("Frozen from a grading set")
    IMPORTED = "imported", _("Imported from a file")


class PoolVersion(models.Model):
    """Version N of a pool. Immutable once written: see the pools issue and its triggers."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(_("version"))
    source = models.CharField(_("source"), max_length=16, choices=PoolVersionSource.choices)
    grading_set = models.ForeignKey(
        "annotator.GradingSet", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The judgments in their canonical serialisation (documented in the README) and its SHA-256.
    # Scores load from this text after re-checking the hash, so a tampered row can never score.
    canonical = models.TextField(_("canonical serialisation"), editable=False)
    sha256 = models.CharField(_("SHA-256"), max_length=64)
    # Criteria version numbers used, pooling provenance, exclusions (pair + reason), counts per grade.
    criteria_versions = models.JSONField(_("criteria versions"), default=list)
    provenance = models.JSONField(_("provenance"), default=dict)
    exclusions = models.JSONField(_("excluded pairs"), default=list)
    counts = models.JSONField(_("counts"), default=dict)
    file_name = models.CharField(_("imported file name"), max_length=255, blank=True)
    file_sha256 = models.CharField(_("imported file SHA-256"), max_length=64, blank=True)
    frozen_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    frozen_at = models.DateTimeField(_("frozen at"), auto_now_add=True)

    class Meta:
        ordering = ["pool", "-number"]
        verbose_name = _("pool version")
        verbose_name_plural = _("pool versions")
        constraints = [
            models.UniqueConstraint(fields=["pool", "number"], name="pool_version_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="pool_version_number_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.pool} v{self.number}"


class PoolJudgment(models.Model):
    """One frozen (query, document, grade), bound to the external IDs scores are computed on."""

    version = models.ForeignKey(PoolVersion, on_delete=models.PROTECT, related_name="judgments")
    query_id = models.CharField(_("query ID"), max_length=255)
    doc_id = models.CharField(_("document ID"), max_length=255)
    grade = models.PositiveSmallIntegerField(_("grade"))
    source = models.CharField(_("source"), max_length=16, blank=True)
    # The document version that was graded, for the evidence-gap warning (null for imports).
    document_version = models.ForeignKey(
        "annotator.DocumentVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["version", "query_id", "doc_id"]
        verbose_name = _("pool judgment")
        verbose_name_plural = _("pool judgments")
        constraints = [
            models.UniqueConstraint(fields=["version", "query_id", "doc_id"], name="pool_judgment_unique_pair"),
            models.CheckConstraint(condition=Q(grade__lte=3), name="pool_judgment_grade_0_to_3"),
        ]

    def __str__(self) -> str:
        return f"{self.query_id} {self.doc_id} {self.grade}"
