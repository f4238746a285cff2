"""Helpers for race tests, which need real row locks and so run on PostgreSQL only."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, connections

# SQLite serialises whole-database writes, so a race cannot even be staged there.
postgres_only = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="needs PostgreSQL row locks; SQLite serialises writers"
    ),
    pytest.mark.django_db(transaction=True),
]


def at_once(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls in threads released together (each with its own database connection).

    Returns each call's result, or the exception it raised, for the test to inspect.
    """
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[i] = call()
        except Exception as exc:  # noqa: BLE001 -- the test inspects what each thread got
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results
