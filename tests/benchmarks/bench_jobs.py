"""Benchmark of background jobs (`make bench`; a script, not a test): a freeze of about a million
judgments and a 100,000-document import, run by a real worker process, beside editors grading;
then the frozen version's export, as a job too.

Printed, in one run: how long each request that starts a job takes to answer; each job's time on
the worker; and the grading page's and grade POST's p50/p95 with no job running and while the
jobs run, with the ratio. No pass/fail thresholds: the figures go to tests/benchmarks/README.md.

Usage: .venv/bin/python tests/benchmarks/bench_jobs.py [--queries 5900] [--documents 100000] [--rounds 15]
Set DATABASE_URL to a PostgreSQL server to measure there (a database `bench_jobs` is created and
dropped); SQLite in a temporary file otherwise. The worker is `manage.py db_worker`, in its own process.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
HTMX = {"HX-Request": "true"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--queries", type=int, default=5_900, help="x 200 pairs (default: ~1,000,000 final grades)"
    )
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory(prefix="bench-jobs-")
    url = os.environ.get("DATABASE_URL", "")
    admin = None
    if url.startswith("postgres"):
        import psycopg

        parts = urlsplit(url)
        admin = psycopg.connect(urlunsplit(parts._replace(path="/postgres")), autocommit=True)
        admin.execute("DROP DATABASE IF EXISTS bench_jobs WITH (FORCE)")
        admin.execute("CREATE DATABASE bench_jobs")
        url = urlunsplit(parts._replace(path="/bench_jobs"))
    else:
        url = f"sqlite:///{tmp.name}/bench.sqlite3"
    os.environ.update(
        DATABASE_URL=url,
        DJANGO_SETTINGS_MODULE="annotator.settings",
        DJANGO_JOB_INLINE_IMPORT_BYTES="0",
        DJANGO_JOB_INLINE_FREEZE_PAIRS="0",
        DJANGO_JOB_INLINE_EXPORT_JUDGMENTS="0",
    )
    try:
        run(args)
    finally:
        if admin is not None:
            admin.execute("DROP DATABASE IF EXISTS bench_jobs WITH (FORCE)")
        tmp.cleanup()


def run(args: argparse.Namespace) -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    from tests.benchmarks.grading_data import seed_project

    t = time.perf_counter()
    seeded = seed_project("big", queries=args.queries, seed=2, progress=lambda m: print("  seed:", m))
    print(f"database: {connection.vendor}; seeded {seeded.counts} in {time.perf_counter() - t:.0f} s")
    grading = grading_requests(seeded)

    quiet = measure(grading, args.rounds)

    owner = client_of(seeded.owner)
    freeze_url = f"/p/{seeded.project.slug}/pools/freeze/{seeded.grading_set.pk}/"
    page = owner.get(freeze_url).content.decode()
    seen = re.search(r'name="blockers_seen" value="([0-9a-f]*)"', page)
    form = {
        "confirm": "on",
        "exclude_unsettled": "on",
        "reason": "benchmark",
        "blockers_seen": seen.group(1) if seen else "",
    }
    t = time.perf_counter()
    response = owner.post(freeze_url, form)
    start_freeze = time.perf_counter() - t
    assert response.status_code == 302 and "/jobs/" in response["Location"], response.status_code
    docs = "doc_id,title,body\n" + "".join(
        f"bench-document-{i:08d},Title {i},{'Body text of a help-center article. ' * 12}{i}\n"
        for i in range(args.documents)
    )
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("documents.csv", docs.encode(), content_type="text/csv")
    t = time.perf_counter()
    response = owner.post(f"/p/{seeded.project.slug}/imports/documents/", {"file": upload, "format": ""})
    start_import = time.perf_counter() - t
    assert response.status_code == 302 and "/jobs/" in response["Location"], response.status_code

    from annotator.jobs.models import Job, JobState

    workers = [worker_process() for _ in range(2 if connection.vendor == "postgresql" else 1)]
    try:
        busy = measure(grading, args.rounds, while_=lambda: Job.objects.active().exists())
        while Job.objects.active().exists():
            time.sleep(0.5)
        # The frozen version's export, as a job too (its zip holds every judgment).
        from annotator.models import PoolVersion

        version = PoolVersion.objects.get(grading_set=seeded.grading_set)
        export_url = f"/p/{seeded.project.slug}/pools/{version.pool_id}/versions/{version.pk}/export/start/"
        t = time.perf_counter()
        response = owner.post(export_url, {"format": "qrels"})
        start_export = time.perf_counter() - t
        assert response.status_code == 302 and "/jobs/" in response["Location"], response.status_code
        while Job.objects.active().exists():
            time.sleep(0.5)
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(30)
    jobs = list(Job.objects.order_by("pk"))
    print()
    print(f"request that starts the freeze job:  {start_freeze * 1000:8.0f} ms")
    print(f"request that starts the import job:  {start_import * 1000:8.0f} ms ({len(docs) / 1e6:.0f} MB)")
    print(f"request that starts the export job:  {start_export * 1000:8.0f} ms")
    for job in jobs:
        took = (
            (job.finished_at - job.started_at).total_seconds() if job.finished_at and job.started_at else None
        )
        print(
            f"job {job.kind:18} {job.state:9} {took:8.1f} s on the worker"
            if took
            else f"job {job.kind} {job.state}"
        )
        assert job.state == JobState.DONE, (job.kind, job.errors, job.result)
    print()
    print(f"{'page':40} {'quiet p50/p95 ms':>18} {'with jobs p50/p95 ms':>22} {'p95 ratio':>10}")
    for name in quiet:
        q, b = quiet[name], busy[name]
        print(
            f"{name:40} {pct(q, 50):8.0f} / {pct(q, 95):6.0f} {pct(b, 50):11.0f} / {pct(b, 95):6.0f}"
            f" {pct(b, 95) / pct(q, 95):10.2f}"
        )
    print(f"(rounds with jobs running: {len(busy['grading page'])})")


def pct(values: list[float], p: int) -> float:
    return (
        1000 * statistics.quantiles(values, n=100, method="inclusive")[p - 1]
        if len(values) > 1
        else 1000 * values[0]
    )


def client_of(user: Any) -> Any:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def grading_requests(seeded: Any) -> dict[str, Any]:
    from django.urls import reverse

    from annotator.grading.models import Candidate

    editor = seeded.editors[0]
    client = client_of(editor)
    set_kw = {"slug": seeded.project.slug, "set_id": seeded.grading_set.pk}
    page_url = reverse("grade_page", kwargs={**set_kw, "query_id": seeded.queries[0]})
    pairs = list(
        Candidate.objects.filter(grading_set=seeded.grading_set, done=False, grades__editor=editor)
        .order_by("pk")
        .values_list("pk", flat=True)[:50]
    )
    state = {"round": 0}

    def grade_post() -> Any:
        state["round"] += 1
        pair = pairs[state["round"] % len(pairs)]
        grade = str(1 + (state["round"] // len(pairs)) % 2)
        url = reverse("grade_save", kwargs={**set_kw, "candidate_id": pair})
        return client.post(url, {"grade": grade, "reason": "", "document_version": "1"}, headers=HTMX)

    return {"grading page": lambda: client.get(page_url), "grade POST (htmx)": grade_post}


def measure(requests: dict[str, Any], rounds: int, while_: Any = None) -> dict[str, list[float]]:
    """Seconds per round of each request; with `while_`, only rounds while it holds (up to `rounds`)."""
    for request in requests.values():
        request()  # warm-up
    times: dict[str, list[float]] = {name: [] for name in requests}
    for _ in range(rounds):
        if while_ is not None and not while_():
            break
        for name, request in requests.items():
            t = time.perf_counter()
            response = request()
            times[name].append(time.perf_counter() - t)
            assert response.status_code == 200, (name, response.status_code)
    return times


def worker_process() -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "manage.py",
        "db_worker",
        "--no-reload",
        "--no-startup-delay",
        "--interval",
        "0.1",
    ]
    return subprocess.Popen(
        command, cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


if __name__ == "__main__":
    main()
