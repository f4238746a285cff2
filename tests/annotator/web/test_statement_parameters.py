"""No statement takes a parameter per row of the data: SQLite refuses more than 32,766 in one.

Continuing a large frozen version, importing pairs of more than 32,766 queries, re-importing as
many changed queries or pasting as many document IDs would otherwise end in "too many SQL
variables" (a 500). Each flow reads by subquery or in chunks of ID_LIST_CHUNK IDs. The tests
shrink the chunk and run each flow at two sizes: the largest statement must not grow with the
data. Bulk writes (INSERT, and bulk_update's CASE) are left out: Django sizes their batches by
the database's own limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection

from annotator.documents import models as documents_module
from annotator.documents.readers import QueryRecord
from annotator.documents.services import queries_import
from annotator.grading.forms import CandidateAddForm
from annotator.grading.pooling import PooledPair
from annotator.grading.services import candidates_add
from annotator.models import Candidate, Grade, GradingSet, Query, StaleReason
from annotator.pools.freeze import pool_freeze
from annotator.pools.services import grading_set_create_from_version
from tests import factories
from tests.conftest import Cast

SIZES = (5, 50)  # one full chunk, then ten


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(documents_module, "ID_LIST_CHUNK", SIZES[0])


@contextmanager
def largest_statement() -> Iterator[list[int]]:
    """Yields a list that ends up holding the most parameters any read or plain write took."""
    seen = [0]

    def record(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
        bulk = sql.lstrip().upper().startswith("INSERT") or " CASE WHEN " in sql.upper()
        if params is not None and not many and not bulk:
            seen[0] = max(seen[0], len(params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        yield seen


def test_continuing_a_version_reads_its_queries_and_documents_by_subquery(cast: Cast) -> None:
    largest = []
    for n in SIZES:
        grades = {(f"q{i % 3}-{n}", f"d{i}-{n}"): (i % 4, i % 4) for i in range(n)}
        version = pool_freeze(
            grading_set=factories.graded_set(
                cast.alpha, (cast.editor, cast.editor2), grades, name=f"Set {n}"
            ),
            by=cast.reviewer,
        )
        with largest_statement() as seen:
            copy = grading_set_create_from_version(version=version, by=cast.reviewer)
        assert Candidate.objects.filter(grading_set=copy).count() == n
        largest.append(seen[0])
    assert largest[0] == largest[1] < SIZES[1]


def test_importing_pairs_looks_their_queries_and_documents_up_in_chunks(cast: Cast) -> None:
    largest = []
    for n in SIZES:
        for i in range(n):
            factories.query(cast.alpha, f"q{i}-{n}")
            factories.document(cast.alpha, f"d{i}-{n}")
        grading_set = GradingSet.objects.create(project=cast.alpha, name=f"Set {n}")
        pairs = [PooledPair(query_id=f"q{i}-{n}", doc_id=f"d{i}-{n}", line=i + 1) for i in range(n)]
        with largest_statement() as seen:
            summary = candidates_add(grading_set=grading_set, pairs=pairs, by=cast.owner)
        assert summary.added == n and summary.queries == n
        largest.append(seen[0])
    assert largest[0] == largest[1] < SIZES[1]


def test_reimporting_changed_queries_flags_their_grades_in_chunks(cast: Cast) -> None:
    largest = []
    for n in SIZES:
        grades = {(f"q{i}-{n}", f"d{i}-{n}"): (1, None) for i in range(n)}  # one grade each, unsettled
        factories.graded_set(cast.alpha, (cast.editor, cast.editor2), grades, name=f"Set {n}")
        records = [QueryRecord(line=i + 1, external_id=f"q{i}-{n}", text=f"Reworded {i}?") for i in range(n)]
        with largest_statement() as seen:
            summary = queries_import(project=cast.alpha, records=records)
        assert summary.updated == n and summary.stale_grades == n
        assert Grade.objects.filter(candidate__query__external_id__endswith=f"-{n}", stale=True).count() == n
        largest.append(seen[0])
    assert largest[0] == largest[1] < SIZES[1]
    assert set(Grade.objects.values_list("stale_reason", flat=True)) == {StaleReason.QUERY.value}


def test_a_pasted_list_of_document_ids_is_looked_up_in_chunks(cast: Cast) -> None:
    query = factories.query(cast.alpha, "q1")
    largest = []
    for n in SIZES:
        ids = [factories.document(cast.alpha, f"d{i}-{n}").external_id for i in range(n)]
        form = CandidateAddForm(
            {"query_id": query.external_id, "doc_ids": "\n".join([*ids, "nowhere"])}, project=cast.alpha
        )
        with largest_statement() as seen:
            assert not form.is_valid()
        assert "nowhere" in form.errors["doc_ids"][0] and f"d0-{n}" not in form.errors["doc_ids"][0]
        largest.append(seen[0])
    assert largest[0] == largest[1] < SIZES[1]
    assert Query.objects.count() == 1
