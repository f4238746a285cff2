"""The grading side's hot pages read by index on PostgreSQL: no plan reads a whole big table.

A few thousand pairs are enough: with `enable_seqscan` off, PostgreSQL still scans a whole table
where no index can answer the query, and that is what these tests catch (the plan of a page at a
million grades is then the same shape, only larger). Each page's statements are captured as the
app sends them and each SELECT is explained.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.grading.models import Candidate, Grade
from tests.benchmarks.grading_data import Seeded, seed_project

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="reads PostgreSQL's plans"),
]

# The tables that grow with the grades: a plan must reach their rows through an index.
BIG_TABLES = {"annotator_grade", "annotator_candidate", "annotator_gradehistory"}
HTMX = {"HX-Request": "true"}


@pytest.fixture
def seeded(db: None) -> Seeded:
    seed_project("beside", queries=10, pairs_per_query=100, editors=6, seed=3)  # another project
    return seed_project("plans", queries=30, pairs_per_query=100, editors=6, seed=4)


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def scans(node: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(node type, table) of every plan node that reads a table."""
    if "Relation Name" in node:
        yield node["Node Type"], node["Relation Name"]
    for child in node.get("Plans", []):
        yield from scans(child)


def whole_table_reads(request: Callable[[], Any]) -> tuple[list[str], int]:
    """Run `request`; return the big tables its SELECTs scan whole, and how many statements it sent."""
    with CaptureQueriesContext(connection) as captured:
        response = request()
    assert response.status_code in (200, 302), response.status_code
    found = []
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            for query in captured.captured_queries:
                sql = query["sql"]
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
                plan = cursor.fetchone()[0]
                plan = json.loads(plan) if isinstance(plan, str) else plan
                found += [
                    f"{table}: {sql[:300]}"
                    for kind, table in scans(plan[0]["Plan"])
                    if kind == "Seq Scan" and table in BIG_TABLES
                ]
        finally:
            cursor.execute("SET enable_seqscan = on")
    return found, len(captured)


def test_the_grading_page_the_grade_post_and_undo_read_by_index(seeded: Seeded) -> None:
    editor = client_for(seeded.editors[0])
    kw = {"slug": seeded.project.slug, "set_id": seeded.grading_set.pk, "query_id": seeded.queries[0]}
    pair = Candidate.objects.filter(grading_set=seeded.grading_set, query_id=seeded.queries[0]).first()
    assert pair is not None
    save = reverse("grade_save", kwargs={**{k: kw[k] for k in ("slug", "set_id")}, "candidate_id": pair.pk})

    page, statements = whole_table_reads(lambda: editor.get(reverse("grade_page", kwargs=kw)))
    assert page == [] and statements <= 16
    post, statements = whole_table_reads(
        lambda: editor.post(save, {"grade": "2", "document_version": "1"}, headers=HTMX)
    )
    assert post == []
    undo, _ = whole_table_reads(lambda: editor.post(reverse("grade_undo", kwargs=kw), headers=HTMX))
    assert undo == []


def test_the_queue_next_and_the_set_page_read_by_index(seeded: Seeded) -> None:
    editor = client_for(seeded.editors[1])
    kw = {"slug": seeded.project.slug}
    queue, _ = whole_table_reads(lambda: editor.get(reverse("grading_queue", kwargs=kw)))
    assert queue == []
    found, _ = whole_table_reads(lambda: editor.post(reverse("grading_next", kwargs=kw)))
    assert found == []
    owner = client_for(seeded.owner)
    set_page, _ = whole_table_reads(
        lambda: owner.get(reverse("grading_set_detail", kwargs={**kw, "set_id": seeded.grading_set.pk}))
    )
    assert set_page == []


def test_the_overview_and_the_review_queue_read_by_index(seeded: Seeded) -> None:
    kw = {"slug": seeded.project.slug}
    overview, _ = whole_table_reads(
        lambda: client_for(seeded.owner).get(reverse("project_detail", kwargs=kw))
    )
    assert overview == []
    reviewer = client_for(seeded.reviewer)
    review, _ = whole_table_reads(lambda: reviewer.get(reverse("dispute_queue", kwargs=kw)))
    assert review == []


def test_a_read_no_index_can_answer_is_caught(seeded: Seeded) -> None:
    """The check itself: grades filtered by their reason text have no index to go through."""
    found, statements = whole_table_reads(
        lambda: SimpleNamespace(status_code=200, n=Grade.objects.filter(reason="x").count())
    )
    assert statements == 1
    assert len(found) == 1 and found[0].startswith("annotator_grade: SELECT COUNT(*)")
