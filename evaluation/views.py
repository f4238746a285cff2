"""Runs and A/B comparisons: upload, list, compare, and the worked NDCG breakdown.

For reviewers and owners only: editors grade blind, and runs and comparisons show system scores.
Numbers come from the engine through evaluation.comparisons; the views only choose, order and
lay them out.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.jobs.models import JobState
from annotator.jobs.services import runs_inline
from annotator.jobs.start import job_start
from annotator.jobs.views import job_started, outcome
from annotator.models import Document, Permission, PoolVersion, Query
from annotator.pools.models import PoolIntegrityError
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import attachment_header, post_from, redirect_after_post
from annotator.web.paging import Paginator
from evaluation import exports, metrics, runs
from evaluation.comparisons import (
    Breakdown,
    ComparisonResults,
    comparison_breakdown,
    comparison_verification,
)
from evaluation.exports import exports_in_background
from evaluation.forms import ComparisonForm, QueryTableForm, RunUploadForm, WhatIfForm
from evaluation.jobs import comparison_url, describe_comparison
from evaluation.jobs import describe as describe_run_job
from evaluation.jobs import result_url as run_job_url
from evaluation.models import Comparison, Run

RUNS_PER_PAGE = 25
COMPARISONS_PER_PAGE = 25
QUERIES_PER_PAGE = 50
CHART_WIDTH = 600
CHART_HEIGHT = 160
CHART_MAX_BARS = 300
BAR_ROW = 18  # pixels per position in the contribution bars
# A short list's empty positions are shown one by one up to this many, the rest as one row: a
# what-if at K=10,000 on a 100-document list made a 15 MB page of identical zero rows.
EMPTY_ROWS_SHOWN = 3
# Positions shown one by one per table; the rest are summed in one row (what they add, where the
# running DCG ends): K=10,000 on 100,000-row runs would make a page of megabytes; every term is in
# `manage.py evaluate --breakdown` on the exported files.
ROWS_SHOWN = 200


# Below this many paired queries the three tests are weak and can disagree (a bootstrap interval
# on a handful of deltas is too narrow, next to large p-values), so the page says so instead of
# letting a reader take the interval for a verdict (2 queries can give a CI excluding 0 and p 0.5).
FEW_PAIRED_QUERIES = 20


# ---- Runs ---------------------------------------------------------------------------------------


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def run_list(request: ProjectRequest, slug: str) -> HttpResponse:
    runs = Run.objects.in_project(request.project).listing()
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    template = "evaluation/run_list.html" + ("#run-table" if request.htmx else "")
    return render(request, template, {"project": request.project, "page": page})


@project_permission(Permission.COMPARE_RUNS)
@require_http_methods(["GET", "POST"])
def run_upload_page(request: ProjectRequest, slug: str) -> HttpResponse:
    # ?check_against=<version>: the version page's link preselects that version, not the newest
    # frozen one of the project, which could refuse a run that fits the version it came from.
    chosen = request.GET.get("check_against") if request.method == "GET" else None
    initial = {"check_against": chosen} if chosen else {}
    form = RunUploadForm(
        request.POST or None, request.FILES or None, project=request.project, initial=initial
    )
    if request.method == "POST" and form.is_valid():
        file_name, data, fmt = form.payload()
        check = form.check()
        job, started = job_start(
            project=request.project,
            kind="upload_run",
            by=request.user,
            params={
                "name": form.cleaned_data["name"],
                "notes": form.cleaned_data["notes"],
                "format": fmt,
                "check_version_id": check[0].pk if check else None,
                "check_settings": check[1].full_dict() if check else None,
            },
            data=data,
            name=file_name,
            inline=runs_inline("import", len(data)),
        )
        if job.state == JobState.DONE:
            messages.success(request, describe_run_job(job))
            for warning in job.result.get("warnings", []):
                messages.warning(request, warning)
            return redirect_after_post(request, run_job_url(job))
        if job.state != JobState.FAILED:
            if not started:
                messages.info(request, _("This file is already being uploaded: here is that job."))
            return job_started(request, job)
        field = "file" if form.cleaned_data.get("file") else "text"
        for error in outcome(job).errors:
            form.add_error(field, error)
    # Invalid: status 200 and the form with its errors, so htmx swaps it in.
    template = "evaluation/run_upload.html" + ("#upload-form" if request.htmx else "")
    return render(request, template, {"project": request.project, "form": form})


PREVIEW_QUERIES = 10
PREVIEW_DEPTH = 10


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def run_detail(request: ProjectRequest, slug: str, run_id: int) -> HttpResponse:
    # The page never shows the uploaded bytes (a download serves them), so they are not loaded.
    run = get_object_or_404(
        Run.objects.select_related("uploaded_by").defer("raw"), pk=run_id, project=request.project
    )
    preview = []
    for row in run.queries.all()[:PREVIEW_QUERIES]:
        ranking = row.ranking(limit=PREVIEW_DEPTH)
        rows = [
            {"doc": doc, "score": ranking.scores[i] if ranking.scores else None, "line": ranking.lines[i]}
            for i, doc in enumerate(ranking.doc_ids)
        ]
        preview.append({"query": row.query_id, "size": row.size, "rows": rows})
    comparisons = Comparison.objects.in_project(request.project).listing().filter(
        run_a=run
    ) | Comparison.objects.in_project(request.project).listing().filter(run_b=run)
    return render(
        request,
        "evaluation/run_detail.html",
        {
            "project": request.project,
            "run": run,
            "preview": preview,
            "comparisons": comparisons[:50],
            "preview_depth": PREVIEW_DEPTH,
        },
    )


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def run_download(request: ProjectRequest, slug: str, run_id: int) -> HttpResponse:
    """The run exactly as uploaded: same bytes, same file name (the SHA-256 is on the run page)."""
    run = get_object_or_404(Run, pk=run_id, project=request.project)
    response = HttpResponse(bytes(run.raw), content_type="application/octet-stream")
    response["Content-Disposition"] = attachment_header(run.file_name)
    response["X-Content-SHA256"] = run.sha256
    return response


@project_permission(Permission.COMPARE_RUNS)
@require_POST
def run_delete(request: ProjectRequest, slug: str, run_id: int) -> HttpResponse:
    """Delete a run no comparison uses; the run page's form asks for confirmation first."""
    run = get_object_or_404(Run.objects.defer("raw"), pk=run_id, project=request.project)
    try:
        runs.run_delete(run=run)
    except runs.RunDeleteError as error:
        messages.error(request, str(error))
        return redirect_after_post(request, run.get_absolute_url())
    messages.success(request, _("Run “%(name)s” deleted.") % {"name": run.name})
    return redirect_after_post(request, reverse("run_list", kwargs={"slug": request.project.slug}))


