"""The grading step of the demo: the seeds' query and documents, two open sets, no grades."""

from __future__ import annotations

import pytest

from annotator.demo import grading as demo_grading
from annotator.management.commands import demo
from annotator.models import Candidate, Document, DocumentVersion, Grade, GradingSet, Query


@pytest.fixture
def grading_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo, "DEMO_STEPS", [demo_grading.build])


def test_the_demo_has_the_seeds_query_documents_and_open_sets(db: None, grading_only: None) -> None:
    project = demo.build_demo()
    q1 = Query.objects.get(project=project, external_id="q1")
    assert q1.text == "报名已经提交，如何修改联系电话，是否有截止时间？"
    assert (
        "entry point, phone field, deadline" in q1.information_need
        and "修改入口、联系电话字段、截止时间" in q1.information_need
    )
    phone = GradingSet.objects.get(project=project, name="Phone number change")
    seed = GradingSet.objects.get(project=project, name="Seed 000")
    assert (phone.is_open, phone.required_grades, seed.is_open, seed.required_grades) == (True, 2, True, 2)
    assert sorted(
        Candidate.objects.filter(grading_set=phone).values_list("document__external_id", flat=True)
    ) == list("ABCDE")
    assert sorted(
        Candidate.objects.filter(grading_set=seed).values_list("document__external_id", flat=True)
    ) == ["J-A", "J-B", "J-C", "J-D"]
    a = Document.objects.get(project=project, external_id="A")
    assert "我的报名" in a.body and "联系电话" in a.body and "48 小时" in a.body  # entry, field, deadline
    assert "截止" not in Document.objects.get(project=project, external_id="B").body  # B has no deadline
    assert not Grade.objects.exists()


def test_running_the_demo_again_changes_nothing(db: None, grading_only: None) -> None:
    demo.build_demo()
    counts = (
        Document.objects.count(),
        DocumentVersion.objects.count(),
        Query.objects.count(),
        Candidate.objects.count(),
    )
    demo.build_demo()
    assert (
        Document.objects.count(),
        DocumentVersion.objects.count(),
        Query.objects.count(),
        Candidate.objects.count(),
    ) == counts
    assert counts == (9, 9, 2, 9)
