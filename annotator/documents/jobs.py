"""Document and query imports as jobs: the file is read, then stored all or nothing."""

from __future__ import annotations

from dataclasses import asdict

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotator.documents.readers import (
    ImportFileError,
    LineError,
    read_documents,
    read_queries,
    unwritable_ids_warning,
)
from annotator.documents.services import ImportSummary, documents_import, queries_import
from annotator.grading.pooling import pool_top_k, read_run
from annotator.grading.services import CandidateSummary, GradingError, candidates_add
from annotator.jobs.models import Job
from annotator.jobs.services import JobFailed, Progress, job_complete
from annotator.models import GradingSet


def import_records(job: Job, progress: Progress) -> None:
    """params: records ("documents" or "queries"), format, check_only (store nothing, count only)."""
    records_kind, fmt = job.params["records"], job.params["format"]
    data = bytes(job.input_data or b"")
    progress.stage("reading")
    try:
        read = read_documents if records_kind == "documents" else read_queries
        records = read(data, fmt)
        progress.stage("saving", total=len(records))
        store = documents_import if records_kind == "documents" else queries_import
        with transaction.atomic():
            with transaction.atomic():
                summary = store(project=job.project, records=records, on_progress=progress.report)  # type: ignore[arg-type]
                if job.params.get("check_only"):
                    transaction.set_rollback(True)  # "check only": the counts, then nothing stored
            job_complete(job, {"summary": asdict(summary), "warning": unwritable_ids_warning(records)})
    except ImportFileError as error:
        raise JobFailed(error.messages()) from error
    except IntegrityError as error:
        raise JobFailed(
            [
                _(
                    "Another import changed the same rows at the same moment; nothing was imported. "
                    "Upload the file again."
                )
            ]
        ) from error


def summary_of(job: Job) -> ImportSummary:
    return ImportSummary(**job.result["summary"])


def summary_text(title: object, s: ImportSummary, *, checked_only: bool) -> str:
    """The import's outcome in one sentence, as the imports page and the job page say it."""
    if checked_only:
        return _(
            "%(kind)s, checked only: nothing was stored. Importing this file would create %(created)d, "
            "update %(updated)d and leave %(unchanged)d unchanged; grades in open sets that would need "
            "re-checking: %(count)d."
        ) % {
            "kind": title,
            "created": s.created,
            "updated": s.updated,
            "unchanged": s.unchanged,
            "count": s.stale_grades,
        }
    text = _("%(kind)s: created %(created)d, updated %(updated)d, unchanged %(unchanged)d.") % {
        "kind": title,
        "created": s.created,
        "updated": s.updated,
        "unchanged": s.unchanged,
    }
    if s.stale_grades:
        text += " " + _("Grades in open sets that now need re-checking: %(count)d.") % {
            "count": s.stale_grades
        }
    return text


TITLES = {"documents": gettext_lazy("Documents"), "queries": gettext_lazy("Queries")}


def describe(job: Job) -> str:
    title = TITLES[job.params["records"]]
    return summary_text(title, summary_of(job), checked_only=bool(job.params.get("check_only")))


def result_url(job: Job) -> str:
    name = "document_list" if job.params["records"] == "documents" else "query_list"
    return reverse(name, kwargs={"slug": job.project.slug})


# --- candidates pooled from run files ----------------------------------------------------------


def files_of(job: Job) -> list[tuple[str, str, bytes]]:
    """(name, format, bytes) of each file: the job keeps them one after another in its input."""
    data, files, offset = bytes(job.input_data or b""), [], 0
    for name, fmt, size in job.params["files"]:
        files.append((name, fmt, data[offset : offset + size]))
        offset += size
    return files


def pool_candidates(job: Job, progress: Progress) -> None:
    """params: set_id, depth (None: every listed pair), files [[name, format, size], ...]."""
    grading_set = GradingSet.objects.filter(pk=job.params["set_id"], project=job.project).first()
    if grading_set is None:
        raise JobFailed([_("The grading set of this import no longer exists.")])
    progress.stage("reading")
    runs, errors = [], []
    for name, fmt, data in files_of(job):
        try:
            runs.append((name, read_run(data, fmt, default_name=name)))
        except ImportFileError as error:
            errors += [f"{name}: {message}" for message in error.messages()]
    if errors:
        raise JobFailed(errors)
    depth = job.params["depth"]
    pairs = pool_top_k(runs, depth)
    del runs  # the pairs hold what is stored: the runs' scores, lines and words are let go
    progress.stage("saving")
    try:
        with transaction.atomic():
            summary = candidates_add(grading_set=grading_set, pairs=pairs, by=job.started_by, depth=depth)
            job_complete(job, {"summary": asdict(summary), "set_id": grading_set.pk})
    except ImportFileError as error:
        raise JobFailed(error.messages()) from error
    except GradingError as error:  # the set was closed after the form was shown
        raise JobFailed([str(error)]) from error
    except IntegrityError as error:
        raise JobFailed(
            [
                str(
                    LineError(
                        1,
                        "",
                        "",
                        _(
                            "another upload added the same pairs at the same moment; "
                            "nothing was added. Upload again."
                        ),
                    )
                )
            ]
        ) from error


def candidates_summary_text(summary: CandidateSummary) -> str:
    return _("Candidates: added %(added)d, already in the set %(already)d.") % {
        "added": summary.added,
        "already": summary.already,
    }


def describe_candidates(job: Job) -> str:
    return candidates_summary_text(CandidateSummary(**job.result["summary"]))


def candidates_url(job: Job) -> str:
    return reverse("grading_set_detail", kwargs={"slug": job.project.slug, "set_id": job.result["set_id"]})
