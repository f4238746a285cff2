"""A tiny factory for dispute tests: pairs and raw grades, written the way the grading service does.

Grades are created with the ORM (plus their `created` history entry) and then
`pair_settle_if_complete` is called, exactly what `grade_submit` does after saving; one test in
test_workflow.py goes through the real `grade_submit` as well.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser

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
    Project,
    Query,
)


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
