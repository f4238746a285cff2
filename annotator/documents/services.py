"""Documents, queries and criteria: imports (all or nothing) and publishing criteria.

A change of a document's text, a query's text or the criteria's meaning marks the grades it
touches for re-checking (`annotator.grading.services.flag_for_recheck`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.documents.models import chunked, content_hash
from annotator.documents.readers import DocumentRecord, QueryRecord
from annotator.grading.models import StaleReason
from annotator.grading.services import (
    BATCH,
    PROGRESS_EVERY,
    CriteriaOutdated,
    GradingError,
    flag_for_recheck,
    flaggable,
)
from annotator.models import (
    CriteriaChange,
    CriteriaVersion,
    Document,
    DocumentVersion,
    Project,
    Query,
)

# --- imports -----------------------------------------------------------------------------------


@dataclass
class ImportSummary:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    stale_grades: int = 0


ProgressCallback = Callable[[int, int], None]  # (records done, records in all)


@transaction.atomic
def documents_import(
    *, project: Project, records: Sequence[DocumentRecord], on_progress: ProgressCallback | None = None
) -> ImportSummary:
    """Store documents all or nothing: new ones at version 1, changed ones as a new version (their
    grades in open sets flagged stale), unchanged ones left alone. Works in batches so 100k rows
    cost a few hundred queries, not a few hundred thousand, whether they are new or changed: one
    save at a time holds SQLite's write lock for many seconds."""
    summary = ImportSummary()
    changed: list[int] = []
    done = 0
    now = timezone.now()  # bulk_update skips auto_now: set by hand, once for the whole import
    for chunk in chunked(records):
        existing = {
            d.external_id: d
            for d in Document.objects.select_for_update().filter(
                project=project, external_id__in=[r.external_id for r in chunk]
            )
        }
        new_records = [r for r in chunk if r.external_id not in existing]
        if new_records:
            Document.objects.bulk_create(
                [
                    Document(
                        project=project,
                        external_id=r.external_id,
                        unit=r.unit,
                        title=r.title,
                        body=r.body,
                        url=r.url,
                        content_hash=content_hash(r.title, r.body, r.url),
                        version=1,
                    )
                    for r in new_records
                ]
            )
            ids = dict(
                Document.objects.filter(
                    project=project, external_id__in=[r.external_id for r in new_records]
                ).values_list("external_id", "pk")
            )
            DocumentVersion.objects.bulk_create(
                [
                    DocumentVersion(
                        document_id=ids[r.external_id],
                        version=1,
                        title=r.title,
                        body=r.body,
                        url=r.url,
                        content_hash=content_hash(r.title, r.body, r.url),
                    )
                    for r in new_records
                ]
            )
            summary.created += len(new_records)
        versions: list[DocumentVersion] = []
        updated: list[Document] = []
        for r in chunk:
            doc = existing.get(r.external_id)
            if doc is None:
                continue
            if kept := r.kept():
                r = replace(r, **{name: getattr(doc, name) for name in kept})
            digest = content_hash(r.title, r.body, r.url)
            if doc.content_hash == digest and doc.unit == r.unit:
                summary.unchanged += 1
                continue
            if doc.content_hash != digest:
                doc.version += 1
                versions.append(
                    DocumentVersion(
                        document=doc,
                        version=doc.version,
                        title=r.title,
                        body=r.body,
                        url=r.url,
                        content_hash=digest,
                    )
                )
                changed.append(doc.pk)
            doc.title, doc.body, doc.url, doc.unit, doc.content_hash = r.title, r.body, r.url, r.unit, digest
            doc.updated_at = now
            updated.append(doc)
            summary.updated += 1
        DocumentVersion.objects.bulk_create(versions)
        Document.objects.bulk_update(
            updated,
            ["title", "body", "url", "unit", "content_hash", "version", "updated_at"],
            batch_size=BATCH,
        )
        done += len(chunk)
        if on_progress:
            on_progress(done, len(records))
    for ids_chunk in chunked(changed):
        summary.stale_grades += flag_for_recheck(StaleReason.DOCUMENT, candidate__document_id__in=ids_chunk)
    return summary


@transaction.atomic
def queries_import(
    *, project: Project, records: Sequence[QueryRecord], on_progress: ProgressCallback | None = None
) -> ImportSummary:
    """Store queries all or nothing; a changed text or information need flags the query's grades
    in open sets stale (queries keep no versions, so the old grades were about another question)."""
    summary = ImportSummary()
    changed: list[int] = []
    for done, r in enumerate(records, start=1):
        query, outcome = Query.upsert(
            project=project,
            external_id=r.external_id,
            text=r.text,
            information_need=r.information_need if r.gives_information_need else None,
        )
        if outcome == "created":
            summary.created += 1
        elif outcome == "updated":
            summary.updated += 1
            changed.append(query.pk)
        else:
            summary.unchanged += 1
        if on_progress and (done % PROGRESS_EVERY == 0 or done == len(records)):
            on_progress(done, len(records))
    for ids_chunk in chunked(changed):
        summary.stale_grades += flag_for_recheck(StaleReason.QUERY, candidate__query_id__in=ids_chunk)
    return summary


# --- criteria ----------------------------------------------------------------------------------


@transaction.atomic
def criteria_publish(
    *, project: Project, levels: dict[int, str], change: str, note: str, by: User, based_on: int | None = None
) -> tuple[CriteriaVersion, int]:
    """Publish the next criteria version. Meaning-changing: every grade in an open set made under
    an older version is flagged for re-checking. Returns (version, grades flagged).

    `based_on`: the version the edit started from (the page sends the one it showed). A newer
    version published since is refused (CriteriaOutdated): the edit would undo it unseen."""
    if change not in (CriteriaChange.MEANING, CriteriaChange.WORDING):
        raise GradingError(_("Say whether the change is meaning-changing or wording only."))
    CriteriaVersion.objects.current_for(project)  # version 1 exists before version 2 does
    # Locked, so that two owners publishing at once are told, not both published on one base.
    latest = CriteriaVersion.objects.select_for_update().filter(project=project).order_by("-number").first()
    if based_on is not None and latest is not None and latest.number != based_on:
        raise CriteriaOutdated(latest.number, based_on)
    version = CriteriaVersion.publish(project=project, levels=levels, change=change, note=note, by=by)
    flagged = 0
    if change == CriteriaChange.MEANING:
        flagged = flag_for_recheck(
            StaleReason.CRITERIA,
            candidate__grading_set__project=project,
            criteria_version__number__lt=version.number,
        )
    return version, flagged


def meaning_change_would_flag(project: Project) -> int:
    """How many grades a meaning-changing criteria version published now would flag (what
    `criteria_publish` flags, less those flagged for the criteria already): asked before publishing."""
    already = {"stale_reason__contains": StaleReason.CRITERIA.value}
    grades, finals = flaggable(candidate__grading_set__project=project)
    return grades.exclude(stale=True, **already).count() + finals.exclude(**already).count()
