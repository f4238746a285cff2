"""Benchmark of the comparison pages at scale (`make bench`; a script, not a test).

A frozen pool of 10,000 queries x 100 graded documents and two 100-deep scored runs, through the
app's own services and views in a throwaway database:

- the first computation (`comparison_create`: hash check, both runs scored, the statistics,
  results stored) -- target <= 2 s;
- later page loads (summary, a filtered page of the per-query table, the worst query's
  breakdown), median of several -- target <= 200 ms each;
- the same data through pytrec-eval-terrier's `ndcg_cut.10`, for reference.

Usage: .venv/bin/python tests/benchmarks/bench_comparisons.py [--queries N] [--depth D]
Set DATABASE_URL to measure on PostgreSQL (the database named there is created and dropped by
Django's test-database machinery, like pytest does); SQLite in a temporary file otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[float, Any]:
    """(median seconds, last result) of `repeat` calls."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=5, help="page loads per page (median printed)")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="bench-comparisons-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    # A database of its own, created and destroyed like pytest-django does: never the dev data.
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    settings.DEBUG = False  # no per-query logging while timing
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        tmp.cleanup()


def run(args: argparse.Namespace) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotator.models import Membership, Pool, PoolVersionSource, Project, Role
    from annotator.pools.services import pool_version_create
    from evaluation import metrics
    from evaluation.comparisons import ComparisonResults, comparison_create
    from evaluation.runs import run_upload

    n_queries, depth, k = args.queries, args.depth, args.k
    rng = random.Random(2024)
    print(f"Pool: {n_queries:,} queries x {depth} judged documents; two {depth}-deep scored runs; K = {k}")

    user = get_user_model().objects.create_user("bench", password="x")
    project = Project.objects.create(name="Bench", slug="bench")
    Membership.objects.create(project=project, user=user, role=Role.REVIEWER)

    queries = [f"q{i:05d}" for i in range(n_queries)]
    docs = {q: [f"{q}-d{j:03d}" for j in range(depth)] for q in queries}
    judgments = [(q, d, rng.randint(0, 3), "bench") for q in queries for d in docs[q]]
    seconds, version = timed(
        lambda: pool_version_create(
            pool=Pool.objects.create(project=project, name="bench"),
            judgments=judgments,
            source=PoolVersionSource.IMPORTED,
            by=user,
        )
    )
    print(f"  setup: froze {len(judgments):,} judgments in {seconds:.2f} s")

    qrels = {
        q: {d: g for _q, d, g, _s in judgments[i * depth : (i + 1) * depth]} for i, q in enumerate(queries)
    }
    runs, scored = [], []
    for name in ("system-a", "system-b"):
        lines, per_query = [], {}
        for q in queries:
            ranking = rng.sample(docs[q], depth)
            per_query[q] = {d: float(depth - r) for r, d in enumerate(ranking)}
            lines.extend(f"{q} Q0 {d} {r + 1} {depth - r} {name}\n" for r, d in enumerate(ranking))
        data = "".join(lines).encode()
        seconds, run_object = timed(
            lambda data=data, name=name: run_upload(
                project=project,
                name=name,
                notes="",
                fmt="trec",
                file_name=f"{name}.run",
                data=data,
                by=user,
            )
        )
        print(
            f"  setup: uploaded {name} ({len(data) / 1e6:.1f} MB, {run_object.entry_count:,} rows) in "
            f"{seconds:.2f} s"
        )
        runs.append(run_object)
        scored.append(per_query)

    # scipy is imported lazily by the statistics; a server imports it once, not per comparison.
    import scipy.stats  # noqa: F401

    first, comparison = timed(
        lambda: comparison_create(
            project=project,
            pool_version=version,
            run_a=runs[0],
            run_b=runs[1],
            settings=metrics.Settings(k=k),
            by=user,
        )
    )
    verdict = "ok" if first <= 2.0 else "OVER TARGET"
    print(
        f"\nFirst computation (comparison_create, everything stored): {first:.3f} s   [target <= 2 s: "
        f"{verdict}]"
    )

    client = Client()
    client.force_login(user)
    worst = ComparisonResults(comparison.results).worst_query()
    pages = {
        "summary + first table page": comparison.get_absolute_url(),
        "table: regressions, page 3 (htmx)": comparison.get_absolute_url() + "?show=regressions&page=3",
        "breakdown of the worst query": reverse(
            "comparison_query", kwargs={"slug": project.slug, "comparison_id": comparison.pk}
        )
        + f"?query={worst}",
    }
    print(f"Later page loads (median of {args.repeat}):")
    for label, url in pages.items():
        headers = {"HX-Request": "true"} if "htmx" in label else {}
        client.get(url, headers=headers)  # warm the template cache
        seconds, response = timed(
            lambda url=url, headers=headers: client.get(url, headers=headers), args.repeat
        )
        assert response.status_code == 200, (url, response.status_code)
        verdict = "ok" if seconds <= 0.2 else "OVER TARGET"
        print(f"  {label:<36} {seconds * 1000:7.1f} ms   [target <= 200 ms: {verdict}]")

    try:
        import pytrec_eval
    except ImportError:
        print("\npytrec-eval-terrier is not installed: `pip install -e .[test]` for the reference figure.")
        return
    measure = f"ndcg_cut.{k}"
    seconds, _ = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, {measure}))
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {measure})
    both, per_run = timed(lambda: [evaluator.evaluate(s) for s in scored])
    print(
        f"\npytrec-eval-terrier, same data ({measure}, qrels already in memory): "
        f"evaluator {seconds:.3f} s + both runs {both:.3f} s = {seconds + both:.3f} s"
    )
    print(
        f"  ratio first computation / pytrec_eval: {first / (seconds + both):.1f}x (the app also checks the "
        "pool hash, parses the stored runs, runs the statistics and stores every number)"
    )
    key = f"ndcg_cut_{k}"
    shape = metrics.Results.from_dict(comparison.results)
    stored = dict(zip(shape.query_ids, shape.system("a").headline.per_query["ndcg"], strict=True))
    worst_gap = max(abs(stored[q] - per_run[0][q][key]) for q in queries)
    print(f"  largest per-query difference from pytrec_eval (run A): {worst_gap:.1e}")


if __name__ == "__main__":
    main()
