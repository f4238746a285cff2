"""A reviewer freezes a grading set in the browser, meets what blocks it, and reads the version."""

from __future__ import annotations

import json
import zipfile
from typing import Any

from playwright.sync_api import Page, expect

from annotator.models import PoolVersion
from tests import factories
from tests.conftest import PASSWORD, Cast
from tests.e2e.conftest import log_in


def test_a_reviewer_freezes_a_set_leaving_out_a_disputed_pair_and_views_the_version(
    page: Page, live_server: Any, transactional_db: None, cast: Cast
) -> None:
    grades = {("q1", d): (g, g) for d, g in zip("ACDE", (3, 1, 0, 0), strict=True)}
    grades[("q1", "B")] = (2, 3)  # editors disagree: an open dispute
    factories.graded_set(cast.alpha, (cast.editor, cast.editor2), grades, name="Phone number change")

    log_in(page, live_server.url, "rita", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Pools").click()
    expect(page.get_by_role("heading", name="Judgment pools")).to_be_visible()
    expect(page.get_by_text("No frozen pools yet.")).to_be_visible()
    page.get_by_role("link", name="Freeze…").click()

    expect(page.get_by_role("heading", name="Freeze “Phone number change”")).to_be_visible()
    expect(page.get_by_role("heading", name="Pairs that block freezing: 1")).to_be_visible()
    page.get_by_label("I understand that a frozen version can never be changed").check()
    page.get_by_role("button", name="Freeze this set").click()
    expect(page.get_by_role("alert")).to_contain_text("(q1, B): open dispute")
    assert not PoolVersion.objects.exists()

    page.get_by_label("Leave out the pairs listed above").check()
    page.get_by_label("Reason for leaving them out").fill(
        "B waits for the reviewer; compare on the settled pairs"
    )
    page.get_by_label("I understand that a frozen version can never be changed").check()
    page.get_by_role("button", name="Freeze this set").click()

    expect(page.get_by_role("heading", name="Phone number change · version 1")).to_be_visible()
    version = PoolVersion.objects.get()
    expect(page.get_by_text("Integrity check passed")).to_be_visible()
    expect(page.get_by_text(version.sha256)).to_be_visible()
    expect(page.get_by_role("heading", name="Pairs left out when freezing: 1")).to_be_visible()
    expect(page.get_by_text("B waits for the reviewer")).to_be_visible()
    assert version.judgments_by_query() == {"q1": {"A": 3, "C": 1, "D": 0, "E": 0}}

    with page.expect_download() as download:
        page.get_by_role("link", name="Download CSV + manifest (zip)").click()
    with zipfile.ZipFile(download.value.path()) as archive:
        assert json.loads(archive.read("manifest.json"))["sha256"] == version.sha256

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Pools").click()
    expect(page.get_by_role("link", name="Frozen · version 1")).to_be_visible()
