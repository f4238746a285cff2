"""Large imports, freezes and exports in the browser, run by a real worker: the app as `make run`
starts it, `manage.py runserver` and `manage.py db_worker` in processes of their own, on a
throwaway database of the suite's engine (tests/processes.py). Every import, freeze and export
goes to the worker, whatever its size.
"""

from __future__ import annotations

import json
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import PASSWORD
from tests.e2e.conftest import log_in
from tests.processes import Query, manage, serving, throwaway_database

SEED = """
from tests import factories
from tests.conftest import make_cast
cast = make_cast()
grades = {("q1", d): (g, g) for d, g in zip("ABC", (3, 1, 0))}
factories.graded_set(cast.alpha, (cast.editor, cast.editor2), grades, name="Phone number change")
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Query, Path]]:
    """(the site's URL, a SQL query on its database, where the web server and worker log)."""
    directory = tmp_path_factory.mktemp("jobs-site")
    with throwaway_database(directory, "e2e_jobs") as (url, query):
        env = {
            **os.environ,
            "DATABASE_URL": url,
            "DJANGO_DEBUG": "1",
            "DJANGO_JOB_INLINE_IMPORT_BYTES": "0",
            "DJANGO_JOB_INLINE_FREEZE_PAIRS": "0",
            "DJANGO_JOB_INLINE_EXPORT_JUDGMENTS": "0",
        }
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "shell", "-c", SEED)
        with serving(env, directory) as base_url:
            yield base_url, query, directory


def test_an_owner_imports_a_large_file_and_watches_the_worker_store_it(
    page: Page, site: tuple[str, Query, Path], tmp_path: Any
) -> None:
    base_url, query, _logs = site
    data = tmp_path / "docs.csv"
    data.write_text(
        "doc_id,title,body\n" + "".join(f"D{i},标题 {i},正文 {i}\n" for i in range(2000)), encoding="utf-8"
    )
    log_in(page, base_url, "olivia", PASSWORD)
    page.goto(f"{base_url}/p/alpha/imports/")
    section = page.locator("#import-documents")
    section.locator("input[type=file]").set_input_files(str(data))
    section.get_by_role("button", name="Import", exact=True).click()

    expect(page.get_by_role("heading", name=re.compile(r"^Job \d+: Document import$"))).to_be_visible(
        timeout=15_000
    )
    # htmx polls the status until the worker is done; then the page says what was stored.
    expect(page.locator("#job-status")).to_contain_text(
        "Documents: created 2000, updated 0, unchanged 0.", timeout=60_000
    )
    assert query("SELECT count(*) FROM annotator_document WHERE external_id LIKE 'D%'") == [(2000,)]
    page.get_by_role("link", name="See the result").click()
    expect(page.get_by_role("heading", name="Documents")).to_be_visible()

    page.goto(f"{base_url}/p/alpha/jobs/")
    expect(page.get_by_role("cell", name="Done").first).to_be_visible()


def test_a_bad_large_file_fails_on_the_worker_and_the_page_names_the_line(
    page: Page, site: tuple[str, Query, Path], tmp_path: Any
) -> None:
    base_url, query, _logs = site
    data = tmp_path / "docs.csv"
    data.write_text("doc_id,title,body\nBAD1,t,b\n,missing id,b\n", encoding="utf-8")
    log_in(page, base_url, "olivia", PASSWORD)
    page.goto(f"{base_url}/p/alpha/imports/")
    section = page.locator("#import-documents")
    section.locator("input[type=file]").set_input_files(str(data))
    section.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("#job-status")).to_contain_text(
        "The job failed. Nothing of it was stored.", timeout=60_000
    )
    expect(page.locator("#job-status")).to_contain_text("Line 3, field “doc_id”")
    assert query("SELECT count(*) FROM annotator_document WHERE external_id = 'BAD1'") == [(0,)]


def test_a_reviewer_freezes_a_set_then_downloads_an_export_both_made_by_the_worker(
    page: Page, site: tuple[str, Query, Path]
) -> None:
    base_url, query, _logs = site
    log_in(page, base_url, "rita", PASSWORD)
    page.goto(f"{base_url}/p/alpha/pools/")
    page.get_by_role("link", name="Freeze…").click()
    page.get_by_label("I understand that a frozen version can never be changed").check()
    page.get_by_role("button", name="Freeze this set").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Job \d+: Freeze$"))).to_be_visible()
    expect(page.locator("#job-status")).to_contain_text(
        "Frozen as Phone number change version 1", timeout=60_000
    )
    page.get_by_role("link", name="See the result").click()
    expect(page.get_by_role("heading", name="Phone number change · version 1")).to_be_visible()
    [(sha256,)] = query("SELECT sha256 FROM annotator_poolversion")

    expect(page.get_by_text("each export is prepared in the background")).to_be_visible()
    page.get_by_role("button", name="Prepare CSV + manifest (zip)").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Job \d+: Pool export$"))).to_be_visible()
    download_link = page.get_by_role("link", name=re.compile(r"^Download .*-csv\.zip$"))
    expect(download_link).to_be_visible(timeout=60_000)
    with page.expect_download() as download:
        download_link.click()
    with zipfile.ZipFile(download.value.path()) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        data = archive.read(manifest["data_file"]["name"]).decode()
    assert manifest["sha256"] == sha256 and manifest["version"] == 1
    assert data.splitlines()[1:] == ["q1,A,3", "q1,B,1", "q1,C,0"]
