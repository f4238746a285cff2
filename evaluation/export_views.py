"""A comparison's export zip: downloaded at once when its pool version is small, else prepared by an
`export_comparison` job whose page offers the file (exports.exports_in_background)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotator.jobs.start import job_start
from annotator.jobs.views import job_started
from annotator.models import Permission
from annotator.pools.models import PoolIntegrityError
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import attachment_header, post_from
from evaluation.exports import comparison_export, exports_in_background
from evaluation.models import Comparison
from evaluation.views import _integrity_failure, comparison_detail


def _comparison_with_export_rows(request: ProjectRequest, comparison_id: int) -> Comparison:
    return get_object_or_404(
        Comparison.objects.select_related(
            "pool_version__pool__project",
            "pool_version__frozen_by",
            "run_a__uploaded_by",
            "run_b__uploaded_by",
            "project",
        ),
        pk=comparison_id,
        project=request.project,
    )


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def comparison_export_download(request: ProjectRequest, slug: str, comparison_id: int) -> HttpResponseBase:
    comparison = _comparison_with_export_rows(request, comparison_id)
    if exports_in_background(comparison):
        # A GET changes nothing, so it starts no job: the page's button does (POST).
        messages.error(
            request,
            _(
                "This comparison's pool version has %(n)s judgments, so its export is prepared in the "
                "background: use “Prepare the export” on this page (a job writes the zip)."
            )
            % {"n": f"{comparison.pool_version.counts['judgments']:,}"},
        )
        # The page itself with 409, not a redirect: a script fetching the zip is told it got none.
        response = comparison_detail(request, slug=slug, comparison_id=comparison_id)
        response.status_code = 409
        return response
    try:
        file_name, data = comparison_export(comparison=comparison)
    except PoolIntegrityError as error:
        return _integrity_failure(request, comparison, error)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = attachment_header(file_name)
    return response


@project_permission(Permission.VIEW_COMPARISONS)
@post_from("comparison_detail")
def comparison_export_start(request: ProjectRequest, slug: str, comparison_id: int) -> HttpResponse:
    """Start an `export_comparison` job (the same export twice while the first runs: that job)."""
    comparison = _comparison_with_export_rows(request, comparison_id)
    job, _started = job_start(
        project=request.project,
        kind="export_comparison",
        by=request.user,
        params={"comparison_id": comparison.pk},
        inline=not exports_in_background(comparison),
    )
    return job_started(request, job)
