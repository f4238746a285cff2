"""Frozen judgment pools: list, versions, freezing, new versions, diffs, exports and imports.

Every page is for reviewers and owners (imports: owners only). Editors never reach them: a pool
holds every final grade, and editors grade blind.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import messages
from django.db.models import Count, Max, OuterRef, Subquery
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from annotator.grading.models import count_of
from annotator.grading.settlement import idle_settle
from annotator.jobs.models import JobState
from annotator.jobs.services import runs_inline
from annotator.jobs.start import job_start
from annotator.jobs.views import job_started, outcome
from annotator.models import Candidate, FinalGrade, GradingSet, Permission, Pool, PoolVersion, Project, Query
from annotator.pools.exports import export_choices, exports_in_background
from annotator.pools.files import (
    EXPORT_FORMATS,
    _file_stem,
)
from annotator.pools.forms import ContinueForm, FreezeForm, PoolImportForm
from annotator.pools.freeze import NO_FINAL_GRADE, OPEN_DISPUTE, freeze_preview
from annotator.pools.jobs import describe, describe_import, result_url, version_of
from annotator.pools.models import PoolIntegrityError, exclusion_row, sha256_hex
from annotator.pools.services import (
    CopyError,
    continue_refusal,
    grading_set_create_from_version,
)
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import attachment_header, redirect_after_post
from annotator.web.paging import Paginator
from annotator.web.text import enumeration
from annotator.web.uploads import upload_bytes

PAGE_SIZE = 50  # rows of per-query tables, diffs and freeze blockers
LIST_PAGE_SIZE = 25  # pools, and versions of a pool


def _version_or_404(
    request: ProjectRequest, pool_id: int, version_id: int, *, light: bool = False
) -> PoolVersion:
    """`light`: without the hashed text (megabytes at a million judgments), for a page that only
    needs the version's facts."""
    versions = PoolVersion.objects.select_related("pool__project", "frozen_by", "grading_set")
    return get_object_or_404(
        versions.defer("canonical") if light else versions,
        pk=version_id,
        pool_id=pool_id,
        pool__project=request.project,
    )


