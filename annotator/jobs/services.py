"""Starting, running, finishing and cancelling jobs (see models.py for what a job is).

All or nothing: a job's work and its `done` state commit in one transaction (`job_complete`), so a
job killed, cancelled or marked stalled before that commit leaves nothing of its input behind.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from annotator.jobs.models import Job, JobState

if TYPE_CHECKING:
    pass

logger = logging.getLogger(__name__)

# Progress is written at most this often (seconds): a heartbeat, not a write per row.
PROGRESS_INTERVAL = 0.5


class JobFailed(Exception):
    """The job's input was refused; `messages` (line-numbered, as the forms show them) are stored."""

    def __init__(self, messages: list[str], details: dict[str, Any] | None = None) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages
        self.details = details or {}  # kept in the job's result, e.g. which form field a message is about


class JobStopped(Exception):
    """The job was cancelled, or marked stalled, while it ran: its transaction rolls back."""

    def __init__(self, *, cancelled: bool) -> None:
        super().__init__("cancelled" if cancelled else "no longer running")
        self.cancelled = cancelled

    @classmethod
    def of(cls, job: Job, alias: str = DEFAULT_DB_ALIAS) -> JobStopped:
        """Why `job` can no longer report or complete, read before its transaction rolls back."""
        state, cancel = (
            Job.objects.using(alias).filter(pk=job.pk).values_list("state", "cancel_requested").get()
        )
        return cls(cancelled=cancel and state == JobState.RUNNING)


def progress_alias() -> str:
    """The connection progress is written on in a worker: a second one where the database lets a
    row be written beside another transaction (PostgreSQL), so the page sees progress before the
    job's own transaction commits. SQLite has one writer, so there it is the job's own connection."""
    return "jobs" if "jobs" in connections.settings else DEFAULT_DB_ALIAS


class Progress:
    """What a job's body reports: its stage and items done of total. Each report is also the
    heartbeat, and the point where a cancel request stops the job (JobStopped)."""

    def __init__(self, job: Job, alias: str = DEFAULT_DB_ALIAS) -> None:
        self.job = job
        self.alias = alias
        self._last = 0.0

    def stage(self, name: str, total: int | None = None) -> None:
        self.job.stage, self.job.done, self.job.total = name, 0, total
        self._write(force=True)

    def report(self, done: int, total: int | None = None) -> None:
        self.job.done = done
        if total is not None:
            self.job.total = total
        self._write(force=done == self.job.total)

    def _write(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self._last < PROGRESS_INTERVAL:
            return
        self._last = now
        job = self.job
        written = (
            Job.objects.using(self.alias)
            .filter(pk=job.pk, state=JobState.RUNNING, cancel_requested=False)
            .update(stage=job.stage, done=job.done, total=job.total, heartbeat_at=timezone.now())
        )
        if not written:
            raise JobStopped.of(job, self.alias)


def runs_inline(limit: str, size: int) -> bool:
    """Whether work of `size` (bytes of a file, pairs of a set) runs in the request that starts it
    (settings.JOB_INLINE_LIMITS[limit])."""
    return size <= settings.JOB_INLINE_LIMITS[limit]


def job_complete(job: Job, result: dict[str, Any], output: tuple[str, bytes] | None = None) -> None:
    """Mark `job` done with `result` (and `output`, a file's name and bytes, for its page to offer),
    in the transaction that stores its work. When it was cancelled or marked stalled meanwhile,
    JobStopped: the transaction rolls back, nothing stays."""
    assert transaction.get_connection().in_atomic_block, "job_complete belongs in the job's transaction"
    done = Job.objects.filter(pk=job.pk, state=JobState.RUNNING, cancel_requested=False).update(
        state=JobState.DONE,
        result=result,
        finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
        done=job.total if job.total is not None else job.done,
        input_data=None,
        **(
            {"output_name": output[0][:255], "output_size": len(output[1]), "output_data": output[1]}
            if output
            else {}
        ),
    )
    if not done:
        raise JobStopped.of(job)


def job_cancel(job: Job) -> bool:
    """Cancel a queued job at once, or ask a running one to stop at its next progress report (its
    transaction then rolls back). False when it had already ended."""
    if Job.objects.filter(pk=job.pk, state=JobState.QUEUED).update(
        state=JobState.CANCELLED, finished_at=timezone.now(), input_data=None
    ):
        return True
    return bool(Job.objects.filter(pk=job.pk, state=JobState.RUNNING).update(cancel_requested=True))


def jobs_fail_stalled() -> int:
    """Mark failed every running job whose worker stopped reporting (killed, or hung past
    JOB_STALL_SECONDS). Its transaction never committed, or will be refused by job_complete."""
    # Read first: the job pages call this on every poll, and on SQLite even an UPDATE that matches
    # nothing waits for the write lock a storing job holds.
    if not Job.objects.stalled().exists():
        return 0
    return Job.objects.stalled().update(
        state=JobState.FAILED, result={"error": "stalled"}, finished_at=timezone.now(), input_data=None
    )
