"""Which raw grades of a set a viewer may count in agreement figures: the timeline's blindness rules.

Reviewers and owners grade too, so a figure must not give them grades they may not see yet: a
pair still being graded stays out (the viewer may be asked to grade it next), and so does a pair
the viewer graded until it is settled or its dispute revealed. Subqueries, not ID lists: a large
set early in grading has thousands of incomplete pairs, more than SQLite takes in one list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from annotator.disputes.models import REVEALED_STATUSES
from annotator.grading.models import CandidateQuerySet
from annotator.models import Candidate, Grade, GradingSet

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def unfinished_pairs(grading_set: GradingSet) -> CandidateQuerySet:
    """Pairs with a grade but neither a final grade nor a dispute (an ungraded pair hides nothing)."""
    return Candidate.objects.filter(
        Exists(Grade.objects.filter(candidate=OuterRef("pk"))),
        grading_set=grading_set,
        final_grade__isnull=True,
        dispute__isnull=True,
    )


def incomplete_pairs(grading_set: GradingSet) -> CandidateQuerySet:
    """Pairs left out for every viewer: an open set's unfinished ones.

    A closed set's unfinished pairs get no more grades there, so the grades they have count (left
    out, they would stay "still being graded" for good), except for whoever graded them.
    """
    return unfinished_pairs(grading_set) if grading_set.is_open else Candidate.objects.none()


def blind_pairs(grading_set: GradingSet, viewer: User) -> QuerySet[Grade, Any]:
    """The pairs `viewer` graded and may not see the others' grades of yet (`candidate_id` rows):
    not settled, and disputed but not revealed; in a closed set, also unfinished, since who graded
    them may grade them blind again if they come back in a later set."""
    waiting = Q(candidate__dispute__isnull=False) & ~Q(candidate__dispute__status__in=REVEALED_STATUSES)
    if not grading_set.is_open:
        waiting |= Q(candidate__dispute__isnull=True)
    return (
        Grade.objects.filter(candidate__grading_set=grading_set, editor=viewer)
        .filter(candidate__final_grade__isnull=True)
        .filter(waiting)
        .values("candidate_id")
    )


def counted_grades(grading_set: GradingSet, viewer: User) -> QuerySet[Grade, tuple[int, int, int, int]]:
    """(pair, editor, grade, query) of every raw grade `viewer` may count, unordered: the default
    order joins queries and documents to sort what may be a million grades."""
    return (
        Grade.objects.filter(candidate__grading_set=grading_set)
        .exclude(candidate_id__in=incomplete_pairs(grading_set).values("pk"))
        .exclude(candidate_id__in=blind_pairs(grading_set, viewer))
        .order_by()
        .values_list("candidate_id", "editor_id", "grade", "candidate__query_id")
    )