# ---- Comparisons: list and creation -------------------------------------------------------------


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def comparison_list(request: ProjectRequest, slug: str) -> HttpResponse:
    comparisons = Comparison.objects.in_project(request.project).listing()
    page = Paginator(comparisons, COMPARISONS_PER_PAGE).get_page(request.GET.get("page"))
    # The list runs the checks the comparison's own pages run before any number (they answer 409
    # otherwise): a stored mean of a tampered pool must not read as valid here either.
    listed = list(page.object_list)
    refusals = Comparison.pool_integrity_refusals(listed)
    rows = [(c, refusals.get(c.pk, "")) for c in listed]
    template = "evaluation/comparison_list.html" + ("#comparison-table" if request.htmx else "")
    return render(request, template, {"project": request.project, "page": page, "rows": rows})


@project_permission(Permission.COMPARE_RUNS)
@require_http_methods(["GET", "POST"])
def comparison_create_page(request: ProjectRequest, slug: str) -> HttpResponse:
    initial = {key: request.GET[key] for key in ("run_a", "run_b", "pool_version") if key in request.GET}
    form = ComparisonForm(request.POST or None, project=request.project, initial=initial)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        job, started = job_start(
            project=request.project,
            kind="create_comparison",
            by=request.user,
            params={
                "pool_version_id": d["pool_version"].pk,
                "run_a_id": d["run_a"].pk,
                "run_b_id": d["run_b"].pk,
                "settings": form.settings().full_dict(),
                "name": d["name"].strip(),
                "notes": d["notes"],
            },
            inline=runs_inline("compare", max(d["run_a"].query_count, d["run_b"].query_count)),
        )
        if job.state == JobState.DONE:
            messages.success(request, describe_comparison(job))
            return redirect_after_post(request, comparison_url(job))
        if job.state != JobState.FAILED:
            if not started:
                messages.info(request, _("This comparison is already being computed: here is that job."))
            return job_started(request, job)
        problems = job.result.get("problems") or [[None, error] for error in outcome(job).errors]
        for field, message in problems:
            form.add_error(field, message)
    template = "evaluation/comparison_create.html" + ("#comparison-form" if request.htmx else "")
    has_inputs = PoolVersion.objects.filter(pool__project=request.project).exists() and (
        Run.objects.in_project(request.project).count() >= 2
    )
    return render(request, template, {"project": request.project, "form": form, "has_inputs": has_inputs})


