"""Two reviewers settle the same dispute at the same moment: one decision is stored, the other is told.

Needs real row locks, so PostgreSQL only (SQLite serialises whole-database writes instead).
Run with DATABASE_URL=postgres://... to include it.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from annotator.disputes import services as service
from annotator.disputes.services import AlreadySettled, dispute_settle
from annotator.models import Dispute, DisputeStatus, FinalGrade
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast
from tests.factories import in_review

pytestmark = postgres_only


def test_two_reviewers_settling_at_once_store_exactly_one_decision(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    real = service.criteria_of_grades

    def slow_criteria(candidate_id: Any) -> Any:
        # Hold the dispute's row lock a while, so the other reviewer surely arrives while it is held.
        time.sleep(0.3)
        return real(candidate_id)

    monkeypatch.setattr(service, "criteria_of_grades", slow_criteria)
    results = at_once(
        lambda: dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="Deadline missing."),
        lambda: dispute_settle(dispute=dispute, by=cast.owner, grade=3, note="Good enough."),
    )
    winners = [r for r in results if isinstance(r, FinalGrade)]
    losers = [r for r in results if isinstance(r, AlreadySettled)]
    assert len(winners) == 1 and len(losers) == 1, results
    stored = FinalGrade.objects.get(candidate=dispute.candidate)
    assert (stored.grade, stored.decided_by_id) == (winners[0].grade, winners[0].decided_by_id)
    # The loser learns who decided, and how.
    assert losers[0].final_grade.pk == stored.pk
    assert stored.decided_by.username in losers[0].message and f"grade {stored.grade}" in losers[0].message
    assert Dispute.objects.get(pk=dispute.pk).status == DisputeStatus.SETTLED


def test_two_reviewers_posting_the_settle_form_at_once_get_one_success_and_one_explanation(
    cast: Cast,
) -> None:
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (2, 3))
    url = reverse("dispute_review", kwargs={"slug": "alpha", "dispute_id": dispute.pk})

    def post_as(user: Any, grade: int) -> tuple[int, str]:
        client = Client()
        client.force_login(user)
        response = client.post(url, {"grade": str(grade), "note": "decided"})
        return response.status_code, response.content.decode()

    results = at_once(lambda: post_as(cast.reviewer, 2), lambda: post_as(cast.owner, 3))
    assert all(not isinstance(r, Exception) for r in results), results
    statuses = sorted(status for status, _ in results)
    assert statuses == [302, 409]
    stored = FinalGrade.objects.get(candidate=dispute.candidate)
    loser_html = next(html for status, html in results if status == 409)
    assert f"Already settled by {stored.decided_by.username}: grade {stored.grade}" in loser_html


def test_two_reviewers_re_checking_a_settled_pair_at_once_record_one_re_check(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotator.disputes import rechecks
    from annotator.disputes.rechecks import AlreadyRechecked, final_grade_recheck, recheck_token
    from annotator.documents.readers import DocumentRecord
    from annotator.documents.services import documents_import
    from annotator.models import FinalGradeRecheck, Grade
    from tests.factories import grade, make_pair

    candidate = make_pair(cast.alpha)
    grade(candidate, cast.editor, 2)
    grade(candidate, cast.editor2, 2)
    documents_import(project=cast.alpha, records=[DocumentRecord(line=1, external_id="B", body="New text.")])
    seen = recheck_token(candidate)
    real = rechecks.recheck_token

    def slow_token(c: Any) -> Any:
        # Hold the pair's row lock a while, so the other reviewer surely arrives while it is held.
        time.sleep(0.3)
        return real(c)

    monkeypatch.setattr(rechecks, "recheck_token", slow_token)
    results = at_once(
        lambda: final_grade_recheck(candidate=candidate, by=cast.reviewer, grade=2, seen=seen),
        lambda: final_grade_recheck(
            candidate=candidate, by=cast.owner, grade=1, note="Worse now.", seen=seen
        ),
    )
    winners = [r for r in results if isinstance(r, FinalGradeRecheck)]
    losers = [r for r in results if isinstance(r, AlreadyRechecked)]
    assert len(winners) == 1 and len(losers) == 1, results
    assert FinalGradeRecheck.objects.get().pk == winners[0].pk
    assert winners[0].reviewer.username in losers[0].message
    assert FinalGrade.objects.get(candidate=candidate).grade == winners[0].new_grade
    assert not Grade.objects.filter(candidate=candidate, stale=True).exists()
