"""Frozen judgment pools: immutable, hashed versions that every score is computed against."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotator.models.projects import Project


class PoolIntegrityError(Exception):
    """A stored pool version no longer matches its hash: never score against it."""


def canonical_serialisation(judgments: Iterable[tuple[str, str, int]]) -> str:
    """The text a pool version's SHA-256 is computed over.

    One line per judgment, `query_id TAB doc_id TAB grade LF`, sorted by (query_id, doc_id) in
    Unicode code point order, encoded as UTF-8, no header. Only the judgments count (not who
    froze it, nor where grades came from), so the hash is the same whichever export format or
    database holds them and anyone can recompute it from an export.
    """
    rows = []
    seen: set[tuple[str, str]] = set()
    for query_id, doc_id, grade in judgments:
        for value in (query_id, doc_id):
            if not value or value != value.strip() or any(c in value for c in "\t\n\r"):
                raise ValueError(f"ID {value!r} is empty, padded with spaces or contains a tab or line break")
        if type(grade) is not int or not 0 <= grade <= 3:
            raise ValueError(f"grade {grade!r} of ({query_id}, {doc_id}) is not an integer 0..3")
        if (query_id, doc_id) in seen:
            raise ValueError(f"pair ({query_id}, {doc_id}) appears twice")
        seen.add((query_id, doc_id))
        rows.append((query_id, doc_id, grade))
    rows.sort(key=lambda r: (r[0], r[1]))
    return "".join(f"{q}\t{d}\t{g}\n" for q, d, g in rows)


def sha256_hex(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_canonical(canonical: str) -> dict[str, dict[str, int]]:
    grades: dict[str, dict[str, int]] = {}
    for line in canonical.splitlines():
        query_id, doc_id, grade = line.split("\t")
        grades.setdefault(query_id, {})[doc_id] = int(grade)
    return grades


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

    def verify(self) -> None:
        if sha256_hex(self.canonical) != self.sha256:
            raise PoolIntegrityError(
                f"{self}: stored judgments do not match SHA-256 {self.sha256[:12]}…; refusing to use them"
            )

    def judgments_by_query(self) -> dict[str, dict[str, int]]:
        """{query_id: {doc_id: grade}} for scoring, after checking the hash (loud on mismatch)."""
        self.verify()
        return parse_canonical(self.canonical)


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