# ---- Comparisons: summary and per-query table ---------------------------------------------------


def _comparison_or_404(request: ProjectRequest, comparison_id: int) -> Comparison:
    return get_object_or_404(Comparison.objects.for_pages(), pk=comparison_id, project=request.project)


def _integrity_failure(request: ProjectRequest, comparison: Comparison, error: Exception) -> HttpResponse:
    """A pool that fails its hash check shows this, loudly, and no number at all."""
    context = {"project": request.project, "comparison": comparison, "error": str(error)}
    if request.htmx:
        return render(request, "evaluation/pool_integrity_error.html#integrity-error", context)
    return render(request, "evaluation/pool_integrity_error.html", context, status=409)


def _verified(comparison: Comparison) -> None:
    """Re-check the pool's SHA-256 (and that it is still the one computed on) before any number."""
    canonical = (
        PoolVersion.objects.filter(pk=comparison.pool_version_id).values_list("canonical", flat=True).get()
    )
    comparison.pool_version.canonical = canonical  # one query; reused by the breakdown
    exports.verify_comparison_pool(comparison)


def _delta_chart(deltas: list[float]) -> dict[str, Any] | None:
    """Bars of the sorted per-query deltas (B - A), symmetric around zero; None when empty.

    Beyond CHART_MAX_BARS queries, evenly spaced order statistics of the sorted deltas are drawn
    (first and last included), which keeps the shape and both extremes.
    """
    n = len(deltas)
    if not n:
        return None
    if n > CHART_MAX_BARS:
        picks = [round(j * (n - 1) / (CHART_MAX_BARS - 1)) for j in range(CHART_MAX_BARS)]
        values = [deltas[i] for i in picks]
    else:
        values = list(deltas)
    scale = max(abs(values[0]), abs(values[-1])) or 1.0
    middle = CHART_HEIGHT / 2
    # Few queries: bars of at most 24 units, left-aligned, rather than a few giant slabs.
    step = min(CHART_WIDTH / len(values), 24.0)
    bars = []
    for j, value in enumerate(values):
        height = abs(value) / scale * (middle - 4)
        bars.append(
            {
                "x": round(j * step, 2),
                "y": round(middle - height if value > 0 else middle, 2),
                "width": round(max(step - (1 if step > 3 else 0), 0.5), 2),
                "height": round(max(height, 0.5 if value else 0), 2),
                "kind": "up" if value > 0 else "down" if value < 0 else "zero",
                "value": value,
            }
        )
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "middle": middle,
        "bars": bars,
        "sampled": n > CHART_MAX_BARS,
        "n": n,
        "scale": scale,
        "low": values[0],
        "high": values[-1],
    }


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def comparison_detail(request: ProjectRequest, slug: str, comparison_id: int) -> HttpResponse:
    comparison = _comparison_or_404(request, comparison_id)
    try:
        _verified(comparison)
    except PoolIntegrityError as error:
        return _integrity_failure(request, comparison, error)
    results = ComparisonResults(comparison.results)
    table = QueryTableForm(request.GET)
    filters = table.values()
    order = results.selected(**filters)
    page = Paginator(order, QUERIES_PER_PAGE).get_page(request.GET.get("page"))
    rows = [results.row(i) for i in page.object_list]
    context = {
        "project": request.project,
        "comparison": comparison,
        "results": results,
        "rows": rows,
        "page": page,
        "table_form": table,
        "filters": filters,
        "policies": metrics.Settings(**comparison.settings).describe(),
        "coverage_warning": results.coverage_warning(comparison.settings),
        "few_queries": 0 < results.stats.paired < FEW_PAIRED_QUERIES,
        "chart": _delta_chart(results.sorted_deltas()),
        "worst": results.worst_query(),
        "export_in_background": exports_in_background(comparison),
    }
    template = "evaluation/comparison_detail.html" + ("#query-table" if request.htmx else "")
    return render(request, template, context)


# ---- Comparisons: the per-query breakdown -------------------------------------------------------


