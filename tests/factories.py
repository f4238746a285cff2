"""Every make_* helper of the tests: the objects of a project, in one call each, grouped by area.

Grades are written with the ORM (plus, for disputes, their `created` history entry) and then
`pair_settle_if_complete` is called, exactly what `grade_submit` does after saving a grade, so these
helpers do not depend on the grading pages; test_workflow.py goes through the real `grade_submit`.
The cast and `make_user` live in tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AbstractUser

from annotator.disputes.services import dispute_give_reason, dispute_revise, pair_settle_if_complete
from annotator.models import (
    Candidate,
    CandidateSource,
    CriteriaVersion,
    Dispute,
    Document,
    Grade,
    GradeHistory,
    GradingSet,
    Pool,
    PoolVersion,
    PoolVersionSource,
    Project,
    Query,
)
from annotator.pools.services import pool_version_create
from evaluation import metrics
from evaluation.comparisons import comparison_create
from evaluation.models import Comparison, Run
from evaluation.runs import run_upload

# Grading: documents, queries, sets and candidate pairs of a project, reused when they exist.


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


# Disputes: one pair, raw grades with their history, a dispute, a dispute waiting for a reviewer.


def make_pair(
    project: Project,
    *,
    query: str = "q1",
    document: str = "B",
    set_name: str = "Phone number change",
    required: int = 2,
) -> Candidate:
    grading_set, _ = GradingSet.objects.get_or_create(
        project=project, name=set_name, defaults={"required_grades": required}
    )
    q, _ = Query.objects.get_or_create(
        project=project,
        external_id=query,
        defaults={
            "text": f"The registration is submitted; how do I change the contact phone ({query})?",
            "information_need": "The entry point, the field and the deadline.",
        },
    )
    doc = Document.objects.filter(project=project, external_id=document).first()
    if doc is None:
        doc, _ = Document.upsert(
            project=project,
            external_id=document,
            title=f"Document {document}",
            body=f"How to request a change after submitting ({document}).",
        )
    candidate, _ = Candidate.objects.get_or_create(
        grading_set=grading_set, query=q, document=doc, defaults={"source": CandidateSource.MANUAL}
    )
    return candidate


def grade(candidate: Candidate, editor: AbstractBaseUser, value: int, reason: str = "") -> Grade:
    g = Grade.objects.create(
        candidate=candidate,
        editor=editor,
        grade=value,
        reason=reason,
        criteria_version=CriteriaVersion.objects.current_for(candidate.grading_set.project),
        document_version=candidate.document.current_version,
    )
    GradeHistory.objects.create(
        grade=g, changed_by=editor, kind=GradeHistory.Kind.CREATED, new_grade=value, new_reason=reason
    )
    pair_settle_if_complete(candidate=candidate)
    return g


def disputed_pair(
    project: Project,
    first: AbstractBaseUser,
    second: AbstractBaseUser,
    grades: tuple[int, int] = (2, 3),
    **kwargs: str,
) -> Dispute:
    candidate = make_pair(project, **kwargs)
    grade(candidate, first, grades[0])
    grade(candidate, second, grades[1])
    return Dispute.objects.get(candidate=candidate)


def in_review(
    project: Project,
    first: AbstractBaseUser,
    second: AbstractBaseUser,
    grades: tuple[int, int] = (2, 3),
    **kwargs: str,
) -> Dispute:
    """A dispute whose editors gave reasons and both kept their grades: waiting for a reviewer."""
    dispute = disputed_pair(project, first, second, grades, **kwargs)
    dispute_give_reason(
        dispute=dispute, editor=first, reason="Explains how to request a change but not the deadline."
    )
    dispute_give_reason(
        dispute=dispute, editor=second, reason="Gives the entry point and the field: enough to act."
    )
    dispute_revise(dispute=dispute, editor=first, grade=grades[0])
    dispute_revise(dispute=dispute, editor=second, grade=grades[1])
    dispute.refresh_from_db()
    return dispute


# Pools: graded sets, ready to freeze. `document` upserts: a new body makes a new version.


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


# Evaluation: pool versions, runs and comparisons; E9 is the contract's worked example
# (../shared/evaluation-contract.md), its expected figures are in tests/evaluation/comparisons/helpers.py.

E9_POOL = {"q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}}


def make_pool(
    project: Project, grades: dict[str, dict[str, int]], *, by: AbstractBaseUser, name: str = "Pool"
) -> PoolVersion:
    pool, _ = Pool.objects.get_or_create(project=project, name=name)
    rows = [(q, d, g, "unanimous") for q, docs in grades.items() for d, g in docs.items()]
    return pool_version_create(pool=pool, judgments=rows, source=PoolVersionSource.FROZEN, by=by)


def lists_text(rankings: dict[str, Iterable[str]]) -> str:
    return "".join(f"{q}: {', '.join(docs)}\n" for q, docs in rankings.items())


def make_run(
    project: Project,
    name: str,
    rankings: dict[str, Iterable[str]] | None = None,
    *,
    by: AbstractBaseUser,
    text: str | None = None,
    fmt: str = "lists",
    file_name: str = "pasted.txt",
) -> Run:
    data = text if text is not None else lists_text(rankings or {})
    return run_upload(
        project=project, name=name, notes="", fmt=fmt, file_name=file_name, data=data.encode(), by=by
    )


def make_comparison(
    project: Project, version: PoolVersion, run_a: Run, run_b: Run, *, by: AbstractBaseUser, **settings: Any
) -> Comparison:
    return comparison_create(
        project=project,
        pool_version=version,
        run_a=run_a,
        run_b=run_b,
        settings=metrics.Settings(**settings),
        by=by,
    )


def make_e9(project: Project, *, owner: AbstractBaseUser, reviewer: AbstractBaseUser) -> Comparison:
    """The contract's E9 / E10: run 甲 (C, A, D, B, E) against run 乙 (A, B, C, D, E), K = 3."""
    version = make_pool(project, E9_POOL, by=owner)
    a = make_run(project, "甲", {"q1": "CADBE"}, by=reviewer)
    b = make_run(project, "乙", {"q1": "ABCDE"}, by=reviewer)
    return make_comparison(project, version, a, b, by=reviewer, k=3)
