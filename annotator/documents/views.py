"""What is graded: documents, queries, the versioned criteria, and the imports that fill them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from django.contrib import messages
from django.db.models.functions import Substr
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from annotator.documents import services
from annotator.documents.forms import SEARCH_MAX_LENGTH, CriteriaForm, ImportForm, SearchForm
from annotator.documents.jobs import TITLES, candidates_summary_text, summary_of, summary_text
from annotator.documents.readers import ImportFileError, decode_upload
from annotator.documents.services import ImportSummary, meaning_change_would_flag
from annotator.grading.forms import CandidateImportForm
from annotator.grading.services import CandidateSummary, CriteriaOutdated, GradingError
from annotator.jobs.models import JobState
from annotator.jobs.services import runs_inline
from annotator.jobs.start import job_start
from annotator.jobs.views import job_started, outcome
from annotator.models import CriteriaVersion, Document, Permission, Query
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.http import post_from, redirect_after_post
from annotator.web.paging import Paginator
from annotator.web.uploads import upload_bytes
from evaluation.formats.registry import FORMATS, detect_format

PAGE_SIZE = 50


def _search(request: ProjectRequest) -> str:
    return SearchForm.text(request.GET)


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def document_list(request: ProjectRequest, slug: str) -> HttpResponse:
    q = _search(request)
    documents = (
        Document.objects.in_project(request.project)
        .search(q)
        .defer("body")
        .annotate(snippet=Substr("body", 1, 200))
        .order_by("external_id")
    )
    page = Paginator(documents, PAGE_SIZE).get_page(request.GET.get("page"))
    context = {"page": page, "q": q, "search_max_length": SEARCH_MAX_LENGTH}
    template = "annotator/documents/document_list.html" + ("#document-table" if request.htmx else "")
    return render(request, template, context)


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def document_detail(request: ProjectRequest, slug: str, document_id: int) -> HttpResponse:
    document = get_object_or_404(Document, pk=document_id, project=request.project)
    versions = list(document.versions.order_by("-version"))
    shown = versions[0] if versions else None
    wanted = request.GET.get("version", "")
    if wanted:
        shown = next((v for v in versions if str(v.version) == wanted), None)
        if shown is None:
            raise Http404(_("This document has no version %(version)s.") % {"version": wanted})
    context = {"document": document, "versions": versions, "shown": shown}
    return render(request, "annotator/documents/document_detail.html", context)


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def query_list(request: ProjectRequest, slug: str) -> HttpResponse:
    q = _search(request)
    queries = Query.objects.in_project(request.project).search(q).order_by("external_id")
    page = Paginator(queries, PAGE_SIZE).get_page(request.GET.get("page"))
    template = "annotator/documents/query_list.html" + ("#query-table" if request.htmx else "")
    return render(request, template, {"page": page, "q": q, "search_max_length": SEARCH_MAX_LENGTH})


def _criteria_context(request: ProjectRequest, form: CriteriaForm | None = None) -> dict[str, Any]:
    current = CriteriaVersion.objects.current_for(request.project)
    history = list(
        CriteriaVersion.objects.filter(project=request.project)
        .select_related("created_by")
        .order_by("-number")
    )
    if form is None and request.membership.may(Permission.PUBLISH_CRITERIA):
        form = CriteriaForm(current=current)
    # What a meaning-changing publish would flag (criteria_publish), for the question asked before
    # it: one click may flag every grade of the open sets.
    to_flag = meaning_change_would_flag(request.project) if form is not None else 0
    return {"current": current, "history": history, "form": form, "grades_to_flag": to_flag}


@project_permission(Permission.VIEW_PROJECT)
@require_GET
def criteria(request: ProjectRequest, slug: str) -> HttpResponse:
    return render(request, "annotator/documents/criteria.html", _criteria_context(request))


@project_permission(Permission.PUBLISH_CRITERIA)
@post_from("criteria")
def criteria_publish(request: ProjectRequest, slug: str) -> HttpResponse:
    current = CriteriaVersion.objects.current_for(request.project)
    form = CriteriaForm(request.POST, current=current)
    if form.is_valid():
        try:
            version, flagged = services.criteria_publish(
                project=request.project,
                levels=form.levels(),
                change=form.cleaned_data["change"],
                note=form.cleaned_data["note"].strip(),
                by=request.user,
                based_on=form.cleaned_data["based_on"],
            )
        except CriteriaOutdated:
            # The newer version's changes join the owner's in the form (CriteriaForm.merge); where
            # both changed a level, the owner's text stays and the newer one is shown beside it.
            latest = CriteriaVersion.objects.current_for(request.project)
            based = form.cleaned_data["based_on"]
            known = CriteriaVersion.objects.filter(project=request.project, number=based).first()
            # A number no version has (a hand-made post) merges onto the newest as it is.
            merged, conflicts = CriteriaForm.merge(form.levels(), known or latest, latest)
            data = request.POST.copy()
            data.update({f"level_{n}": text for n, text in merged.items()})
            data["based_on"] = str(latest.number)
            form = CriteriaForm(data, current=latest)
            form.is_valid()
            if known is None:  # a made-up number: "published after version 999" would be false
                problem = _(
                    "The form named criteria version %(based)d, which does not exist. It now holds version "
                    "%(latest)d's text with your changes: check the text, then publish."
                )
            else:
                problem = _(
                    "Criteria version %(latest)d was published after this page showed version %(based)d. Its "
                    "changes are now in the form, with yours: check the text, then publish."
                )
            form.add_error(None, problem % {"latest": latest.number, "based": based})
            now = dict(latest.levels())
            for level in conflicts:
                form.add_error(
                    f"level_{level}",
                    _(
                        "Version %(latest)d changed this level too; it says: “%(text)s”. The form keeps your "
                        "text: merge the two before publishing."
                    )
                    % {"latest": latest.number, "text": now[level]},
                )
        except GradingError as error:
            form.add_error(None, str(error))
        else:
            messages.success(
                request, _("Criteria version %(number)d is published.") % {"number": version.number}
            )
            if flagged:
                messages.warning(
                    request,
                    _(
                        "Grades in open grading sets made under older criteria, now flagged for re-checking: "
                        "%(count)d."
                    )
                    % {"count": flagged},
                )
            return redirect_after_post(request, reverse("criteria", kwargs={"slug": request.project.slug}))
    context = _criteria_context(request, form)
    template = "annotator/documents/criteria.html" + ("#criteria-update" if request.htmx else "")
    return render(request, template, context)


# --- imports -----------------------------------------------------------------------------------


@dataclass
class ImportSection:
    """One upload form on the imports page, with its result or its errors."""

    kind: str
    title: Any
    help: Any
    form: Any
    action: str
    summary: ImportSummary | CandidateSummary | None = None
    errors: list[str] = field(default_factory=list)
    # "Check only": the import ran and was rolled back; the summary says what it would have done.
    checked_only: bool = False
    warning: str = ""  # said beside the summary: stored, but worth knowing


SECTION_TEXT = {
    "documents": (
        TITLES["documents"],
        gettext_lazy(
            "CSV columns or JSONL keys: doc_id and body (required), title, url, unit "
            "(document, page or chunk). Changed documents become a new version and their "
            "grades are flagged for re-checking; unchanged ones are left alone."
        ),
    ),
    "queries": (
        TITLES["queries"],
        gettext_lazy(
            "CSV columns or JSONL keys: query_id and text (required), information_need "
            "(what a complete answer must contain)."
        ),
    ),
    "candidates": (
        gettext_lazy("Candidates"),
        gettext_lazy(
            "Run files pooled into a grading set, in the layout a comparison takes: TREC runs (qid Q0 "
            "docno rank score tag), or CSV columns / JSONL keys query_id and doc_id (required), "
            "score, rank, system (the run's name). Each run's "
            "top k per query is added (plus documents tied on score with the k-th); without k, "
            "every listed pair is added."
        ),
    ),
}


# The imports page shows the sections its visitor may use (import_page takes any of these).
SECTION_PERMISSION = {
    "documents": Permission.IMPORT_DOCUMENTS,
    "queries": Permission.IMPORT_QUERIES,
    "candidates": Permission.POOL_CANDIDATES,
}


def _auto_id(kind: str) -> str:
    """Element IDs per section: the three forms share field names, and a label must find its own field."""
    return f"id_{kind}_%s"


def _sections(request: ProjectRequest, **overrides: ImportSection) -> list[ImportSection]:
    project = request.project
    initial_set = request.GET.get("set") if request.method == "GET" else None
    defaults = {
        "documents": ImportForm(kind="documents", auto_id=_auto_id("documents")),
        "queries": ImportForm(kind="queries", auto_id=_auto_id("queries")),
        "candidates": CandidateImportForm(
            project=project,
            initial={"grading_set": initial_set} if initial_set else None,
            auto_id=_auto_id("candidates"),
        ),
    }
    sections = []
    for kind in ("documents", "queries", "candidates"):
        if not request.membership.may(SECTION_PERMISSION[kind]):
            continue
        if kind in overrides:
            sections.append(overrides[kind])
            continue
        title, help_text = SECTION_TEXT[kind]
        sections.append(
            ImportSection(
                kind=kind,
                title=title,
                help=help_text,
                form=defaults[kind],
                action=reverse(f"import_{kind}", kwargs={"slug": project.slug}),
            )
        )
    return sections


@project_permission(*SECTION_PERMISSION.values())
@require_GET
def import_page(request: ProjectRequest, slug: str) -> HttpResponse:
    return render(request, "annotator/documents/imports.html", {"sections": _sections(request)})


def _respond(request: ProjectRequest, section: ImportSection) -> HttpResponse:
    """htmx: the section alone. Without JS: PRG on success, the whole page with errors otherwise."""
    if request.htmx:
        return render(request, "annotator/documents/imports.html#import-section", {"section": section})
    if section.summary is not None and not section.errors:
        (messages.info if section.checked_only else messages.success)(request, _summary_text(section))
        if section.warning:
            messages.warning(request, section.warning)
        return redirect("import_page", slug=request.project.slug)
    return render(
        request,
        "annotator/documents/imports.html",
        {"sections": _sections(request, **{section.kind: section})},
    )


def _summary_text(section: ImportSection) -> str:
    s = section.summary
    if isinstance(s, CandidateSummary):
        return candidates_summary_text(s)
    assert s is not None
    return summary_text(section.title, s, checked_only=section.checked_only)


def _file_problem(error: Exception) -> list[str]:
    if isinstance(error, ImportFileError):
        return error.messages()
    return [str(error)]


def _import_file(request: ProjectRequest, kind: Literal["documents", "queries"]) -> HttpResponse:
    title, help_text = SECTION_TEXT[kind]
    form = ImportForm(request.POST, request.FILES, kind=kind, auto_id=_auto_id(kind))
    section = ImportSection(
        kind=kind,
        title=title,
        help=help_text,
        form=form,
        action=reverse(f"import_{kind}", kwargs={"slug": request.project.slug}),
    )
    if not form.is_valid():
        return _respond(request, section)
    upload = form.cleaned_data["file"]
    fmt = detect_format(upload.name, form.cleaned_data["format"], kind="records")
    if not FORMATS[fmt].records:
        try:
            decode_upload(
                upload_bytes(upload)
            )  # a zip (e.g. a pool export) is refused as one, whatever its name
        except ImportFileError as error:
            section.errors = _file_problem(error)
        else:
            section.errors = [
                _("“%(name)s” is neither .csv, .jsonl nor .ndjson: choose the format, or rename the file.")
                % {"name": upload.name}
            ]
        return _respond(request, section)
    # "Check only" runs the very import and rolls it back: its counts (and the grades it would flag
    # for re-checking) are exact, and an owner sees them before a re-import flags many grades.
    section.checked_only = request.POST.get("check_only") == "1"
    data = upload_bytes(upload)
    # A job either way: in this request when the file is small, else on a worker (the page then
    # shows the job's progress, and the job's page keeps its result).
    job, started = job_start(
        project=request.project,
        kind=f"import_{kind}",
        by=request.user,
        params={"records": kind, "format": fmt, "check_only": section.checked_only},
        data=data,
        name=upload.name,
        inline=runs_inline("import", len(data)),
    )
    if job.state == JobState.DONE:
        section.summary = summary_of(job)
        section.warning = job.result.get("warning", "")
    elif job.state == JobState.FAILED:
        section.errors = outcome(job).errors
    else:
        if not started:
            messages.info(request, _("This file is already being imported: here is that job."))
        return job_started(request, job)
    return _respond(request, section)


@project_permission(Permission.IMPORT_DOCUMENTS)
@post_from("import_page")
def import_documents(request: ProjectRequest, slug: str) -> HttpResponse:
    return _import_file(request, "documents")


@project_permission(Permission.IMPORT_QUERIES)
@post_from("import_page")
def import_queries(request: ProjectRequest, slug: str) -> HttpResponse:
    return _import_file(request, "queries")


@project_permission(Permission.POOL_CANDIDATES)
@post_from("import_page")
def import_candidates(request: ProjectRequest, slug: str) -> HttpResponse:
    title, help_text = SECTION_TEXT["candidates"]
    form = CandidateImportForm(
        request.POST, request.FILES, project=request.project, auto_id=_auto_id("candidates")
    )
    section = ImportSection(
        kind="candidates",
        title=title,
        help=help_text,
        form=form,
        action=reverse("import_candidates", kwargs={"slug": request.project.slug}),
    )
    if not form.is_valid():
        return _respond(request, section)
    files, blobs = [], []
    for upload in form.cleaned_data["files"]:
        data = upload_bytes(upload)
        files.append(
            [upload.name, detect_format(upload.name, form.cleaned_data["format"], kind="run"), len(data)]
        )
        blobs.append(data)
    data = b"".join(blobs)
    del blobs
    job, started = job_start(
        project=request.project,
        kind="pool_candidates",
        by=request.user,
        params={
            "set_id": form.cleaned_data["grading_set"].pk,
            "depth": form.cleaned_data["depth"],
            "files": files,
        },
        data=data,
        name=", ".join(name for name, _fmt, _size in files),
        inline=runs_inline("import", len(data)),
    )
    if job.state == JobState.DONE:
        section.summary = CandidateSummary(**job.result["summary"])
    elif job.state == JobState.FAILED:
        section.errors = outcome(job).errors
    else:
        if not started:
            messages.info(request, _("These files are already being pooled: here is that job."))
        return job_started(request, job)
    return _respond(request, section)
