"""Evaluation jobs (annotator.jobs): run uploads (parse, check against a pool version, store, all or
nothing), comparisons, and comparison exports (the zip kept with the job)."""

from __future__ import annotations

from django.db import transaction
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotator.jobs.kinds import Kind, output_url, register
from annotator.jobs.models import Job
from annotator.jobs.services import JobFailed, Progress, job_complete
from annotator.models import Permission, PoolVersion
from annotator.pools.models import PoolIntegrityError
from evaluation import metrics
from evaluation.comparisons import ComparisonInputError, comparison_create, comparison_verification
from evaluation.exports import comparison_export
from evaluation.forms import count_of_queries
from evaluation.models import Comparison, Run
from evaluation.runs import RunUploadError, run_upload


def upload_run(job: Job, progress: Progress) -> None:
    """params: name, notes, format, check_version_id and check_settings (Settings.full_dict())."""
    params = job.params
    check = None
    if params.get("check_version_id"):
        version = PoolVersion.objects.filter(pk=params["check_version_id"], pool__project=job.project).first()
        if version is None:
            raise JobFailed([_("The pool version to check the run against no longer exists.")])
        check = (version, metrics.Settings.from_mapping(params["check_settings"]))
    if job.started_by is None:
        raise JobFailed([_("The person who started this upload no longer exists.")])
    progress.stage("saving")
    try:
        with transaction.atomic():
            run = run_upload(
                project=job.project,
                name=params["name"],
                notes=params.get("notes", ""),
                fmt=params["format"],
                file_name=job.input_name,
                data=bytes(job.input_data or b""),
                by=job.started_by,
                check=check,
            )
            job_complete(job, {"run_id": run.pk, "warnings": list(run.upload_warnings)})
    except RunUploadError as error:
        raise JobFailed([str(error)]) from error
    except PoolIntegrityError as error:
        raise JobFailed(
            [_("This pool version failed its hash check: %(problem)s") % {"problem": error}]
        ) from error


def create_comparison(job: Job, progress: Progress) -> None:
    """params: pool_version_id, run_a_id, run_b_id, settings (Settings.full_dict()), name, notes."""
    params = job.params
    version = PoolVersion.objects.select_related("pool").filter(pk=params["pool_version_id"]).first()
    runs = {run.pk: run for run in Run.objects.filter(pk__in=[params["run_a_id"], params["run_b_id"]])}
    if version is None or len(runs) < len({params["run_a_id"], params["run_b_id"]}) or job.started_by is None:
        raise JobFailed(
            [_("A run, the pool version or the person who started this comparison no longer exists.")]
        )
    progress.stage("computing")
    try:
        with transaction.atomic():
            comparison = comparison_create(
                project=job.project,
                pool_version=version,
                run_a=runs[params["run_a_id"]],
                run_b=runs[params["run_b_id"]],
                settings=metrics.Settings.from_mapping(params["settings"]),
                by=job.started_by,
                name=params.get("name", ""),
                notes=params.get("notes", ""),
            )
            job_complete(job, {"comparison_id": comparison.pk})
    except ComparisonInputError as error:
        raise JobFailed(
            [message for _field, message in error.problems], {"problems": [list(p) for p in error.problems]}
        ) from error


def comparison_of(job: Job) -> Comparison:
    return Comparison.objects.get(pk=job.result["comparison_id"])


def describe_comparison(job: Job) -> str:
    return _("Comparison “%(name)s” computed and saved.") % {"name": comparison_of(job).name}


def comparison_url(job: Job) -> str:
    return comparison_of(job).get_absolute_url()


def run_of(job: Job) -> Run:
    return Run.objects.defer("raw").get(pk=job.result["run_id"])


def describe(job: Job) -> str:
    run = run_of(job)
    return _("Run “%(name)s” uploaded: %(queries)s, %(rows)s.") % {
        "name": run.name,
        "queries": count_of_queries(run.query_count),
        "rows": ngettext("%(count)s ranked entry", "%(count)s ranked entries", run.entry_count)
        % {"count": run.entry_count},
    }


def result_url(job: Job) -> str:
    return run_of(job).get_absolute_url()


def export_comparison(job: Job, progress: Progress) -> None:
    """params: comparison_id. The pool is checked first, as for the download: never a tampered pool."""
    comparison = (
        Comparison.objects.select_related(
            "pool_version__pool__project",
            "pool_version__frozen_by",
            "run_a__uploaded_by",
            "run_b__uploaded_by",
        )
        .filter(pk=job.params["comparison_id"], project=job.project)
        .first()
    )
    if comparison is None:
        raise JobFailed([_("The comparison to export no longer exists.")])
    progress.stage("exporting", total=comparison.pool_version.counts.get("judgments", 0))
    try:
        name, payload = comparison_export(comparison=comparison)
    except PoolIntegrityError as error:
        raise JobFailed(
            [_("This pool version failed its hash check: %(problem)s") % {"problem": error}]
        ) from error
    with transaction.atomic():
        job_complete(job, {"comparison_id": comparison.pk}, output=(name, payload))


def describe_export(job: Job) -> str:
    return _("%(file)s (%(size)s) is ready: the export of comparison “%(name)s”.") % {
        "file": job.output_name,
        "size": filesizeformat(job.output_size),
        "name": comparison_of(job).name,
    }


def verify_comparison(job: Job, progress: Progress) -> None:
    """params: comparison_id. The result keeps the verdict's sentence, in the starter's language."""
    comparison = (
        Comparison.objects.select_related("pool_version__pool", "run_a", "run_b", "project")
        .filter(pk=job.params["comparison_id"], project=job.project)
        .first()
    )
    if comparison is None:
        raise JobFailed([_("The comparison to check no longer exists.")])
    progress.stage("computing", total=max(comparison.run_a.query_count, comparison.run_b.query_count))
    try:
        level, text = comparison_verification(comparison)
    except PoolIntegrityError as error:
        raise JobFailed(
            [_("This pool version failed its hash check: %(problem)s") % {"problem": error}]
        ) from error
    with transaction.atomic():
        job_complete(job, {"comparison_id": comparison.pk, "level": level, "text": text})


def describe_verification(job: Job) -> str:
    return str(job.result["text"])


def register_kinds() -> None:
    register(
        "upload_run",
        Kind(
            gettext_lazy("Run upload"),
            upload_run,
            describe,
            result_url,
            gettext_lazy("ranked entries"),
            "import",
        ),
    )
    register(
        "create_comparison",
        Kind(
            gettext_lazy("Comparison"),
            create_comparison,
            describe_comparison,
            comparison_url,
            gettext_lazy("queries"),
            "compare",
        ),
    )
    register(
        "export_comparison",
        Kind(
            gettext_lazy("Comparison export"),
            export_comparison,
            describe_export,
            output_url,
            gettext_lazy("judgments"),
            "export",
            output_permission=Permission.VIEW_COMPARISONS,
        ),
    )
    register(
        "verify_comparison",
        Kind(
            gettext_lazy("Comparison check"),
            verify_comparison,
            describe_verification,
            comparison_url,
            gettext_lazy("queries"),
            "compare",
        ),
    )
