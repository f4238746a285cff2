"""What is graded: documents (with every version kept), queries, and the versioned criteria."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models, transaction
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from annotator.projects.models import Project, SharedLockQuerySet

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class Unit(models.TextChoices):
    """The unit that was graded. Dedupe and scoring work on this unit's IDs, never across units."""

    DOCUMENT = "document", _("Document")
    PAGE = "page", _("Page")
    CHUNK = "chunk", _("Chunk")


# IDs go into one statement at most this many at a time: SQLite refuses a statement with more than
# 32,766 parameters, and an import, a frozen version or a pasted list can name more rows than that.
ID_LIST_CHUNK = 1000


def chunked[T](items: Sequence[T]) -> Iterator[Sequence[T]]:
    """`items` in slices of ID_LIST_CHUNK, for `__in` lookups that a subquery cannot replace."""
    for start in range(0, len(items), ID_LIST_CHUNK):
        yield items[start : start + ID_LIST_CHUNK]


def by_external_id[M: models.Model](rows: models.QuerySet[M], ids: Sequence[str]) -> dict[str, M]:
    """{external ID: row} for those of `ids` found in `rows` (documents or queries of one
    project), read in chunks whatever the number of IDs."""
    found: dict[str, M] = {}
    for chunk in chunked(ids):
        found.update((row.external_id, row) for row in rows.filter(external_id__in=chunk))  # type: ignore[attr-defined]
    return found


def content_hash(title: str, body: str, url: str) -> str:
    """SHA-256 of what an editor reads; a change here makes existing grades stale."""
    h = hashlib.sha256()
    for part in (title, body, url):
        data = part.encode("utf-8")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


class DocumentQuerySet(models.QuerySet["Document"]):
    def in_project(self, project: Project) -> DocumentQuerySet:
        return self.filter(project=project)

    def search(self, text: str) -> DocumentQuerySet:
        """Documents whose external ID, title or body contains `text` (case-insensitive)."""
        text = text.strip()
        if not text:
            return self
        return self.filter(
            models.Q(external_id__icontains=text)
            | models.Q(title__icontains=text)
            | models.Q(body__icontains=text)
        )


