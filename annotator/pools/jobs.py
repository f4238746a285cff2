"""Pool jobs: freezing a set and importing judgments (the version and the job's done state commit
together), and exporting a version (the file is kept with the job)."""

from __future__ import annotations

from django.db import transaction
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotator.jobs.models import Job
from annotator.jobs.services import JobFailed, Progress, job_complete
from annotator.models import GradingSet, Pool, PoolVersion
from annotator.pools.exports import export_file
from annotator.pools.files import PoolExportError, pool_import
from annotator.pools.freeze import pool_freeze
from annotator.pools.services import FreezeError, PoolImportError


def freeze(job: Job, progress: Progress) -> None:
    """params: set_id, exclude_unsettled, reason, blockers_seen (as the freeze form sends them)."""
    grading_set = GradingSet.objects.filter(pk=job.params["set_id"], project=job.project).first()
    if grading_set is None or job.started_by is None:
        raise JobFailed([_("The grading set or the person who started this freeze no longer exists.")])
    progress.stage("freezing", total=grading_set.pair_count)
    try:
        with transaction.atomic():
            version = pool_freeze(
                grading_set=grading_set,
                by=job.started_by,
                exclude_unsettled=bool(job.params.get("exclude_unsettled")),
                reason=job.params.get("reason", ""),
                blockers_seen=job.params.get("blockers_seen"),
                progress=progress,
            )
            job_complete(job, {"pool_id": version.pool_id, "version_id": version.pk})
    except FreezeError as error:
        raise JobFailed([str(error)]) from error


def import_judgments(job: Job, progress: Progress) -> None:
    """params: format, pool_id (the next version of it) or pool_name (a new pool), grade_map as
    [[from, to], ...]."""
    params = job.params
    pool = (
        Pool.objects.filter(pk=params["pool_id"], project=job.project).first()
        if params.get("pool_id")
        else None
    )
    if (params.get("pool_id") and pool is None) or job.started_by is None:
        raise JobFailed([_("The pool or the person who started this import no longer exists.")])
    progress.stage("saving")
    try:
        with transaction.atomic():
            version = pool_import(
                project=job.project,
                by=job.started_by,
                data=bytes(job.input_data or b""),
                file_name=job.input_name,
                fmt=params["format"],
                pool=pool,
                pool_name=params.get("pool_name", ""),
                grade_map={int(a): int(b) for a, b in params.get("grade_map", [])},
            )
            job_complete(job, {"pool_id": version.pool_id, "version_id": version.pk})
    except PoolImportError as error:
        raise JobFailed([str(error)]) from error


def describe_import(job: Job) -> str:
    version = version_of(job)
    count = version.counts["judgments"]
    return ngettext(
        "Imported %(file)s as %(pool)s version %(n)d: %(count)d judgment, SHA-256 %(hash)s….",
        "Imported %(file)s as %(pool)s version %(n)d: %(count)d judgments, SHA-256 %(hash)s….",
        count,
    ) % {
        "file": job.input_name,
        "pool": version.pool.name,
        "n": version.number,
        "count": count,
        "hash": version.hash_prefix,
    }


def version_of(job: Job) -> PoolVersion:
    return PoolVersion.objects.select_related("pool").get(pk=job.result["version_id"])


def describe(job: Job) -> str:
    version = version_of(job)
    return _("Frozen as %(pool)s version %(n)d (SHA-256 %(hash)s…).") % {
        "pool": version.pool.name,
        "n": version.number,
        "hash": version.hash_prefix,
    }


def result_url(job: Job) -> str:
    return reverse(
        "pool_version_detail",
        kwargs={
            "slug": job.project.slug,
            "pool_id": job.result["pool_id"],
            "version_id": job.result["version_id"],
        },
    )


def export(job: Job, progress: Progress) -> None:
    """params: version_id, format, part ("" for the zip, "data"), spreadsheet."""
    params = job.params
    version = PoolVersion.objects.filter(pk=params["version_id"], pool__project=job.project).first()
    if version is None:
        raise JobFailed([_("The pool version to export no longer exists.")])
    progress.stage("exporting", total=version.counts.get("judgments", 0))
    try:
        name, payload = export_file(
            version,
            params["format"],
            part=params.get("part", ""),
            spreadsheet=bool(params.get("spreadsheet")),
        )
    except PoolExportError as error:
        raise JobFailed([str(error)]) from error
    with transaction.atomic():
        job_complete(job, {"pool_id": version.pool_id, "version_id": version.pk}, output=(name, payload))


def describe_export(job: Job) -> str:
    version = version_of(job)
    return _("%(file)s (%(size)s) is ready: the export of %(pool)s version %(n)d (SHA-256 %(hash)s…).") % {
        "file": job.output_name,
        "size": filesizeformat(job.output_size),
        "pool": version.pool.name,
        "n": version.number,
        "hash": version.hash_prefix,
    }
