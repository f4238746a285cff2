"""What happens when a pair has all its grades: a unanimous final grade, or a dispute."""

from __future__ import annotations

from django.db import transaction

from annotator.models import Candidate, CriteriaVersion, Dispute, DisputeStatement, FinalGrade, FinalSource


@transaction.atomic
def pair_settle_if_complete(*, candidate: Candidate) -> FinalGrade | Dispute | None:
    """Call after any grade of `candidate` is saved.

    Once the pair has its required number of grades from distinct editors: all equal -> a final
    grade with source `unanimous`; any difference -> a dispute (severity = max - min) waiting for
    every editor's reason. Does nothing while grades are missing or once settled/disputed.
    """
    candidate = Candidate.objects.select_for_update().select_related("grading_set").get(pk=candidate.pk)
    if FinalGrade.objects.filter(candidate=candidate).exists() or Dispute.objects.filter(candidate=candidate).exists():
        return None
    grades = list(candidate.grades.select_related("criteria_version").order_by("pk"))
    if len(grades) < candidate.grading_set.required_grades:
        return None
    values = [g.grade for g in grades]
    if len(set(values)) == 1:
        criteria = max((g.criteria_version for g in grades), key=lambda c: c.number)
        return FinalGrade.objects.create(
            candidate=candidate, grade=values[0], source=FinalSource.UNANIMOUS, criteria_version=criteria
        )
    dispute = Dispute.objects.create(candidate=candidate, severity=max(values) - min(values))
    DisputeStatement.objects.bulk_create(
        [DisputeStatement(dispute=dispute, editor=g.editor, original_grade=g.grade) for g in grades]
    )
    return dispute


def current_criteria(candidate: Candidate) -> CriteriaVersion:
    return CriteriaVersion.objects.current_for(candidate.grading_set.project)