def _unfrozen_sets(project: Project) -> list[GradingSet]:
    """Open grading sets that have not been frozen yet: what the freeze buttons offer."""
    frozen = PoolVersion.objects.filter(grading_set__isnull=False).values("grading_set")
    return list(
        GradingSet.objects.filter(project=project, is_open=True)
        .exclude(pk__in=frozen)
        .select_related("pool", "based_on")
        .defer("based_on__canonical")  # a frozen version's whole text: only its number is shown
        # Counted per set in subqueries: a join counted DISTINCT over every pair took 2 s at 600k pairs.
        .annotate(
            pairs=count_of(Candidate.objects.all(), "grading_set"),
            final=count_of(FinalGrade.objects.all(), "candidate__grading_set"),
        )
        .order_by("name")
    )


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_list(request: ProjectRequest, slug: str) -> HttpResponse:
    newest = PoolVersion.objects.filter(pool=OuterRef("pk")).order_by("-number").values("pk")[:1]
    pools = (
        Pool.objects.in_project(request.project)
        .annotate(latest_id=Subquery(newest), version_count=Count("versions"))
        .order_by("name")
    )
    page = Paginator(pools, LIST_PAGE_SIZE).get_page(request.GET.get("page"))
    # The stubs' plugin types the annotated rows but loses their annotations through Paginator's Page.
    latest = PoolVersion.objects.select_related("frozen_by").in_bulk(
        [p.latest_id for p in page if p.latest_id]  # type: ignore[attr-defined]
    )
    rows = [(p, latest.get(p.latest_id)) for p in page]  # type: ignore[attr-defined]
    context = {
        "page": page,
        "rows": rows,
        "open_sets": _unfrozen_sets(request.project),
        # Called by the template only when no set is open (a query the usual page does not need).
        "any_set": GradingSet.objects.in_project(request.project).exists,
    }
    template = "annotator/pools/list.html" + ("#pool-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_detail(request: ProjectRequest, slug: str, pool_id: int) -> HttpResponse:
    pool = get_object_or_404(Pool, pk=pool_id, project=request.project)
    versions = pool.versions.select_related("frozen_by", "grading_set").order_by("-number")
    page = Paginator(versions, LIST_PAGE_SIZE).get_page(request.GET.get("page"))
    # Each version's predecessor (number - 1), for the "changes" link: one small query.
    by_number = {v.number: v for v in pool.versions.only("pk", "number", "pool_id")}
    context = {
        "pool": pool,
        "page": page,
        "rows": [(v, by_number.get(v.number - 1)) for v in page],
        "open_sets": [s for s in _unfrozen_sets(request.project) if s.pool_id == pool.pk],
    }
    template = "annotator/pools/pool.html" + ("#version-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_version_detail(request: ProjectRequest, slug: str, pool_id: int, version_id: int) -> HttpResponse:
    version = _version_or_404(request, pool_id, version_id)
    context: dict[str, object] = {"version": version, "pool": version.pool}
    if sha256_hex(version.canonical) == version.sha256:
        # Even when stored rows disagree, the hashed text is intact: the counts come from it.
        per_query = version.per_query_counts()
        page = Paginator(per_query, PAGE_SIZE).get_page(request.GET.get("page"))
        texts = dict(
            Query.objects.filter(
                project=request.project, external_id__in=[r["query_id"] for r in page]
            ).values_list("external_id", "text")
        )
        for row in page:
            row["text"] = texts.get(row["query_id"], "")
        context["page"] = page
    if request.htmx and "page" in context:
        return render(request, "annotator/pools/version.html#query-table", context)
    # The full page runs every integrity check; a page of the per-query table (above) only needs
    # the hashed text intact.
    context["problems"] = version.integrity_problems()

    total = version.counts.get("judgments", 0) or 0
    context["distribution"] = [
        # One decimal: whole percents round 62.5 and 12.5 down and the column adds up to 99.
        (g, n, round(100 * n / total, 1) if total else 0)
        for g, n in ((g, version.counts.get("by_grade", {}).get(str(g), 0)) for g in (3, 2, 1, 0))
    ]
    gap = version.evidence_gap()
    context["gap_documents"] = gap.values("document_version__document").distinct().count()
    context["gap_rows"] = list(gap.order_by("doc_id", "query_id")[:20])
    # Judgments with no graded document version (imported from a file, or carried along from such
    # a version): the gap cannot be checked for them, and the page says so (silence reads as
    # "no gap").
    context["unknown_text"] = version.judgments.filter(document_version__isnull=True).count()
    # The same for queries, which keep no versions: a fingerprint of the text recorded per judgment.
    gap_queries = version.query_gap()
    context["gap_queries"] = len(gap_queries)
    context["gap_list"] = enumeration(gap_queries[:20]) + (" …" if len(gap_queries) > 20 else "")
    context["unknown_query_text"] = version.judgments.filter(query_fingerprint="").count()
    context["exclusion_reasons"] = {OPEN_DISPUTE: _("open dispute"), NO_FINAL_GRADE: _("no final grade")}
    # TREC qrels split fields at spaces, so an ID holding one cannot be written there (the export
    # refuses it): offer the formats that can hold every ID, and say why qrels is missing.
    # The canonical text separates fields with tabs only, so a space in it is inside an ID.
    spaced = " " in version.canonical
    formats = [(fmt, label) for fmt, label in EXPORT_FORMATS.items() if not (spaced and fmt == "qrels")]
    context["formats"] = formats
    context["qrels_refused"] = spaced
    # IDs a spreadsheet would run as formulas: said here and in the manifest, and the
    # spreadsheet-safe CSV offered (the exports keep the IDs the hash is computed over).
    formulas = version.formula_ids()
    context["formula_count"] = len(formulas)
    context["exports"] = export_choices(formats, spreadsheet=bool(formulas))
    context["export_in_background"] = exports_in_background(version)
    context["formula_list"] = enumeration(f"“{value}”" for value in formulas[:FORMULA_IDS_SHOWN]) + (
        " …" if len(formulas) > FORMULA_IDS_SHOWN else ""
    )
    context["siblings"] = version.pool.versions.exclude(pk=version.pk).order_by("-number")
    context["latest"] = version.pool.latest_version()  # only the newest version can be continued
    # Both grow with the set (thousands of left-out pairs, a provenance of megabytes): the
    # left-out pairs come a page at a time, and a long provenance stays in the manifest.
    exclusions = Paginator(version.exclusions, PAGE_SIZE).get_page(request.GET.get("left_out_page"))
    context["exclusions"] = exclusions
    context["exclusion_rows"] = [exclusion_row(entry) for entry in exclusions]
    context["provenance_rows"] = _provenance_rows(version.provenance)
    provenance_json = json.dumps(version.provenance, ensure_ascii=False, indent=2)
    if len(provenance_json) <= PROVENANCE_SHOWN_CHARS:
        context["provenance_json"] = provenance_json
    else:
        context["provenance_size"] = len(provenance_json.encode())
    return render(request, "annotator/pools/version.html", context)


FORMULA_IDS_SHOWN = 5  # on the version page; the manifest lists 10

# Shown on the version page: the recorded provenance when it is this short, and this many details
# per source (the rest counted); both are whole in the manifest.
PROVENANCE_SHOWN_CHARS = 20_000
SHOWN_DETAILS = 10


def _provenance_rows(provenance: dict[str, Any]) -> list[dict[str, Any]]:
    """Per source of pairs: its count, its first details, and how many more (pairs included)."""
    rows = []
    for source, info in (provenance.get("candidates") or {}).items():
        named = [d for d in info.get("details", []) if d.get("detail")]
        summed = [d for d in info.get("details", []) if d.get("other_details")]
        hidden = named[SHOWN_DETAILS:]
        rows.append(
            {
                "source": source,
                "pairs": info.get("pairs", 0),
                "details": named[:SHOWN_DETAILS],
                "more_details": len(hidden) + sum(d["other_details"] for d in summed),
                "more_pairs": sum(d["pairs"] for d in hidden + summed),
                "added_by": info.get("added_by") or {},
            }
        )
    return rows


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_version_manifest(request: ProjectRequest, slug: str, pool_id: int, version_id: int) -> HttpResponse:
    version = _version_or_404(request, pool_id, version_id)
    manifest = version.manifest()
    manifest["integrity"] = version.integrity_problems() or "ok"
    response = JsonResponse(manifest, json_dumps_params={"ensure_ascii": False, "indent": 2})
    # A download, named like the version's exports, not a page of JSON opened in the tab.
    response["Content-Disposition"] = attachment_header(f"{_file_stem(version)}-manifest.json")
    return response


@project_permission(Permission.VIEW_POOLS)
@require_GET
def pool_version_diff(
    request: ProjectRequest, slug: str, pool_id: int, version_id: int, other_id: int
) -> HttpResponse:
    version = _version_or_404(request, pool_id, version_id)
    # Another pool's version too (two pools compared; each column names its pool), within the project.
    other = get_object_or_404(
        PoolVersion.objects.select_related("pool"), pk=other_id, pool__project=request.project
    )
    context: dict[str, object] = {"version": version, "other": other, "pool": version.pool}
    try:
        diff = version.diff(other)
    except PoolIntegrityError as exc:
        context["error"] = str(exc)
        return render(request, "annotator/pools/diff.html", context)
    kind = request.GET.get("kind", "")
    rows = diff.of_kind(kind) if kind in ("added", "removed", "changed") else diff.rows
    context.update(
        {
            "counts": diff.counts,
            "total": len(diff.rows),
            "kind": kind,
            "page": Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page")),
        }
    )
    template = "annotator/pools/diff.html" + ("#diff-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.CONTINUE_POOL)
@require_http_methods(["GET", "POST"])
def pool_version_continue(request: ProjectRequest, slug: str, pool_id: int, version_id: int) -> HttpResponse:
    """Start version N+1: copy this frozen version into a new open grading set."""
    version = _version_or_404(request, pool_id, version_id)
    form = ContinueForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            grading_set = grading_set_create_from_version(
                version=version, by=request.user, name=form.cleaned_data["name"]
            )
        except CopyError as exc:
            form.add_error(None, str(exc))
        except PoolIntegrityError as exc:
            # Said as what it is: nothing was made, not only that the rows mismatch.
            form.add_error(
                None,
                _("Nothing was created: this version failed its integrity check. %(problem)s")
                % {"problem": exc},
            )
        else:
            messages.success(
                request,
                _(
                    "Grading set “%(set)s” holds the %(n)d pairs of version %(v)d with their final grades. "
                    "Add queries and documents, grade them, then freeze it as version %(next)d."
                )
                % {
                    "set": grading_set.name,
                    "n": version.counts.get("judgments", 0),
                    "v": version.number,
                    "next": version.number + 1,
                },
            )
            # The grading area's set page is where queries and documents are added next.
            return redirect_after_post(
                request, reverse("grading_set_detail", kwargs={"slug": slug, "set_id": grading_set.pk})
            )
    # Said before the form is filled in, not only after it is sent.
    refusal = continue_refusal(version) if request.method == "GET" else ""
    if request.method == "GET" and not refusal and (problems := version.integrity_problems()):
        refusal = _("No new version can start from this one: it failed its integrity check. %(problem)s") % {
            "problem": problems[0]
        }
    context = {"version": version, "pool": version.pool, "form": form, "refusal": refusal}
    template = "annotator/pools/continue.html" + ("#continue-form" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.FREEZE)
@require_http_methods(["GET", "POST"])
def pool_freeze_page(request: ProjectRequest, slug: str, set_id: int) -> HttpResponse:
    grading_set = get_object_or_404(
        GradingSet.objects.select_related("pool", "based_on__pool"), pk=set_id, project=request.project
    )
    # The preview lists what idle queries settled to; a query an editor is still on shows its
    # pairs as without a final grade, and the freeze itself settles it first (freeze.py).
    idle_settle(grading_set=grading_set)
    form = FreezeForm(request.POST if request.method == "POST" else None)
    error = ""
    if request.method == "POST" and form.is_valid():
        # A job either way: in this request for a set of up to JOB_INLINE_LIMITS["freeze"] pairs,
        # else on a worker; one freeze of a set at a time.
        job, started = job_start(
            project=request.project,
            kind="freeze",
            by=request.user,
            params={
                "set_id": grading_set.pk,
                "exclude_unsettled": form.cleaned_data["exclude_unsettled"],
                "reason": form.cleaned_data["reason"],
                "blockers_seen": form.cleaned_data["blockers_seen"] or None,  # the page always sends it
            },
            dedupe_key=f"set:{grading_set.pk}",
            inline=runs_inline("freeze", grading_set.pair_count),
        )
        if job.state == JobState.DONE:
            version = version_of(job)
            messages.success(request, describe(job))
            _warn_if_same_as_earlier(request, version)
            return redirect_after_post(request, result_url(job))
        if job.state == JobState.FAILED:
            error = " ".join(outcome(job).errors)
        else:
            if not started:
                messages.info(request, _("This set is already being frozen: here is that job."))
            return job_started(request, job)
    preview = freeze_preview(grading_set)
    if error == preview.refusal:
        error = ""  # the page states the refusal itself, in place of the form
    context = {
        "grading_set": grading_set,
        "preview": preview,
        "blockers": Paginator(preview.blockers, PAGE_SIZE).get_page(request.GET.get("page")),
        "form": form,
        "error": error,
        "next_number": (grading_set.pool.versions.aggregate(n=Max("number"))["n"] or 0) + 1
        if grading_set.pool
        else 1,
    }
    template = "annotator/pools/freeze.html" + ("#freeze-form" if request.htmx else "")
    return render(request, template, context)


def _warn_if_same_as_earlier(request: ProjectRequest, version: PoolVersion) -> None:
    # Legitimate (a copy frozen again unchanged, an import back to an earlier version's
    # judgments), but worth knowing: nothing new was judged. An import identical to the newest
    # version is refused before it gets here (pool_version_create's refuse_unchanged).
    same = (
        version.pool.versions.filter(sha256=version.sha256).exclude(pk=version.pk).order_by("number").first()
    )
    if same is not None:
        messages.warning(
            request,
            _("Version %(n)d holds exactly the same judgments as version %(same)d (same SHA-256).")
            % {"n": version.number, "same": same.number},
        )


@project_permission(Permission.IMPORT_JUDGMENTS)
@require_http_methods(["GET", "POST"])
def pool_import_page(request: ProjectRequest, slug: str) -> HttpResponse:
    posted = request.method == "POST"
    form = PoolImportForm(
        request.POST if posted else None, request.FILES if posted else None, project=request.project
    )
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        data = upload_bytes(upload)
        pool = form.cleaned_data["pool"]
        job, started = job_start(
            project=request.project,
            kind="import_judgments",
            by=request.user,
            params={
                "format": form.cleaned_data["format"],
                "pool_id": pool.pk if pool is not None else None,
                "pool_name": form.cleaned_data["pool_name"],
                "grade_map": sorted(form.cleaned_data["grade_map"].items()),
            },
            data=data,
            name=upload.name,
            inline=runs_inline("import", len(data)),
        )
        if job.state == JobState.DONE:
            messages.success(request, describe_import(job))
            _warn_if_same_as_earlier(request, version_of(job))
            return redirect_after_post(request, result_url(job))
        if job.state != JobState.FAILED:
            if not started:
                messages.info(request, _("This file is already being imported: here is that job."))
            return job_started(request, job)
        for error in outcome(job).errors:
            form.add_error("file", error)
        # The page comes back without the chosen file, as after a form error: say to choose it again.
        form.add_error("file", PoolImportForm.CHOOSE_AGAIN)
    template = "annotator/pools/import.html" + ("#import-form" if request.htmx else "")
    return render(request, template, {"form": form})
