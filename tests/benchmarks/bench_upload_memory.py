"""Peak memory of every upload path (`make bench`; a script, not a test).

Posts a file of each kind (documents, queries, candidates, runs and pool files, in each of their
formats: tests/benchmarks/upload_data.py) through the whole Django stack and prints tracemalloc's
peak over the request, and its ratio to the file's size (the target: at most 4x). Files above
FILE_UPLOAD_MAX_MEMORY_SIZE (10 MB) are spooled to disk by Django before the view reads them.

Usage: .venv/bin/python tests/benchmarks/bench_upload_memory.py [--megabytes N] [--only TEXT]
Set DATABASE_URL to measure on PostgreSQL; SQLite in a temporary file otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=5)
    parser.add_argument("--only", default="", help="only the paths whose name holds this text")
    args = parser.parse_args()

    tmp = tempfile.TemporaryDirectory(prefix="bench-upload-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp.name}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment(debug=False)  # as pytest-django runs: DEBUG on logs every statement with its bytes
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(int(args.megabytes * 1_000_000), args.only)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
        tmp.cleanup()


def run(size: int, only: str) -> None:
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from django.urls import reverse

    from annotator.models import GradingSet, Membership, Project, Role
    from tests.benchmarks.upload_data import PATHS, add_run_ids, post_peak

    owner = get_user_model().objects.create_user("bench-owner")
    print(f"{'path':<20} {'file MB':>8} {'peak MB':>8} {'ratio':>6}  status")
    for number, (kind, path) in enumerate(PATHS.items()):
        if only not in kind:
            continue
        project = Project.objects.create(name=f"Bench {number}", slug=f"bench-{number}")
        Membership.objects.create(project=project, user=owner, role=Role.OWNER)
        client = Client()
        client.force_login(owner)
        url = reverse(path.url, kwargs={"slug": project.slug})
        fields = dict(path.fields)
        # Queries are upserted one by one, which tracemalloc slows a great deal: a fifth of the size.
        data = path.make(size // 5 if kind.startswith("queries") else size)
        if path.url == "import_candidates":
            add_run_ids(project, data, path.file_name)
            fields["grading_set"] = GradingSet.objects.create(project=project, name="Warm-up").pk
        # A small upload first: modules and templates load once per process.
        warm = fields | {"name": "warm-up", "pool_name": "Warm-up"}
        post_peak(client, url, warm | {path.field: SimpleUploadedFile(path.file_name, path.make(5_000))})
        if path.url == "import_candidates":
            fields["grading_set"] = GradingSet.objects.create(project=project, name="Measured").pk
        response, peak = post_peak(
            client, url, fields | {path.field: SimpleUploadedFile(path.file_name, data)}
        )
        refused = b"errorlist" in response.content
        print(
            f"{kind:<20} {len(data) / 1e6:>8.1f} {peak / 1e6:>8.1f} {peak / len(data):>5.2f}x  "
            f"{response.status_code}{' refused' if refused else ''}",
            flush=True,
        )


if __name__ == "__main__":
    main()
