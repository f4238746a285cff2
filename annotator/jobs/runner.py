"""Running one job to its end: done (its body called `job_complete`), failed or cancelled."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone, translation

from annotator.jobs.kinds import KINDS
from annotator.jobs.models import Job, JobState
from annotator.jobs.services import JobFailed, JobStopped, Progress, jobs_fail_stalled, progress_alias

logger = logging.getLogger(__name__)


def job_run(job_id: int, *, in_worker: bool, data: bytes | None = None) -> None:
    """Run one queued job to its end: done (its body called `job_complete`), failed or cancelled."""
    jobs_fail_stalled()
    now = timezone.now()
    if not Job.objects.filter(pk=job_id, state=JobState.QUEUED).update(
        state=JobState.RUNNING, started_at=now, heartbeat_at=now
    ):
        return  # cancelled before it started, or already taken
    jobs = Job.objects.select_related("project", "started_by").defer("output_data")
    job = (jobs.defer("input_data") if data is not None else jobs).get(pk=job_id)
    if data is not None:  # run inline: the request's bytes, never written to the job's row
        job.input_data = data
    progress = Progress(job, alias=progress_alias() if in_worker else DEFAULT_DB_ALIAS)
    try:
        with translation.override(job.params.get("language") or settings.LANGUAGE_CODE):
            KINDS[job.kind].run(job, progress)
    except JobStopped as stop:
        if stop.cancelled:
            _end(job, JobState.CANCELLED)
    except JobFailed as failure:
        _end(job, JobState.FAILED, errors=failure.messages, result=failure.details)
    except Exception:
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        _end(job, JobState.FAILED, result={"error": "unexpected"})
    else:
        # A body that returns without job_complete is a bug; say so rather than show "running".
        _end(job, JobState.FAILED, result={"error": "unexpected"})


def _end(
    job: Job,
    state: JobState,
    *,
    errors: list[str] | None = None,
    result: dict[str, Any] | None = None,
) -> None:
    Job.objects.filter(pk=job.pk, state=JobState.RUNNING).update(
        state=state,
        errors=errors or [],
        result=result or {},
        finished_at=timezone.now(),
        input_data=None,
    )
