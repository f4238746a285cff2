"""Tiny factories for grading tests: documents, queries, sets and candidate pairs of a project."""

from __future__ import annotations

from annotator.models import Candidate, CandidateSource, Document, GradingSet, Project, Query


def make_document(project: Project, external_id: str, body: str = "", title: str = "") -> Document:
    """The project's document with this ID (as it is), else a new one."""
    existing = Document.objects.filter(project=project, external_id=external_id).first()
    if existing is not None:
        return existing
    document, _ = Document.upsert(
        project=project,
        external_id=external_id,
        title=title or f"Title {external_id}",
        body=body or f"The body of document {external_id}.",
    )
    return document


def make_query(project: Project, external_id: str = "q1", text: str = "", need: str = "") -> Query:
    query, _ = Query.objects.get_or_create(
        project=project,
        external_id=external_id,
        defaults={
            "text": text or f"How do I change my phone number? ({external_id})",
            "information_need": need or "entry point, phone field, deadline",
        },
    )
    return query


def make_set(project: Project, name: str = "Set", required: int = 2, is_open: bool = True) -> GradingSet:
    grading_set, _ = GradingSet.objects.get_or_create(
        project=project, name=name, defaults={"required_grades": required, "is_open": is_open}
    )
    return grading_set


def make_pairs(
    project: Project,
    docs: str | list[str] = "ABCDE",
    *,
    query: str = "q1",
    set_name: str = "Set",
    required: int = 2,
    source: str = CandidateSource.MANUAL,
    source_detail: str = "",
) -> list[Candidate]:
    grading_set = make_set(project, set_name, required)
    q = make_query(project, query)
    return [
        Candidate.objects.get_or_create(
            grading_set=grading_set,
            query=q,
            document=make_document(project, d),
            defaults={"source": source, "source_detail": source_detail},
        )[0]
        for d in docs
    ]
