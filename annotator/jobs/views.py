"""The project's jobs: the list, one job's page (polled while it runs), and cancelling."""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass, field

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_POST

from annotator.jobs.kinds import KINDS
from annotator.jobs.models import Job, JobState
from annotator.jobs.services import job_cancel, jobs_fail_stalled
from annotator.models import Permission
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import attachment_header, redirect_after_post
from annotator.web.paging import Paginator

PAGE_SIZE = 25
POLL_SECONDS = 1
LIST_POLL_SECONDS = 2  # the list polls slower than one job's page: it reads a page of jobs


@dataclass
class Outcome:
    """What the page says of a job's end: its result and link, or its errors."""

    text: str = ""
    url: str = ""
    errors: list[str] = field(default_factory=list)


def outcome(job: Job) -> Outcome:
    kind = KINDS[job.kind]
    if job.state == JobState.DONE:
        return Outcome(text=kind.describe(job), url=kind.result_url(job))
    error = job.result.get("error")
    if error == "stalled":
        return Outcome(
            errors=[
                _(
                    "Its worker gave no sign of life for %(minutes)d minutes: it was stopped or killed. "
                    "Nothing of this job was stored; start it again."
                )
                % {"minutes": max(1, round(Job.stall_seconds() / 60))}
            ]
        )
    if error == "unexpected":
        return Outcome(
            errors=[
                _(
                    "The job failed on an unexpected error; nothing of it was stored. The server's log "
                    "has the details (job %(id)d)."
                )
                % {"id": job.pk}
            ]
        )
    return Outcome(errors=list(job.errors))


STAGES = {
    "reading": gettext_lazy("Reading the file"),
    "saving": gettext_lazy("Storing"),
    "freezing": gettext_lazy("Freezing"),
    "computing": gettext_lazy("Computing"),
    "exporting": gettext_lazy("Writing the export"),
}


def duration_text(seconds: int | None) -> str:
    if seconds is None:
        return ""
    if seconds < 90:
        return ngettext("about %(n)d second", "about %(n)d seconds", seconds) % {"n": seconds}
    minutes = round(seconds / 60)
    return ngettext("about %(n)d minute", "about %(n)d minutes", minutes) % {"n": minutes}


def _job_context(job: Job) -> dict[str, object]:
    rate = job.rate
    return {
        "job": job,
        "kind": KINDS[job.kind],
        "outcome": outcome(job),
        "stage": STAGES.get(job.stage, ""),
        "rate": round(rate) if rate else None,
        "time_left": duration_text(job.seconds_left),
        "poll_seconds": POLL_SECONDS,
    }


def job_started(request: ProjectRequest, job: Job) -> HttpResponse:
    """After a POST that queued `job`: to its page, which shows it live."""
    url = reverse("job_detail", kwargs={"slug": request.project.slug, "job_id": job.pk})
    return redirect_after_post(request, url)


@project_permission(Permission.VIEW_JOBS)
@require_GET
def job_list(request: ProjectRequest, slug: str) -> HttpResponse:
    jobs_fail_stalled()
    jobs = Job.objects.of_project(request.project).select_related("started_by").light()
    page = Paginator(jobs, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [(job, KINDS[job.kind]) for job in page]
    template = "annotator/jobs/list.html" + ("#job-table" if request.htmx else "")
    any_active = any(job.is_active for job, _kind in rows)
    context = {"page": page, "rows": rows, "any_active": any_active, "poll_seconds": LIST_POLL_SECONDS}
    return render(request, template, context)


@project_permission(Permission.VIEW_JOBS)
@require_GET
def job_detail(request: ProjectRequest, slug: str, job_id: int) -> HttpResponse:
    jobs_fail_stalled()
    job = get_object_or_404(
        Job.objects.select_related("started_by", "project").light(),
        pk=job_id,
        project=request.project,
    )
    template = "annotator/jobs/detail.html" + ("#job-status" if request.htmx else "")
    return render(request, template, _job_context(job))


@project_permission(Permission.VIEW_JOBS)
@require_POST
def job_cancel_view(request: ProjectRequest, slug: str, job_id: int) -> HttpResponse:
    job = get_object_or_404(Job.objects.light(), pk=job_id, project=request.project)
    if job_cancel(job):
        messages.success(request, _("Cancel requested: the job stops and stores nothing."))
    else:
        messages.info(request, _("This job had already ended; nothing was cancelled."))
    return redirect_after_post(request, reverse("job_detail", kwargs={"slug": slug, "job_id": job.pk}))


@project_permission(Permission.VIEW_JOBS)
@require_GET
def job_download(request: ProjectRequest, slug: str, job_id: int) -> HttpResponse:
    """The file a done job made (an export), to those who may read what it holds."""
    job = get_object_or_404(Job.objects.defer("input_data"), pk=job_id, project=request.project)
    permission = KINDS[job.kind].output_permission
    if permission is not None and not request.membership.may(permission):
        raise PermissionDenied(_("This file needs a permission your role in this project does not have."))
    if job.state != JobState.DONE or job.output_data is None:
        raise Http404(_("This job has no file to download."))
    content_type = mimetypes.guess_type(job.output_name)[0] or "application/octet-stream"
    response = HttpResponse(bytes(job.output_data), content_type=content_type)
    response["Content-Disposition"] = attachment_header(job.output_name)
    return response
