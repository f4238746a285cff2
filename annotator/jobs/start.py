"""Starting a job: its row, then its run, in this request when small, else on a worker."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import translation

from annotator.jobs.models import Job
from annotator.jobs.runner import job_run
from annotator.jobs.tasks import run_job
from annotator.web.uploads import upload_name

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from annotator.models import Project


def _digest(params: dict[str, Any], data: bytes | None) -> str:
    """The same options and file: the same job, whoever sends it and in whichever language."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    if data is not None:
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


def job_start(
    *,
    project: Project,
    kind: str,
    by: User,
    params: dict[str, Any],
    data: bytes | None = None,
    name: str = "",
    dedupe_key: str | None = None,
    inline: bool = False,
) -> tuple[Job, bool]:
    """Record a job and run it: in this request when `inline` (small work: the same code path),
    else on a worker. Returns (job, started); `started` is False when the same input is already
    queued or running: that job is returned and nothing runs twice."""
    key = dedupe_key if dedupe_key is not None else _digest(params, data)
    params = {**params, "language": translation.get_language() or settings.LANGUAGE_CODE}
    for _attempt in range(3):
        try:
            with transaction.atomic():
                job = Job.objects.create(
                    project=project,
                    kind=kind,
                    started_by=by,
                    params=params,
                    input_name=upload_name(name),  # the uploaded name, never a server path
                    input_size=len(data) if data is not None else 0,
                    # Inline work reads the bytes it was given; only a worker needs them stored.
                    input_data=None if inline else data,
                    dedupe_key=key,
                )
            break
        except IntegrityError:
            running = Job.objects.active().filter(project=project, kind=kind, dedupe_key=key).first()
            if running is not None:
                return running, False
    else:  # pragma: no cover - the same input finished and started again three times in a row
        raise RuntimeError("could not start the job")
    if inline:
        job_run(job.pk, in_worker=False, data=data)
        job = Job.objects.light().get(pk=job.pk)
    else:
        run_job.enqueue(job.pk)
    return job, True
