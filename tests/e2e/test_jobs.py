"""Large imports and freezes in the browser, run by a real worker: django-tasks-db's own loop,
polling the database in a thread of this process with its own connections, as `manage.py
db_worker` does in its own process.

PostgreSQL only: SQLite's test database is in memory, reachable only through the one connection
the live server shares, and a second connection's transaction locks its tables for the server.
On SQLite, test_worker_process.py runs a worker process against a database file instead.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connections
from django_tasks_db.management.commands.db_worker import Worker
from playwright.sync_api import Page, expect

from annotator.models import Document, Job, JobState, PoolVersion
from tests import factories
from tests.conftest import PASSWORD, Cast
from tests.e2e.conftest import log_in

pytestmark = pytest.mark.django_db(transaction=True, databases="__all__")


@pytest.fixture
def worker(settings: Any, live_server: Any) -> Iterator[Worker]:
    """A worker thread; every import and freeze goes to it, whatever its size."""
    settings.JOB_INLINE_LIMITS = {"import": 0, "freeze": 0}
    loop = Worker(
        queue_names=["default"],
        interval=0.1,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="e2e",
        excluded_queue_names=[],
    )
    if connections["default"].vendor != "postgresql":
        pytest.skip("a worker thread needs its own connections: PostgreSQL (SQLite: test_worker_process.py)")

    def run() -> None:
        loop.run()
        connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield loop
    loop.running = False
    thread.join(10)


def test_an_owner_imports_a_large_file_and_watches_the_job_finish(
    page: Page, live_server: Any, cast: Cast, worker: Worker, tmp_path: Any
) -> None:
    data = tmp_path / "docs.csv"
    data.write_text(
        "doc_id,title,body\n" + "".join(f"D{i},标题 {i},正文 {i}\n" for i in range(2000)), encoding="utf-8"
    )
    log_in(page, live_server.url, "olivia", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/imports/")
    section = page.locator("#import-documents")
    section.locator("input[type=file]").set_input_files(str(data))
    section.get_by_role("button", name="Import", exact=True).click()

    expect(page.get_by_role("heading", name=re.compile(r"^Job \d+: Document import$"))).to_be_visible(
        timeout=15_000
    )
    # htmx polls the status until the worker is done; then the page says what was stored.
    expect(page.locator("#job-status")).to_contain_text(
        "Documents: created 2000, updated 0, unchanged 0.", timeout=30_000
    )
    assert Document.objects.filter(project=cast.alpha).count() == 2000
    assert Job.objects.get().state == JobState.DONE
    page.get_by_role("link", name="See the result").click()
    expect(page.get_by_role("heading", name="Documents")).to_be_visible()

    page.goto(f"{live_server.url}/p/alpha/jobs/")
    expect(page.get_by_role("cell", name="Done")).to_be_visible()


def test_a_bad_large_file_fails_on_the_worker_and_the_page_names_the_line(
    page: Page, live_server: Any, cast: Cast, worker: Worker, tmp_path: Any
) -> None:
    data = tmp_path / "docs.csv"
    data.write_text("doc_id,title,body\nA,t,b\n,missing id,b\n", encoding="utf-8")
    log_in(page, live_server.url, "olivia", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/imports/")
    section = page.locator("#import-documents")
    section.locator("input[type=file]").set_input_files(str(data))
    section.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#job-status")).to_contain_text(
        "The job failed. Nothing of it was stored.", timeout=30_000
    )
    expect(page.locator("#job-status")).to_contain_text("Line 3, field “doc_id”")
    assert not Document.objects.exists()


def test_a_reviewer_freezes_a_set_on_the_worker_and_reaches_the_version(
    page: Page, live_server: Any, cast: Cast, worker: Worker
) -> None:
    grades = {("q1", d): (g, g) for d, g in zip("ABC", (3, 1, 0), strict=True)}
    factories.graded_set(cast.alpha, (cast.editor, cast.editor2), grades, name="Phone number change")
    log_in(page, live_server.url, "rita", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/pools/")
    page.get_by_role("link", name="Freeze…").click()
    page.get_by_label("I understand that a frozen version can never be changed").check()
    page.get_by_role("button", name="Freeze this set").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Job \d+: Freeze$"))).to_be_visible()
    expect(page.locator("#job-status")).to_contain_text(
        "Frozen as Phone number change version 1", timeout=30_000
    )
    page.get_by_role("link", name="See the result").click()
    expect(page.get_by_role("heading", name="Phone number change · version 1")).to_be_visible()
    assert PoolVersion.objects.get().judgments_by_query() == {"q1": {"A": 3, "B": 1, "C": 0}}
