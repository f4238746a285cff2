"""Exports of a frozen version: downloaded at once when small, prepared by a job when large.

A version of more than JOB_INLINE_LIMITS["export"] judgments takes seconds to write; its page
offers each export as a button that starts an `export_pool` job, whose page offers the file.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, QueryDict
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from annotator.jobs.start import job_start
from annotator.jobs.views import job_started
from annotator.models import Permission
from annotator.pools.exports import export_file, exports_in_background
from annotator.pools.files import EXPORT_FORMATS, SPREADSHEET_FORMAT, PoolExportError
from annotator.pools.views import _version_or_404, pool_version_detail
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import attachment_header, redirect_after_post


def _export_options(data: QueryDict) -> tuple[str, str, bool] | str:
    """(format, part, spreadsheet) from a download's query or a job's form, or why they are refused."""
    fmt = data.get("format", "")
    if fmt not in EXPORT_FORMATS:
        return _("Unknown export format “%(fmt)s”: choose one of %(allowed)s.") % {
            "fmt": fmt,
            "allowed": ", ".join(EXPORT_FORMATS),
        }
    part = data.get("part", "")
    if part not in ("", "data"):
        return _("Unknown export part “%(part)s”: leave it out for the zip, or ask for “data”.") % {
            "part": part
        }
    variant = data.get("variant", "")
    if variant not in ("", "spreadsheet") or (variant and fmt != SPREADSHEET_FORMAT):
        return _(
            "Unknown export variant “%(variant)s”: leave it out, or ask for “spreadsheet” with format=csv."
        ) % {"variant": variant}
    return fmt, part, variant == "spreadsheet"


def _back_to_version(
    request: ProjectRequest, reason: str, slug: str, pool_id: int, version_id: int
) -> HttpResponseBase:
    """Options the version page never sends (a typed URL, an old link): back to it, saying why."""
    messages.error(request, reason)
    kwargs = {"slug": slug, "pool_id": pool_id, "version_id": version_id}
    return redirect_after_post(request, reverse("pool_version_detail", kwargs=kwargs))


def _export_refused(
    request: ProjectRequest, reason: str, slug: str, pool_id: int, version_id: int
) -> HttpResponseBase:
    """The version page itself, saying why, with 409: a script downloading the file is told it got
    none (a redirect to the page, once followed, reads as a successful download)."""
    messages.error(request, reason)
    response = pool_version_detail(request, slug=slug, pool_id=pool_id, version_id=version_id)
    response.status_code = 409
    return response


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_version_export(
    request: ProjectRequest, slug: str, pool_id: int, version_id: int
) -> HttpResponseBase:
    version = _version_or_404(request, pool_id, version_id)
    options = _export_options(request.GET)
    if isinstance(options, str):
        return _back_to_version(request, options, slug, pool_id, version_id)
    if exports_in_background(version):
        # A GET changes nothing, so it starts no job: the page's buttons do (POST).
        return _export_refused(
            request,
            _(
                "This version has %(n)s judgments: its exports are prepared in the background. Use the "
                "export buttons on this page; the job's page offers the file when it is ready."
            )
            % {"n": f"{version.counts['judgments']:,}"},
            slug,
            pool_id,
            version_id,
        )
    fmt, part, spreadsheet = options
    try:
        name, payload = export_file(version, fmt, part=part, spreadsheet=spreadsheet)
    except PoolExportError as exc:  # e.g. a space inside an ID cannot be written as qrels
        return _export_refused(request, str(exc), slug, pool_id, version_id)
    content_type = "text/plain; charset=utf-8" if part == "data" else "application/zip"
    response = HttpResponse(payload, content_type=content_type)
    response["Content-Disposition"] = attachment_header(name)
    return response


@project_permission(Permission.VIEW_POOLS)
@require_POST
def pool_version_export_start(
    request: ProjectRequest, slug: str, pool_id: int, version_id: int
) -> HttpResponseBase:
    """Start an `export_pool` job (the same export twice while the first runs: that job's page)."""
    version = _version_or_404(request, pool_id, version_id, light=True)
    options = _export_options(request.POST)
    # The hash check reads every judgment: the job makes it (export_file), so this answers at once.
    if isinstance(options, str):
        return _back_to_version(request, options, slug, pool_id, version_id)
    fmt, part, spreadsheet = options
    job, _started = job_start(
        project=request.project,
        kind="export_pool",
        by=request.user,
        params={"version_id": version.pk, "format": fmt, "part": part, "spreadsheet": spreadsheet},
        inline=not exports_in_background(version),
    )
    return job_started(request, job)
