"""Benchmark of the grading side at a million grades (`make bench`; a script, not a test).

A small project (4,000 pairs) is seeded and its pages timed alone; then a big one (540,000 pairs,
about a million grades by 20 editors) is seeded beside it and both are timed in the same rounds,
so the last column says whether a big project slows a small one down. Each page is requested
through Django's test client, in-process, `--rounds` times after a warm-up; printed: p50 and p95
in ms, SQL statements, and p50 as a multiple of the login page's (which reads no database) in
the same rounds. No pass/fail thresholds: the figures go to tests/benchmarks/README.md.

Usage: .venv/bin/python tests/benchmarks/bench_grading.py [--big-queries 2700] [--rounds 7]
Set DATABASE_URL to measure on PostgreSQL (a test database is created and dropped, as pytest
does); SQLite in a temporary file otherwise.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

HTMX = {"HX-Request": "true"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-queries", type=int, default=2_700, help="x 200 pairs (default: 540,000 pairs)")
    parser.add_argument("--small-queries", type=int, default=20, help="x 200 pairs (default: 4,000 pairs)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="bench-grading-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        tmp.cleanup()


def run(args: argparse.Namespace) -> None:
    from django.db import connection

    from tests.benchmarks.grading_data import seed_project

    print(f"database: {connection.vendor}; {args.rounds} rounds per page after a warm-up")
    t = time.perf_counter()
    small = seed_project("small", queries=args.small_queries, seed=1, progress=lambda m: print("  small:", m))
    print(f"seeded the small project in {time.perf_counter() - t:.1f} s")
    settle_heap()
    alone = measure(small, args.rounds)
    t = time.perf_counter()
    big = seed_project("big", queries=args.big_queries, seed=2, progress=lambda m: print("  big:", m))
    print(f"seeded the big project in {time.perf_counter() - t:.1f} s")
    settle_heap()
    both_big, both_small = measure_pair(big, small, args.rounds)
    report(alone, both_big, both_small)


def settle_heap() -> None:
    """Collect what seeding left and freeze the rest out of the collector's view, so that the
    pages of both runs pay the same garbage collection, whatever the seeding held."""
    gc.collect()
    gc.freeze()


Timings = dict[str, tuple[list[float], int]]  # page -> (seconds per round, SQL statements)


def pages(seeded: Any) -> list[tuple[str, str, Callable[[Any], Any]]]:
    """(page, who, request) in the order printed; each request must answer as the page would."""
    from django.urls import reverse

    from annotator.disputes.models import Dispute, DisputeStatus
    from annotator.grading.models import Candidate
    from annotator.grading.queue import shuffled_for

    slug, grading_set = seeded.project.slug, seeded.grading_set
    query = seeded.queries[0]
    kw = {"slug": slug}
    set_kw = {**kw, "set_id": grading_set.pk}
    grade_page = reverse("grade_page", kwargs={**set_kw, "query_id": query})
    undo = reverse("grade_undo", kwargs={**set_kw, "query_id": query})
    # Pairs the editor graded that still wait for another grade: each POST changes the grade (a
    # real save, with its history row and the settle check), never a refusal of a locked pair.
    editor = seeded.editors[0]
    pairs = list(
        Candidate.objects.filter(grading_set=grading_set, done=False, grades__editor=editor)
        .select_related("query")
        .order_by("pk")[:50]
    )
    assert pairs, "the seeded set has no open pair graded by the first editor"
    # What the page's form sends with a grade besides it: the versions it showed, the query's
    # fingerprint and the row's number in the editor's order of the query.
    sent = {}
    for pair in pairs:
        order = shuffled_for(
            editor,
            Candidate.objects.filter(grading_set=grading_set, query=pair.query_id).values_list(
                "pk", flat=True
            ),
        )
        sent[pair.pk] = {
            "document_version": "1",
            "criteria_version": "1",
            "query_seen": pair.query.fingerprint,
            "position": str(order.index(pair.pk) + 1),
        }
    in_review = Dispute.objects.filter(
        candidate__grading_set=grading_set, status=DisputeStatus.IN_REVIEW
    ).first()
    assert in_review is not None
    state = {"round": 0}

    def grade_post(client: Any) -> Any:
        state["round"] += 1
        pair = pairs[state["round"] % len(pairs)].pk
        grade = str(1 + (state["round"] // len(pairs)) % 2)  # each visit to a pair changes its grade
        url = reverse("grade_save", kwargs={**set_kw, "candidate_id": pair})
        response = client.post(url, {"grade": grade, "reason": "", **sent[pair]}, headers=HTMX)
        assert '"state": "saved"' in response.headers.get("HX-Trigger-After-Settle", ""), "not saved"
        return response

    def get(url: str) -> Callable[[Any], Any]:
        return lambda client: client.get(url)

    return [
        ("login page (no database)", "anonymous", get(reverse("login"))),
        ("grading page, one query of 200 pairs", "editor", get(grade_page)),
        ("grade POST (htmx)", "editor", grade_post),
        ("undo (htmx)", "editor", lambda client: client.post(undo, {"page": "1"}, headers=HTMX)),
        ("My queue", "editor", get(reverse("grading_queue", kwargs=kw))),
        ("next (POST)", "editor", lambda client: client.post(reverse("grading_next", kwargs=kw))),
        ("owner's overview", "owner", get(reverse("project_detail", kwargs=kw))),
        ("set page", "owner", get(reverse("grading_set_detail", kwargs=set_kw))),
        ("review queue", "reviewer", get(reverse("dispute_queue", kwargs=kw))),
        ("disputes list", "reviewer", get(reverse("dispute_list", kwargs=kw))),
        (
            "dispute page",
            "reviewer",
            get(reverse("dispute_detail", kwargs={**kw, "dispute_id": in_review.pk})),
        ),
        ("documents list", "owner", get(reverse("document_list", kwargs=kw))),
        ("queries list", "owner", get(reverse("query_list", kwargs=kw))),
        ("agreement page", "reviewer", get(reverse("agreement_detail", kwargs=set_kw))),
        ("freeze page (preview)", "owner", get(reverse("pool_freeze", kwargs=set_kw))),
    ]


def clients(seeded: Any) -> dict[str, Any]:
    from django.test import Client

    out = {"anonymous": Client()}
    for who, user in (("editor", seeded.editors[0]), ("owner", seeded.owner), ("reviewer", seeded.reviewer)):
        client = Client()
        client.force_login(user)
        out[who] = client
    return out


def time_one(request: Callable[[Any], Any], client: Any) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        t = time.perf_counter()
        response = request(client)
        elapsed = time.perf_counter() - t
    if response.status_code not in (200, 302):
        raise SystemExit(f"{response.request['PATH_INFO']} answered {response.status_code}")
    return elapsed, len(queries)


def measure(seeded: Any, rounds: int) -> Timings:
    return measure_pair(seeded, None, rounds)[0]


def measure_pair(first: Any, second: Any | None, rounds: int) -> tuple[Timings, Timings]:
    """Each page of `first` (and `second`), interleaved round by round, so both see the same machine."""
    out: tuple[Timings, Timings] = ({}, {})
    plans = [(pages(first), clients(first))] + ([(pages(second), clients(second))] if second else [])
    for i in range(len(plans[0][0])):
        for (plan, who), timings in zip(plans, out, strict=False):
            name, role, request = plan[i]
            time_one(request, who[role])  # warm-up: caches, the connection, the first compile
            seconds: list[float] = []
            statements = 0
            for _ in range(rounds):
                elapsed, statements = time_one(request, who[role])
                seconds.append(elapsed)
            timings[name] = (seconds, statements)
    return out


def report(alone: Timings, big: Timings, small: Timings) -> None:
    def p50(s: list[float]) -> float:
        return statistics.median(s) * 1000

    def p95(s: list[float]) -> float:
        return sorted(s)[max(0, round(0.95 * len(s)) - 1)] * 1000

    base = "login page (no database)"
    print()
    print(
        "| page | big: p50 / p95 ms | SQL | x login "
        "| small beside big: p50 / p95 ms | SQL | small alone: p50 ms | beside / alone |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, (seconds, statements) in big.items():
        s_seconds, s_statements = small[name]
        a_seconds, _ = alone[name]
        print(
            f"| {name} | {p50(seconds):,.1f} / {p95(seconds):,.1f} | {statements} "
            f"| {p50(seconds) / p50(big[base][0]):,.1f} "
            f"| {p50(s_seconds):,.1f} / {p95(s_seconds):,.1f} | {s_statements} "
            f"| {p50(a_seconds):,.1f} | {p50(s_seconds) / p50(a_seconds):.2f} |"
        )


if __name__ == "__main__":
    main()
