"""Blindness to the end of a query: the grading page settles pairs when their editor leaves the query.

A grade saved on the grading page never settles its pair nor opens its dispute there and then:
the row would tell the editor, pair by pair, whether they matched their colleague. A save that
completes a pair instead holds its query open for that editor (an `OpenQuery` row), and the
editor sees only "Saved", and may change or undo their grades there. The pairs of an open query
settle, or open their disputes, all at once (`query_grades_settle`, the same rule as ever:
`pair_settle_if_complete`):

- when the editor leaves the query: "Next query", another query's page, or any other page of
  the project (`LeaveOpenQueryMiddleware`, from the session's note of the open query);
- when the query has been idle for settings.GRADING_IDLE_SETTLE (the page says how long), on the
  next read by anyone of what settled pairs decide: the queue, set, dispute and agreement pages
  (`idle_settle`); a freeze settles every open query of its set first.

Until then a pending pair is "unfinished": agreement leaves it out (disputes/queries.py) and the
freeze page lists it among the pairs without a final grade, until the freeze settles it. Once
settled, a change goes through the dispute or a reviewer, as before. Code that grades without the
page (the demo) settles at once: `grade_submit(settle_now=True)`, the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from annotator.disputes.services import pair_settle_if_complete
from annotator.models import Candidate, FinalGrade, GradingSet, OpenQuery, Project

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The session's note of the query the editor has open: [set ID, query ID].
SESSION_KEY = "grading_open_query"


@dataclass(frozen=True)
class Settled:
    """What leaving one or more queries did: pairs given their final grade, disputes opened."""

    pairs: int = 0
    disputes: int = 0

    def __add__(self, other: Settled) -> Settled:
        return Settled(self.pairs + other.pairs, self.disputes + other.disputes)

    def __bool__(self) -> bool:
        return bool(self.pairs or self.disputes)


def query_hold_open(*, grading_set_id: int, query_id: int, editor: User) -> None:
    """Hold the query open for `editor` (its complete pairs wait for them), or note new activity:
    one statement, inside the save's transaction."""
    OpenQuery.objects.bulk_create(
        [
            OpenQuery(
                editor=editor, grading_set_id=grading_set_id, query_id=query_id, touched_at=timezone.now()
            )
        ],
        update_conflicts=True,
        unique_fields=["editor", "grading_set", "query"],
        update_fields=["touched_at"],
    )


def query_touch(*, grading_set_id: int, query_id: int, editor: User) -> None:
    """Note activity on an open query (a page read, a save, an undo), so the idle timeout counts from now."""
    OpenQuery.objects.filter(editor=editor, grading_set_id=grading_set_id, query_id=query_id).update(
        touched_at=timezone.now()
    )


@transaction.atomic
def query_grades_settle(*, grading_set_id: int, query_id: int, editor_id: int) -> Settled:
    """Settle, or open the disputes of, every complete pair of the query that `editor_id` graded,
    and close the query for them. The pairs are locked in key order, after the set's shared lock
    (the order of a grade save and a freeze), so two settles of one query, or a settle and a
    save, are serialised and none is settled twice."""
    GradingSet.objects.lock_shared(grading_set_id)
    OpenQuery.objects.filter(editor_id=editor_id, grading_set_id=grading_set_id, query_id=query_id).delete()
    waiting = (
        Candidate.objects.filter(
            grading_set_id=grading_set_id,
            query_id=query_id,
            grades__editor_id=editor_id,
            final_grade__isnull=True,
            dispute__isnull=True,
            grade_count__gte=F("grading_set__required_grades"),
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    # Locked first, in a statement of their own: under READ COMMITTED a row lock waited for is
    # re-read, but rows joined to it (a final grade a rival settle just added) are not; the
    # settle's own read, after the lock, then sees what the rival committed.
    locked = Candidate.objects.select_for_update().filter(pk__in=waiting).order_by("pk")
    settled = Settled()
    for pk in list(locked.values_list("pk", flat=True)):
        outcome = pair_settle_if_complete(candidate=Candidate(pk=pk))
        if isinstance(outcome, FinalGrade):
            settled += Settled(pairs=1)
        elif outcome is not None:
            settled += Settled(disputes=1)
    return settled


def open_queries_settle(open_queries: QuerySet[OpenQuery]) -> Settled:
    """Settle each of `open_queries`, one transaction per query."""
    total = Settled()
    rows = open_queries.order_by("pk").values_list("grading_set_id", "query_id", "editor_id")
    for set_id, query_id, editor_id in list(rows):
        total += query_grades_settle(grading_set_id=set_id, query_id=query_id, editor_id=editor_id)
    return total


def idle_settle(*, project: Project | None = None, grading_set: GradingSet | None = None) -> Settled:
    """Settle the open queries nobody has acted on for settings.GRADING_IDLE_SETTLE (one read
    when there are none): run before a page reads what settled pairs decide."""
    idle = OpenQuery.objects.filter(touched_at__lt=timezone.now() - settings.GRADING_IDLE_SETTLE)
    if project is not None:
        idle = idle.filter(grading_set__project=project)
    if grading_set is not None:
        idle = idle.filter(grading_set=grading_set)
    return open_queries_settle(idle)


def editor_leave(*, editor: User, project: Project, staying: tuple[int, int] | None = None) -> Settled:
    """Settle every query `editor` holds open in `project`, except `staying` = (set ID, query ID)."""
    held = OpenQuery.objects.filter(editor=editor, grading_set__project=project)
    if staying is not None:
        held = held.exclude(grading_set_id=staying[0], query_id=staying[1])
    return open_queries_settle(held)


def idle_minutes() -> int:
    """The idle timeout in whole minutes, as the grading page states it."""
    return int(settings.GRADING_IDLE_SETTLE.total_seconds() // 60)