def _document_links(request: ProjectRequest, doc_ids: set[str]) -> dict[str, dict[str, Any]]:
    """{external ID: {"title", "url"}} for documents of this project (one query); the URL only
    when the document pages exist."""
    found: dict[str, dict[str, Any]] = {}
    documents = Document.objects.filter(project=request.project, external_id__in=doc_ids).values_list(
        "pk", "external_id", "title"
    )
    for pk, external_id, title in documents:
        try:
            url = reverse("document_detail", kwargs={"slug": request.project.slug, "document_id": pk})
        except NoReverseMatch:
            url = None
        found[external_id] = {"title": title, "url": url}
    return found


def _contribution_bars(rows: tuple[metrics.PositionRow, ...], scale: float) -> list[dict[str, Any]]:
    """Horizontal bar widths (0..100 %) of each position's contribution, on a shared scale, and
    where each row's label and bar sit (pixels from the top)."""
    return [
        # 90 %: the bars start after the position label and must not run off the right edge.
        {
            "rank": row.rank,
            "label_y": (row.rank - 1) * BAR_ROW + 13,
            "bar_y": (row.rank - 1) * BAR_ROW + 3,
            "width": round(90 * row.contribution / scale, 2) if scale else 0.0,
            "contribution": row.contribution,
            "doc_id": row.doc_id,
        }
        for row in rows
    ]


def _shown(
    rows: tuple[metrics.PositionRow, ...],
) -> tuple[tuple[metrics.PositionRow, ...], metrics.Tail | None]:
    """The rows a table shows one by one, and the engine's sum of the rest (None when nothing is
    left): at most ROWS_SHOWN, and of a short list's empty positions (which only ever come after
    the filled ones) no more than EMPTY_ROWS_SHOWN."""
    filled = sum(1 for row in rows if row.doc_id is not None)
    shown = rows[: min(filled + EMPTY_ROWS_SHOWN, ROWS_SHOWN)]
    if len(rows) == len(shown) + 1:
        shown = rows  # one position left: its own row says more than a summary "201–201"
    return shown, metrics.tail(rows, len(shown))


def _side(
    result: metrics.QueryResult | None,
    only: frozenset[str],
    docs: dict[str, dict[str, Any]],
    scale: float,
    table: tuple[tuple[metrics.PositionRow, ...], metrics.Tail | None],
    mean_gains: bool,
) -> dict[str, Any] | None:
    """One run's column of the breakdown; `table` is `_shown(result.positions)`. `mean_gains`: the
    tie policy gives a tied group's documents the group's mean gain ("expected")."""
    if result is None:
        return None
    shown, tail = table
    rows = [
        {
            **_position(row, docs),
            "only_here": row.doc_id in only,
            # Marked in the table and explained under it: "grade 3, gain 2.0000" reads as an error,
            # and a tooltip shows only on hover.
            "mean_gain": mean_gains and row.tied > 1,
        }
        for row in shown
    ]
    return {
        "result": result,
        "rows": rows,
        "tail": tail,
        "mean_gain": any(item["mean_gain"] for item in rows),
        "bars": _contribution_bars(shown, scale),
        "bars_height": len(shown) * BAR_ROW,
    }


