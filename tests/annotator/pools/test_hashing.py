"""The SHA-256 of a pool version is the documented one, whatever the database or insertion order."""

from __future__ import annotations

import hashlib

import pytest

from annotator.models import Pool, PoolVersion, PoolVersionSource
from annotator.pools.models import canonical_serialisation
from annotator.pools.services import pool_version_create
from tests.conftest import Cast

# Deliberately unsorted, with case, digits, a space inside an ID and non-ASCII IDs.
ROWS = [("q2", "doc-10", 1), ("查询", "é", 2), ("q10", "doc-2", 3), ("Q1", "a b", 2), ("q10", "doc-10", 0)]
# The documented serialisation written out by hand: code point order, TAB-separated, LF-terminated.
DOCUMENTED = "Q1\ta b\t2\nq10\tdoc-10\t0\nq10\tdoc-2\t3\nq2\tdoc-10\t1\n查询\té\t2\n"
# `printf 'Q1\ta b\t2\nq10\tdoc-10\t0\nq10\tdoc-2\t3\nq2\tdoc-10\t1\n查询\té\t2\n' | sha256sum` (coreutils):
# the same literal on SQLite and PostgreSQL runs ties the two databases to one digest.
SHA256SUM = "b41ff05b19ad286d065c83b1a977ac3c918b807dcc7901a9217d7b49459677ba"


def test_the_canonical_serialisation_is_the_documented_text() -> None:
    assert canonical_serialisation(ROWS) == DOCUMENTED
    assert hashlib.sha256(DOCUMENTED.encode("utf-8")).hexdigest() == SHA256SUM


@pytest.mark.parametrize("order", ["as given", "reversed"])
def test_a_stored_version_hashes_to_the_independently_computed_digest(cast: Cast, order: str) -> None:
    rows = ROWS if order == "as given" else ROWS[::-1]
    pool = Pool.objects.create(project=cast.alpha, name="Hash")
    created = pool_version_create(
        pool=pool,
        judgments=[(*r, "unanimous") for r in rows],
        source=PoolVersionSource.FROZEN,
        by=cast.reviewer,
    )
    stored = PoolVersion.objects.get(pk=created.pk)  # read back through this run's database
    assert stored.sha256 == hashlib.sha256(DOCUMENTED.encode("utf-8")).hexdigest() == SHA256SUM
    assert stored.canonical == DOCUMENTED
    assert stored.judgments_by_query() == {
        "Q1": {"a b": 2},
        "q10": {"doc-10": 0, "doc-2": 3},
        "q2": {"doc-10": 1},
        "查询": {"é": 2},
    }
    assert stored.integrity_problems() == []


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([("q1", "A", 4)], "not an integer 0..3"),
        ([("q1", "A", -1)], "not an integer 0..3"),
        ([("q1", "A", True)], "not an integer 0..3"),
        ([("q1", "A", 2.0)], "not an integer 0..3"),
        ([("q1", "A", 1), ("q1", "A", 2)], "appears twice"),
        ([("q1", "A\tB", 1)], "a tab, a line break"),
        # The readers' rule: a version holding one of these could not read its own export back.
        ([("q1", "A\x85B", 1)], "control character"),
        ([("q1\u2028", "A", 1)], "line break"),
        ([("q1", "\ufeffA", 1)], "byte-order mark"),
        ([("q1", "A\x1fB", 1)], "control character"),
        ([(" q1", "A", 1)], "padded"),
        ([("", "A", 1)], "empty"),
    ],
)
def test_a_version_refuses_what_the_serialisation_cannot_hold(cast: Cast, rows: list, message: str) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Bad")
    with pytest.raises(ValueError, match=message):
        pool_version_create(pool=pool, judgments=[(*r, "") for r in rows], source="frozen", by=cast.reviewer)
    assert not PoolVersion.objects.filter(pool=pool).exists()
