"""Benchmark of the document import at scale (`make bench`; a script, not a test).

100,000 documents (short help-center-like bodies) through the same path as the upload page and
`manage.py import_documents`: read and validate the JSONL file, then store it all or nothing.
Then a re-import with 1% of the bodies changed (new versions, grades flagged stale) and one with
nothing changed. Prints times and rows per second; no pass/fail thresholds.

Usage: .venv/bin/python tests/benchmarks/bench_import_documents.py [--documents N]
Set DATABASE_URL to measure on PostgreSQL (the database named there is created and dropped by
Django's test-database machinery, like pytest does); SQLite in a temporary file otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="bench-import-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args.documents)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        tmp.cleanup()


def lines(n: int, changed_every: int = 0) -> bytes:
    out = []
    for i in range(n):
        body = f"文档 {i}：报名提交后，请在“我的报名”中修改联系电话。截止时间为活动开始前 48 小时。" * 3
        if changed_every and i % changed_every == 0:
            body += " 已更新。"
        out.append(
            json.dumps({"doc_id": f"doc-{i:06d}", "title": f"帮助文章 {i}", "body": body}, ensure_ascii=False)
        )
    return "\n".join(out).encode()


def run(n: int) -> None:
    from django.contrib.auth import get_user_model

    from annotator.documents.readers import read_documents
    from annotator.documents.services import documents_import
    from annotator.grading.services import grade_submit
    from annotator.models import (
        Candidate,
        CandidateSource,
        Document,
        Grade,
        GradingSet,
        Membership,
        Project,
        Query,
    )

    project = Project.objects.create(name="Bench", slug="bench")
    editor = get_user_model().objects.create_user("bench-editor")
    Membership.objects.create(project=project, user=editor, role="editor")
    print(f"== import_documents: {n:,} documents ({connection_vendor()})")

    data = lines(n)
    print(f"  file: {len(data) / 1e6:.1f} MB JSONL")
    start = time.perf_counter()
    records = read_documents(data, "jsonl")
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    summary = documents_import(project=project, records=records)
    store_s = time.perf_counter() - start
    print(
        f"  first import: read {read_s:.2f} s + store {store_s:.2f} s = {n / (read_s + store_s):,.0f} "
        f"documents/s (created {summary.created:,})"
    )

    # Grade a few hundred of them, so the re-import has grades to flag.
    grading_set = GradingSet.objects.create(project=project, name="Bench set")
    query = Query.objects.create(project=project, external_id="q1", text="?")
    docs = Document.objects.filter(project=project).order_by("external_id")[: min(n, 500)]
    for document in docs:
        candidate = Candidate.objects.create(
            grading_set=grading_set, query=query, document=document, source=CandidateSource.MANUAL
        )
        grade_submit(candidate=candidate, editor=editor, value=2)

    for label, every in (("1% changed", 100), ("the same file again: nothing changed", 100)):
        data = lines(n, changed_every=every)
        start = time.perf_counter()
        summary = documents_import(project=project, records=read_documents(data, "jsonl"))
        seconds = time.perf_counter() - start
        print(
            f"  re-import, {label}: {seconds:.2f} s = {n / seconds:,.0f} documents/s (updated "
            f"{summary.updated:,}, unchanged {summary.unchanged:,}, grades flagged {summary.stale_grades:,})"
        )
    print(f"  stale grades now: {Grade.objects.filter(stale=True).count():,}")


def connection_vendor() -> str:
    from django.db import connection

    return connection.vendor


if __name__ == "__main__":
    main()