def _position(row: metrics.PositionRow, docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A table row: the engine's terms, the document's page, and i + 1 of its log2(i + 1)."""
    return {"row": row, "document": docs.get(row.doc_id or ""), "discount_of": row.rank + 1}


def _breakdown_context(
    request: ProjectRequest, comparison: Comparison, breakdown: Breakdown
) -> dict[str, Any]:
    ideal, ideal_tail = _shown(breakdown.pool_side.ideal)
    a, b = (_shown(r.positions) if r is not None else ((), None) for r in (breakdown.a, breakdown.b))
    rows = [*a[0], *b[0], *ideal]
    doc_ids = {row.doc_id for row in rows if row.doc_id}
    docs = _document_links(request, doc_ids) if doc_ids else {}
    scale = max((row.contribution for row in rows), default=0.0)
    mean_gains = breakdown.settings.ties == "expected"
    return {
        "breakdown": breakdown,
        "a": _side(breakdown.a, breakdown.only_in_a, docs, scale, a, mean_gains),
        "b": _side(breakdown.b, breakdown.only_in_b, docs, scale, b, mean_gains),
        "ideal_rows": [_position(row, docs) for row in ideal],
        "ideal_tail": ideal_tail,
        "ideal_bars": _contribution_bars(ideal, scale),
        "ideal_bars_height": len(ideal) * BAR_ROW,
        "idcg": breakdown.pool_side.idcg,
        # Each metric's breakdown partial, in the order of METRICS (NDCG: evaluation/metrics/_ndcg.html).
        "metric_partials": [metric.partial for metric in metrics.METRICS],
    }


@project_permission(Permission.VIEW_COMPARISONS)
@require_GET
def comparison_query(request: ProjectRequest, slug: str, comparison_id: int) -> HttpResponse:
    """Per-position DCG breakdown of one query, A and B side by side; `k`/`gain` make a what-if."""
    comparison = _comparison_or_404(request, comparison_id)
    try:
        _verified(comparison)
    except PoolIntegrityError as error:
        return _integrity_failure(request, comparison, error)
    results = ComparisonResults(comparison.results)
    query_id = request.GET.get("query", "").strip()
    if not query_id:
        # No query named: open the worst one (the largest regression of B against A).
        worst = results.worst_query()
        if worst is None:
            return redirect(comparison.get_absolute_url())
        return redirect(f"{request.path}?query={_quote(worst)}")
    form = WhatIfForm(request.GET, comparison=comparison)
    what_if_errors: list[str] = []
    k = gain = None
    if form.is_valid():
        k, gain = form.cleaned_data["k"], form.cleaned_data["gain"] or None
    else:
        what_if_errors = [str(e) for field in ("k", "gain") for e in form.errors.get(field, [])]
    index = results.index_of(query_id)
    context: dict[str, Any] = {
        "project": request.project,
        "comparison": comparison,
        "query_id": query_id,
        "form": form,
        "what_if_errors": what_if_errors,
        "stored": results.row(index) if index is not None else None,
        "query": Query.objects.filter(project=request.project, external_id=query_id).first(),
    }
    status = 200
    breakdown = None
    if index is None:
        status = 404
    else:
        # Stored results and the pool come from the same verified version: the query is in both.
        breakdown = comparison_breakdown(comparison=comparison, query_id=query_id, k=k, gain=gain)
    if breakdown is not None:
        context.update(_breakdown_context(request, comparison, breakdown))
        order = results.selected()
        assert index is not None  # breakdown is only computed in the branch where index is not None
        position = order.index(index)
        context["previous_query"] = results.query_ids[order[position - 1]] if position > 0 else None
        context["next_query"] = results.query_ids[order[position + 1]] if position + 1 < len(order) else None
        # A what-if goes on with the next query, not back to the saved settings.
        kept = {"k": breakdown.settings.k, "gain": breakdown.settings.gain} if breakdown.what_if else {}
        for side in ("previous", "next"):
            if other := context[f"{side}_query"]:
                context[f"{side}_url"] = "?" + urlencode({"query": other, **kept})
        context["position"] = position + 1
        context["total"] = len(order)
    template = "evaluation/comparison_query.html" + ("#breakdown" if request.htmx else "")
    return render(request, template, context, status=200 if request.htmx else status)


def _quote(value: str) -> str:
    return quote(value, safe="")


# ---- Comparisons: export and recomputation ------------------------------------------------------


@project_permission(Permission.VIEW_COMPARISONS)
@post_from("comparison_detail")
def comparison_verify(request: ProjectRequest, slug: str, comparison_id: int) -> HttpResponse:
    """Recompute from the pool and both runs and say whether every stored number came out the same."""
    comparison = get_object_or_404(
        Comparison.objects.select_related("pool_version__pool", "run_a", "run_b", "project"),
        pk=comparison_id,
        project=request.project,
    )
    size = max(comparison.run_a.query_count, comparison.run_b.query_count)
    if not runs_inline("compare", size):
        job, _started = job_start(
            project=request.project,
            kind="verify_comparison",
            by=request.user,
            params={"comparison_id": comparison.pk},
        )
        return job_started(request, job)
    try:
        level, text = comparison_verification(comparison)
    except PoolIntegrityError as error:
        return _integrity_failure(request, comparison, error)
    if request.htmx:
        return render(
            request,
            "evaluation/comparison_detail.html#verify-result",
            {
                "verify_level": level,
                "verify_text": text,
                "comparison": comparison,
                "project": request.project,
            },
        )
    messages.add_message(request, messages.SUCCESS if level == "success" else messages.ERROR, text)
    return redirect(comparison.get_absolute_url())
