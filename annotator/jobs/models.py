"""Background jobs: one row per long piece of work (an import, a freeze), which a person can watch.

The task framework (`django.tasks`, database backend) only carries the job's ID to a worker; the
row here is what users see: who started it, its state, its progress and its result or errors.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class JobState(models.TextChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


ACTIVE_STATES = (JobState.QUEUED, JobState.RUNNING)


class JobQuerySet(models.QuerySet["Job"]):
    def of_project(self, project: Any) -> JobQuerySet:
        return self.filter(project=project)

    def light(self) -> JobQuerySet:
        """Without the stored input and output files: what every page but a download reads."""
        return self.defer("input_data", "output_data")

    def active(self) -> JobQuerySet:
        return self.filter(state__in=ACTIVE_STATES)

    def stalled(self) -> JobQuerySet:
        """Running jobs whose worker gave no sign of life for `JOB_STALL_SECONDS`: killed or hung."""
        limit = timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS)
        return self.filter(state=JobState.RUNNING, heartbeat_at__lt=limit)


class Job(models.Model):
    project = models.ForeignKey("annotator.Project", on_delete=models.CASCADE, related_name="jobs")
    kind = models.CharField(max_length=40)  # a key of annotator.jobs.kinds.KINDS
    state = models.CharField(max_length=10, choices=JobState.choices, default=JobState.QUEUED)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Progress: `done` of `total` items (None: not known yet); `stage` names the step.
    done = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(null=True, blank=True)
    stage = models.CharField(max_length=20, blank=True)
    # What the job works on: its options, and the uploaded file (kept until the job ends).
    params = models.JSONField(default=dict)
    input_name = models.CharField(max_length=255, blank=True)
    input_size = models.PositiveBigIntegerField(default=0)
    input_data = models.BinaryField(null=True, blank=True, editable=False)
    # The same input (file and options, or the set to freeze) cannot run twice at once.
    dedupe_key = models.CharField(max_length=100, blank=True)
    cancel_requested = models.BooleanField(default=False)
    result = models.JSONField(default=dict, blank=True)
    # A file the job made (an export's zip), downloaded from the job's page; kept with the job.
    output_name = models.CharField(max_length=255, blank=True)
    output_size = models.PositiveBigIntegerField(default=0)
    output_data = models.BinaryField(null=True, blank=True, editable=False)
    errors = models.JSONField(default=list, blank=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="job_project_recent")]
        constraints = [
            models.CheckConstraint(condition=Q(state__in=JobState.values), name="job_state_valid"),
            models.UniqueConstraint(
                fields=["project", "kind", "dedupe_key"],
                condition=Q(state__in=ACTIVE_STATES) & ~Q(dedupe_key=""),
                name="job_one_active_per_input",
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} ({self.kind}, {self.state})"

    @staticmethod
    def stall_seconds() -> int:
        return settings.JOB_STALL_SECONDS

    @property
    def is_active(self) -> bool:
        return self.state in ACTIVE_STATES

    @property
    def percent(self) -> int | None:
        if not self.total:
            return 100 if self.state == JobState.DONE else None
        return min(100, int(100 * self.done / self.total))

    @property
    def rate(self) -> float | None:
        """Items per second since the job started."""
        if self.started_at is None or not self.done:
            return None
        end = self.finished_at or timezone.now()
        seconds = (end - self.started_at).total_seconds()
        return self.done / seconds if seconds > 0 else None

    @property
    def seconds_left(self) -> int | None:
        rate = self.rate
        if self.state != JobState.RUNNING or not rate or self.total is None:
            return None
        return max(0, round((self.total - self.done) / rate))
