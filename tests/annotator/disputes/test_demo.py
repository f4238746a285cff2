"""The demo's disputes step: the seeds' B dispute waits for the reviewer; running it again changes nothing."""

from __future__ import annotations

import pytest

from annotator.demo import disputes as demo_disputes
from annotator.demo import grading as demo_grading
from annotator.management.commands import demo
from annotator.models import Dispute, DisputeStatus, FinalGrade, FinalSource, Grade, GradeHistory


def counts() -> tuple[int, ...]:
    return (
        Grade.objects.count(),
        GradeHistory.objects.count(),
        Dispute.objects.count(),
        FinalGrade.objects.count(),
    )


def test_the_demo_leaves_b_in_review_with_both_reasons_and_everything_else_unanimous(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "DEMO_STEPS", [demo_grading.build, demo_disputes.build])
    project = demo.build_demo()
    dispute = Dispute.objects.get(
        candidate__grading_set__project=project, candidate__document__external_id="B"
    )
    assert dispute.status == DisputeStatus.IN_REVIEW and dispute.severity == 1
    sides = {s.editor.username: s for s in dispute.statements.select_related("editor")}
    assert (sides["editor-a"].original_grade, sides["editor-b"].original_grade) == (2, 3)
    assert "没有截止时间" in sides["editor-a"].reason and "deadline" in sides["editor-a"].reason
    assert sides["editor-b"].has_reason
    finals = {
        (f.candidate.grading_set.name, f.candidate.document.external_id): (f.grade, f.source)
        for f in FinalGrade.objects.select_related("candidate__document", "candidate__grading_set")
    }
    assert finals == {
        ("Phone number change", "A"): (3, FinalSource.UNANIMOUS),
        ("Phone number change", "C"): (1, FinalSource.UNANIMOUS),
        ("Phone number change", "D"): (0, FinalSource.UNANIMOUS),
        ("Phone number change", "E"): (0, FinalSource.UNANIMOUS),
        ("Seed 000", "J-A"): (3, FinalSource.UNANIMOUS),
        ("Seed 000", "J-B"): (2, FinalSource.UNANIMOUS),
        ("Seed 000", "J-C"): (1, FinalSource.UNANIMOUS),
        ("Seed 000", "J-D"): (0, FinalSource.UNANIMOUS),
    }
    before = counts()
    demo.build_demo()
    assert counts() == before


def test_the_whole_demo_with_the_later_steps_runs_twice_without_changes(db: None) -> None:
    demo.build_demo()
    before = counts()
    demo.build_demo()
    assert counts() == before
    # Later steps (pools) may settle B as the reviewer; the disputes step only leaves it in review.
    dispute = Dispute.objects.get(candidate__document__external_id="B")
    assert dispute.status in (DisputeStatus.IN_REVIEW, DisputeStatus.SETTLED)
