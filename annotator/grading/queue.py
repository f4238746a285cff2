"""Which pairs an editor is sent to, and in what order they see a query's pairs.

"Next" reserves the pairs it hands out for a while, so editors pressing it together are not all
sent to the pair that needs one more grade. The order is per editor and carries no system's rank.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone

from annotator.models import Candidate, GradingSet, Project, Query, Reservation

# How long "next" holds a pair for an editor before others may be sent to it.
RESERVATION_TTL = timedelta(minutes=20)


def shuffle_key(editor: User, candidate_id: int) -> str:
    """A stable per-editor order that carries no system's rank: hash of (editor, candidate)."""
    return hashlib.sha256(f"{editor.pk}:{candidate_id}".encode()).hexdigest()


def shuffled_for(editor: User, candidate_ids: Iterable[int]) -> list[int]:
    """The IDs in `editor`'s order: the same on every page of a query and after every save."""
    return sorted(candidate_ids, key=lambda pk: shuffle_key(editor, pk))


# --- the queue ---------------------------------------------------------------------------------


def queue_candidates(
    *,
    project: Project,
    editor: User,
    grading_set: GradingSet | None = None,
    set_ids: list[int] | None = None,
    filled: list[int] | None = None,
) -> QuerySet[Candidate]:
    """Pairs this editor could be sent to now: in an open set, unsettled, not graded by them, and
    with room left once the pair's grades and other editors' live reservations are counted.
    `set_ids` (the project's open sets) and `filled` (`_filled_by_reservations`): as read already
    in this request, so that a caller asking several times reads them once."""
    set_ids = project.set_ids(open_only=True) if set_ids is None else set_ids
    filled = _filled_by_reservations(editor, set_ids) if filled is None else filled
    qs = (
        # done=False: the pairs' counters (annotator/grading/counters.py) rule out the settled,
        # the disputed and the full ones, read from a partial index of the open pairs alone.
        Candidate.objects.filter(grading_set_id__in=set_ids, done=False)
        .filter(grading_set__is_open=True)
        .exclude(grades__editor=editor)
        .exclude(pk__in=filled)
        # No default order (grading set, query, document): it joins both tables into every count
        # and ID list made from this, even where it sorts nothing (3x slower at 600k pairs).
        # Callers that list pairs order them.
        .order_by()
    )
    if grading_set is not None:
        qs = qs.filter(grading_set=grading_set)
    return qs


def _filled_by_reservations(editor: User, set_ids: list[int]) -> list[int]:
    """Open pairs whose grades and other editors' live reservations leave no room, read first:
    reservations are few, so the queue's counts test a short list instead of counting
    reservations for each of a set's open pairs (an open pair has room: done=False).

    The live reservations are read on their own first, then their pairs by key: joined in one
    statement, PostgreSQL may scan a set's open pairs whole to meet a reservation table it
    believes large (its statistics lag a table that empties and fills all day); 140 ms at 540,000
    pairs for 400 reservations. Without reservations (the usual case) the pairs are not read."""
    held = dict(
        Reservation.objects.filter(expires_at__gt=timezone.now())
        .exclude(editor=editor)
        .values("candidate")
        .annotate(held=Count("pk"))
        .values_list("candidate", "held")
    )
    if not held:
        return []
    room = (
        Candidate.objects.filter(pk__in=list(held), grading_set_id__in=set_ids, done=False)
        .annotate(room=F("grading_set__required_grades") - F("grade_count"))
        .values_list("pk", "room")
    )
    return [pk for pk, left in room if held[pk] >= left]


@transaction.atomic
def queue_next(
    *, project: Project, editor: User, grading_set: GradingSet | None = None
) -> tuple[GradingSet, Query] | None:
    """The (set, query) with the most pairs this editor can still grade; reserves those pairs.

    Reservations stop other editors from being sent to the same pairs once the pairs have enough
    takers. On PostgreSQL the candidate rows are locked with SKIP LOCKED while reserving, so two
    editors pressing "next" at the same moment never both take the last free slot; the check is
    repeated after locking because a rival may have committed in between. SQLite serialises
    writers, which gives the same outcome more slowly.
    """
    now = timezone.now()
    Reservation.objects.filter(Q(editor=editor) | Q(expires_at__lte=now)).delete()
    set_ids = project.set_ids(open_only=True)
    filled = _filled_by_reservations(editor, set_ids)
    groups = (
        queue_candidates(
            project=project, editor=editor, grading_set=grading_set, set_ids=set_ids, filled=filled
        )
        .values("grading_set", "query")
        .annotate(n=Count("pk"))
        .order_by("-n", "grading_set__created_at", "grading_set", "query__external_id")
    )
    for group in groups[:25]:
        available = queue_candidates(project=project, editor=editor, set_ids=set_ids, filled=filled).filter(
            grading_set=group["grading_set"], query=group["query"]
        )
        locked = list(
            Candidate.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk__in=available.values("pk"))  # one statement: the pairs found and locked
            .values_list("pk", flat=True)
        )
        # Asked again after locking, reservations included (queue_candidates reads them when
        # called): a rival that reserved these pairs meanwhile has committed by now.
        fresh = queue_candidates(project=project, editor=editor, set_ids=set_ids)
        still_free = list(fresh.filter(pk__in=locked).values_list("pk", flat=True))
        if not still_free:
            continue
        Reservation.objects.bulk_create(
            [
                Reservation(candidate_id=pk, editor=editor, expires_at=now + RESERVATION_TTL)
                for pk in still_free
            ]
        )
        return (
            GradingSet.objects.get(pk=group["grading_set"]),
            Query.objects.get(pk=group["query"]),
        )
    return None
