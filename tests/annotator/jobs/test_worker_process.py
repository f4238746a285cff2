"""A real worker process (`manage.py db_worker`), killed with SIGKILL in the middle of an import.

Declared behaviour (annotator/jobs/services.py): the import's rows and the job's done state commit
together, so a killed job leaves no row behind; once its worker has been silent for
JOB_STALL_SECONDS the job is marked failed (it is not retried: the person starts it again), and a
restarted worker takes the work still queued. The database is a throwaway one of the suite's
engine: a file for SQLite, a fresh database on the same server for PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.processes import ROOT, Query, manage, wait_for
from tests.processes import throwaway_database as database

SEED = """
from django.contrib.auth.models import User
from annotator.jobs.start import job_start
from annotator.models import Membership, Project, Role
project = Project.objects.create(name="Kill", slug="kill")
owner = User.objects.create_user("owner", password="x")
Membership.objects.create(project=project, user=owner, role=Role.OWNER)
big = "doc_id,title,body\\n" + "".join(f"d{i},Title {i},{'body ' * 40}{i}\\n" for i in range(60000))
small = "doc_id,title,body\\nS1,Small,one\\nS2,Small,two\\n"
for name, text in (("big.csv", big), ("small.csv", small)):
    job_start(project=project, kind="import_documents", by=owner, data=text.encode(), name=name,
              params={"records": "documents", "format": "csv", "check_only": False})
"""


@pytest.fixture
def throwaway_database(tmp_path: Path) -> Iterator[tuple[str, Query]]:
    with database(tmp_path, "jobs_kill") as db:
        yield db


@pytest.mark.timeout(600)
def test_a_worker_killed_mid_import_leaves_no_rows_and_a_restarted_worker_takes_the_queued_work(
    throwaway_database: tuple[str, Query],
) -> None:
    url, query = throwaway_database
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_JOB_STALL_SECONDS": "2", "DJANGO_DEBUG": "1"}
    manage(env, "migrate", "--noinput", "-v0")
    manage(env, "shell", "-c", SEED)
    jobs = "SELECT input_name, state, stage, done, result FROM annotator_job ORDER BY id"
    assert [row[:2] for row in query(jobs)] == [("big.csv", "queued"), ("small.csv", "queued")]

    worker = subprocess.Popen(
        [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Kill it while it stores the big file: PostgreSQL shows rows done; SQLite, the stage.
        pg = not url.startswith("sqlite")
        wait_for(
            lambda: (row := query(jobs)[0])[2] == "saving" and (row[3] > 0 or not pg),
            240,
            "the big import to be storing",
        )
        time.sleep(0.3)
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert query(jobs)[0][1] == "running"
    assert query("SELECT count(*) FROM annotator_document") == [(0,)]

    time.sleep(2.5)  # past JOB_STALL_SECONDS
    manage(env, "db_worker", "--batch", "--no-reload", "--no-startup-delay", "--interval", "0", timeout=240)
    (big, big_state, *_, big_result), (small, small_state, *_) = query(jobs)
    assert (big, big_state) == ("big.csv", "failed") and "stalled" in str(big_result)
    assert (small, small_state) == ("small.csv", "done")
    assert query("SELECT external_id FROM annotator_document ORDER BY external_id") == [("S1",), ("S2",)]