class Document(models.Model):
    """The current version of a document; `versions` keeps every version ever graded."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(_("external ID"), max_length=255)
    unit = models.CharField(_("unit"), max_length=16, choices=Unit.choices, default=Unit.DOCUMENT)
    title = models.CharField(_("title"), max_length=500, blank=True)
    body = models.TextField(_("body"), blank=True)
    url = models.URLField(_("URL"), max_length=2000, blank=True)
    content_hash = models.CharField(_("content hash"), max_length=64)
    version = models.PositiveIntegerField(_("version"), default=1)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["external_id"]
        verbose_name = _("document")
        verbose_name_plural = _("documents")
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="document_unique_external_id"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id} · {self.title}" if self.title else self.external_id

    @property
    def current_version(self) -> DocumentVersion:
        return self.versions.get(version=self.version)

    @classmethod
    @transaction.atomic
    def upsert(
        cls,
        *,
        project: Project,
        external_id: str,
        title: str,
        body: str,
        url: str = "",
        unit: str = Unit.DOCUMENT,
    ) -> tuple[Document, str]:
        """Create, update to a new version, or leave alone.

        Returns (document, "created"|"updated"|"unchanged")."""
        digest = content_hash(title, body, url)
        doc = cls.objects.select_for_update().filter(project=project, external_id=external_id).first()
        if doc is None:
            doc = cls.objects.create(
                project=project,
                external_id=external_id,
                unit=unit,
                title=title,
                body=body,
                url=url,
                content_hash=digest,
                version=1,
            )
            DocumentVersion.objects.create(
                document=doc, version=1, title=title, body=body, url=url, content_hash=digest
            )
            return doc, "created"
        if doc.content_hash == digest and doc.unit == unit:
            return doc, "unchanged"
        if doc.content_hash != digest:
            doc.version += 1
            DocumentVersion.objects.create(
                document=doc, version=doc.version, title=title, body=body, url=url, content_hash=digest
            )
        doc.title, doc.body, doc.url, doc.unit, doc.content_hash = title, body, url, unit, digest
        doc.save()
        return doc, "updated"


class DocumentVersion(models.Model):
    """One immutable version of a document's content, as graded."""

    # Grades point at the version they were made on (PROTECT there), so a graded document cannot be
    # deleted through this cascade.
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField(_("version"))
    title = models.CharField(_("title"), max_length=500, blank=True)
    body = models.TextField(_("body"), blank=True)
    url = models.URLField(_("URL"), max_length=2000, blank=True)
    content_hash = models.CharField(_("content hash"), max_length=64)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["document", "version"]
        verbose_name = _("document version")
        verbose_name_plural = _("document versions")
        constraints = [
            models.UniqueConstraint(fields=["document", "version"], name="document_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.document.external_id} v{self.version}"


class QueryQuerySet(SharedLockQuerySet["Query"]):
    """`lock_shared(pk)`: a grade saved against the query's text as a page showed it takes it, so
    that a re-import changing the text waits for the save and then flags the grade, or the save
    waits for the import and then sees the new text (queries keep no versions to compare)."""

    def in_project(self, project: Project) -> QueryQuerySet:
        return self.filter(project=project)

    def search(self, text: str) -> QueryQuerySet:
        text = text.strip()
        if not text:
            return self
        return self.filter(
            models.Q(external_id__icontains=text)
            | models.Q(text__icontains=text)
            | models.Q(information_need__icontains=text)
        )


class Query(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="queries")
    external_id = models.CharField(_("external ID"), max_length=255)
    text = models.TextField(_("query text"))
    information_need = models.TextField(
        _("information need"), blank=True, help_text=_("What a complete answer must contain.")
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = QueryQuerySet.as_manager()

    class Meta:
        ordering = ["external_id"]
        verbose_name = _("query")
        verbose_name_plural = _("queries")
        constraints = [
            models.UniqueConstraint(fields=["project", "external_id"], name="query_unique_external_id"),
        ]

    # Hex digits of `fingerprint`: what the grading form checks the shape of.
    FINGERPRINT_LENGTH = 16
    FINGERPRINT_PATTERN = rf"\A[0-9a-f]{{{FINGERPRINT_LENGTH}}}\Z"

    def __str__(self) -> str:
        return f"{self.external_id} · {self.text[:60]}"

    @property
    def fingerprint(self) -> str:
        """A short digest of what the grading page shows of the query (its text and information
        need). Queries keep no versions, so the page sends this back with a grade and a save
        against text changed meanwhile is refused, as a document's version is. Lengths are hashed
        too, so that moving text between the two fields changes it."""
        h = hashlib.sha256()
        for part in (self.text, self.information_need):
            data = part.encode("utf-8")
            h.update(len(data).to_bytes(8, "big"))
            h.update(data)
        return h.hexdigest()[: self.FINGERPRINT_LENGTH]

    @classmethod
    def is_fingerprint(cls, value: str) -> bool:
        return re.fullmatch(cls.FINGERPRINT_PATTERN, value) is not None

    @classmethod
    @transaction.atomic
    def upsert(
        cls, *, project: Project, external_id: str, text: str, information_need: str | None = ""
    ) -> tuple[Query, str]:
        """Create, update or leave alone. Returns (query, "created"|"updated"|"unchanged").

        Queries keep no versions: a changed text changes what every grade of the query meant, so
        the caller flags those grades for re-checking. `information_need=None` keeps the stored one
        (an import file without that column).
        """
        query = cls.objects.select_for_update().filter(project=project, external_id=external_id).first()
        if information_need is None:
            information_need = query.information_need if query is not None else ""
        if query is None:
            return cls.objects.create(
                project=project, external_id=external_id, text=text, information_need=information_need
            ), "created"
        if query.text == text and query.information_need == information_need:
            return query, "unchanged"
        query.text, query.information_need = text, information_need
        query.save(update_fields=["text", "information_need"])
        return query, "updated"


# The contract's default criteria (../shared/evaluation-contract.md), editable and versioned.
DEFAULT_CRITERIA = {
    3: _(
        "Answers the question directly: the key steps and the conditions (e.g. entry point, field, deadline)."
    ),
    2: _("Substantive help, but an important condition is missing."),
    1: _("Background only (related topic, does not answer)."),
    0: _("No help for this question."),
}


def default_criteria_text(level: int) -> str:
    """The default text of one level in both UI languages, Chinese first. Version 1 is read by every
    editor of the project, whatever language each has chosen: stored in the language of whoever
    opened the project first, it would be English to the Chinese editors or the other way round."""
    texts = []
    for code in ("zh-hans", "en"):
        with translation.override(code):
            texts.append(str(DEFAULT_CRITERIA[level]))
    return " ".join(dict.fromkeys(texts))  # once, if a language has no translation


class CriteriaChange(models.TextChoices):
    INITIAL = "initial", _("Initial version")
    MEANING = "meaning", _("Meaning-changing: earlier grades need re-checking")
    WORDING = "wording", _("Wording only: earlier grades stand")


class CriteriaVersionQuerySet(models.QuerySet["CriteriaVersion"]):
    def current_for(self, project: Project) -> CriteriaVersion:
        """The project's newest criteria, created from the contract's defaults on first use."""
        current: CriteriaVersion | None = self.filter(project=project).order_by("-number").first()
        if current is None:
            current = self.create(
                project=project,
                number=1,
                change=CriteriaChange.INITIAL,
                **{f"level_{level}": default_criteria_text(level) for level in DEFAULT_CRITERIA},
            )
        return current


class CriteriaVersion(models.Model):
    """The written grading criteria; editing creates a new version, never changes an old one."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="criteria_versions")
    number = models.PositiveIntegerField(_("version"))
    level_3 = models.TextField(_("grade 3"))
    level_2 = models.TextField(_("grade 2"))
    level_1 = models.TextField(_("grade 1"))
    level_0 = models.TextField(_("grade 0"))
    change = models.CharField(_("kind of change"), max_length=16, choices=CriteriaChange.choices)
    note = models.TextField(_("note"), blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = CriteriaVersionQuerySet.as_manager()

    class Meta:
        ordering = ["project", "-number"]
        verbose_name = _("criteria version")
        verbose_name_plural = _("criteria versions")
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="criteria_version_unique_number"),
        ]

    def __str__(self) -> str:
        return f"{self.project} · criteria v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("A criteria version is never edited: create the next version instead.")
        super().save(*args, **kwargs)

    def levels(self) -> list[tuple[int, str]]:
        return [(3, self.level_3), (2, self.level_2), (1, self.level_1), (0, self.level_0)]

    @classmethod
    @transaction.atomic
    def publish(
        cls, *, project: Project, levels: dict[int, str], change: str, note: str, by: User
    ) -> CriteriaVersion:
        """Create the next version. Callers mark grades stale for a meaning-changing edit."""
        latest = cls.objects.select_for_update().filter(project=project).order_by("-number").first()
        number = (latest.number if latest else 0) + 1
        return cls.objects.create(
            project=project,
            number=number,
            change=change,
            note=note,
            created_by=by,
            level_3=levels[3],
            level_2=levels[2],
            level_1=levels[1],
            level_0=levels[0],
        )
