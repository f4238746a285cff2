"""Run uploads as jobs (annotator.jobs): parse, check against a pool version, store, all or nothing."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from annotator.jobs.kinds import Kind, register
from annotator.jobs.models import Job
from annotator.jobs.services import JobFailed, Progress, job_complete
from annotator.models import PoolVersion
from annotator.pools.models import PoolIntegrityError
from evaluation import metrics
from evaluation.forms import count_of_queries
from evaluation.models import Run
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
