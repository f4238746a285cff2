"""A tiny factory for graded sets: documents, queries, candidates, grades and what follows them.

Grades are written with the ORM plus `pair_settle_if_complete` (the grading service calls the
same function after every saved grade), so these tests do not depend on the grading pages.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser

from annotator.disputes.services import pair_settle_if_complete
from annotator.models import (
    Candidate,
    CandidateSource,
    CriteriaVersion,
    Document,
    Grade,
    GradingSet,
    Project,
    Query,
)


def document(project: Project, external_id: str, body: str = "") -> Document:
    doc, _ = Document.upsert(
        project=project,
        external_id=external_id,
        title=f"Document {external_id}",
        body=body or f"Body of {external_id}.",
    )
    return doc


def query(project: Project, external_id: str) -> Query:
    return Query.objects.get_or_create(
        project=project, external_id=external_id, defaults={"text": f"Question {external_id}?"}
    )[0]


def graded_set(
    project: Project,
    editors: tuple[AbstractUser, AbstractUser],
    grades: dict[tuple[str, str], tuple[int | None, int | None]],
    *,
    name: str = "Set",
    source: str = CandidateSource.POOLED,
    source_detail: str = "run bm25.trec, depth 10",
) -> GradingSet:
    """One candidate per (query, document); each editor's grade (None: not graded yet)."""
    grading_set = GradingSet.objects.create(project=project, name=name, required_grades=2)
    criteria = CriteriaVersion.objects.current_for(project)
    for (qid, did), pair in grades.items():
        doc = document(project, did)
        candidate = Candidate.objects.create(
            grading_set=grading_set,
            query=query(project, qid),
            document=doc,
            source=source,
            source_detail=source_detail,
        )
        grade_pair(candidate, editors, pair, criteria)
    return grading_set


def grade_pair(
    candidate: Candidate,
    editors: tuple[AbstractUser, AbstractUser],
    pair: tuple[int | None, int | None],
    criteria: CriteriaVersion | None = None,
) -> None:
    criteria = criteria or CriteriaVersion.objects.current_for(candidate.grading_set.project)
    for editor, value in zip(editors, pair, strict=True):
        if value is not None:
            Grade.objects.create(
                candidate=candidate,
                editor=editor,
                grade=value,
                criteria_version=criteria,
                document_version=candidate.document.current_version,
            )
    pair_settle_if_complete(candidate=candidate)
