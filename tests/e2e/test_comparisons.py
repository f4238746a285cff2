"""A reviewer compares two systems in the browser: upload two runs, create the comparison, open
the worst query and read the DCG arithmetic on the page, then try a what-if."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from annotator.management.commands.demo import DEMO_PASSWORD, DEMO_SLUG, build_demo
from annotator.models import Pool, PoolVersion, PoolVersionSource, Project
from annotator.pools.services import pool_version_create
from evaluation.models import Comparison, Run
from tests.e2e.conftest import log_in

POOL = {
    "q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0},  # the contract's E9
    "q2": {"J-A": 3, "J-B": 2, "J-C": 1, "J-D": 0},
    "q3": {"X": 2, "Y": 0},
}
BASELINE = "".join(
    f"{q} Q0 {d} {rank} {10 - rank} baseline\n"
    for q, docs in (("q1", "ABCDE"), ("q2", ["J-A", "J-B"]), ("q3", "XY"))
    for rank, d in enumerate(docs, start=1)
)
# q1 falls to 0.6075 (the largest regression), q3 to 0.6309, q2 stays at 1.0.
CANDIDATE = "q1: C, A, D, B, E\nq2: J-A, J-B\nq3: Y, X\n"


def demo_with_pool() -> tuple[Project, Any, PoolVersion]:
    """The demo project, its reviewer, and POOL frozen as a version of its own."""
    project = build_demo()
    reviewer = project.memberships.get(user__username="reviewer").user
    version = pool_version_create(
        pool=Pool.objects.create(project=project, name="Browser test pool"),
        judgments=[(q, d, g, "unanimous") for q, docs in POOL.items() for d, g in docs.items()],
        source=PoolVersionSource.FROZEN,
        by=reviewer,
    )
    return project, reviewer, version


def test_reviewer_uploads_two_runs_compares_them_and_reads_the_worst_querys_arithmetic(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    project, reviewer, version = demo_with_pool()
    base = f"{live_server.url}/p/{DEMO_SLUG}"
    log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)

    # 1. Upload the baseline as a TREC file, checked against the pool at upload.
    page.goto(f"{base}/")
    page.get_by_role("link", name="Runs", exact=True).first.click()
    page.get_by_role("link", name="Upload a run").first.click()
    page.get_by_label("Name").fill("baseline")
    page.get_by_label("Run file").set_input_files(
        files=[{"name": "baseline.trec", "mimeType": "text/plain", "buffer": BASELINE.encode()}]
    )
    page.get_by_label("Check against pool version").select_option(str(version.pk))
    page.get_by_label("K", exact=True).fill("3")
    page.get_by_role("button", name="Upload run").click()
    expect(page.get_by_role("heading", name="Run “baseline”")).to_be_visible()
    expect(page.get_by_text("Run “baseline” uploaded: 3 queries, 9 ranked entries.")).to_be_visible()

    # 2. A mistake first: a pasted list with a document listed twice is refused, naming the line.
    page.goto(f"{base}/runs/upload/")
    page.get_by_label("Name").fill("candidate")
    page.get_by_label("…or paste ordered IDs per query").fill("q1: C, A, C\n")
    page.get_by_role("button", name="Upload run").click()
    expect(page.locator("#upload-form")).to_contain_text("line 1")
    expect(page.locator("#upload-form")).to_contain_text("appears twice")
    page.get_by_label("…or paste ordered IDs per query").fill(CANDIDATE)
    page.get_by_role("button", name="Upload run").click()
    expect(page.get_by_role("heading", name="Run “candidate”")).to_be_visible()

    # 3. Create the comparison: baseline (A) against candidate (B) at K = 3.
    page.get_by_role("link", name="New comparison").first.click()
    page.get_by_label("Frozen pool version").select_option(str(version.pk))
    page.get_by_label("Run A (baseline)").select_option(str(Run.objects.get(name="baseline").pk))
    page.get_by_label("Run B (candidate)").select_option(str(Run.objects.get(name="candidate").pk))
    page.get_by_label("K", exact=True).fill("3")
    page.get_by_role("button", name="Compute and save").click()
    expect(page.get_by_role("heading", name="baseline vs candidate")).to_be_visible()
    comparison = Comparison.objects.get(name="baseline vs candidate")
    assert page.url.endswith(comparison.get_absolute_url())
    expect(page.get_by_test_id("wtl")).to_contain_text("0 / 1 / 2")
    # Each filter select applies on change, the second one ("Order") too: "change from:find
    # select" listens to the first select only.
    page.get_by_label("Order").select_option(index=1)
    expect(page).to_have_url(re.compile(r"[?&]sort="))
    page.wait_for_load_state("networkidle")

    # 4. Open the worst query and read the arithmetic.
    page.get_by_role("link", name="Open the worst query").click()
    expect(page.get_by_role("heading", name="Query q1")).to_be_visible()
    expect(page.get_by_test_id("dcg-b")).to_have_text("2.8928")
    expect(page.get_by_test_id("ndcg-b")).to_contain_text("NDCG@3 = DCG / IDCG = 2.8928 / 4.7619 = 0.6075")
    expect(page.get_by_test_id("ndcg-a")).to_contain_text("NDCG@3 = DCG / IDCG = 4.7619 / 4.7619 = 1.0000")
    expect(page.get_by_test_id("idcg")).to_have_text("4.7619")
    # Full precision on hover.
    expect(page.get_by_test_id("ndcg-b").locator("strong span")).to_have_attribute(
        "title", "0.6074915180456525"
    )
    side_b = page.locator(".side-b")
    expect(side_b.get_by_role("row").nth(2)).to_contain_text("log₂(3) = 1.5850")
    expect(side_b.get_by_text("only in B")).to_be_visible()

    # 5. A what-if through htmx: K = 2, exponential gain; the saved comparison does not change.
    page.get_by_label("K", exact=True).fill("2")
    page.get_by_label("Gain").select_option("exponential")  # a request of its own (change)
    # One request at a time: the test server shares one in-memory SQLite connection between its
    # request threads, and two at once can read each other's half-done queries.
    page.wait_for_load_state("networkidle")
    page.get_by_role("button", name="Re-score this query").click()
    expect(page.locator(".what-if-banner")).to_contain_text("What-if:")
    expect(page.get_by_test_id("ndcg-b")).to_contain_text("NDCG@2 = DCG / IDCG")
    # Said once, the banner alone: the tables are no live region, or each re-score queues them all.
    expect(page.locator("#live-status")).to_contain_text("What-if: this query re-scored with K = 2")
    assert page.locator("#breakdown[aria-live], #breakdown [aria-live]").count() == 0
    # Enter in the K field sends one request and adds one history entry (it sent two: a change,
    # then the submit, and Back needed two presses). Let the gain change's and the click's requests
    # land, swap, settle and reach the history first (htmx pushes a moment after the response).
    page.wait_for_load_state("networkidle")
    expect(page).to_have_url(re.compile(r"[?&]k=2&gain=exponential"))
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")
    page.wait_for_timeout(200)
    history = page.evaluate("history.length")
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url) if "k=1" in request.url else None)
    page.get_by_label("K", exact=True).fill("1")
    page.get_by_label("K", exact=True).press("Enter")
    expect(page.get_by_test_id("ndcg-b")).to_contain_text("NDCG@1 = DCG / IDCG")
    page.wait_for_timeout(300)
    assert page.evaluate("history.length") == history + 1 and len(sent) == 1, sent
    assert Comparison.objects.get(pk=comparison.pk).results == comparison.results
    assert Project.objects.filter(slug=DEMO_SLUG).count() == 1


def test_an_editor_finds_no_comparisons_in_the_demo(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    project = build_demo()
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/")
    expect(page.get_by_role("link", name="Comparisons")).to_have_count(0)
    response = page.goto(f"{live_server.url}/p/{project.slug}/comparisons/")
    assert response is not None and response.status == 403


def test_the_worked_breakdowns_sit_side_by_side_only_where_both_fit_whole(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """Two cards share a row from about 1,200 px, where both tables fit whole; narrower, they
    stack, so no card scrolls sideways and cuts the Running DCG column to "Ru"."""
    from evaluation.comparisons import comparison_create
    from evaluation.metrics import Settings
    from evaluation.runs import run_upload

    project, reviewer, version = demo_with_pool()
    runs = [
        run_upload(
            project=project,
            name=name,
            notes="",
            fmt=fmt,
            file_name=file_name,
            data=text.encode(),
            by=reviewer,
        )
        for name, fmt, file_name, text in (
            ("baseline", "trec", "baseline.trec", BASELINE),
            ("candidate", "lists", "pasted.txt", CANDIDATE),
        )
    ]
    comparison = comparison_create(
        project=project,
        pool_version=version,
        run_a=runs[0],
        run_b=runs[1],
        settings=Settings(k=5),
        by=reviewer,
    )
    log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)
    for width in (1100, 1240, 1300, 1500, 1920):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/p/{DEMO_SLUG}/comparisons/{comparison.pk}/query/?query=q1")
        cards = page.locator(".sides > *")
        expect(cards).to_have_count(2)
        boxes = [cards.nth(i).bounding_box() for i in range(2)]
        assert all(box is not None for box in boxes)
        side_by_side = boxes[0]["y"] == boxes[1]["y"]  # type: ignore[index]
        assert side_by_side == (width >= 1200), (width, boxes)
        for i in range(2):
            # The whole table shows: no card scrolls sideways, and the document does not either.
            assert cards.nth(i).evaluate("card => card.scrollWidth <= card.clientWidth"), (width, i)
            expect(cards.nth(i).get_by_role("columnheader", name="Running DCG")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= width


# The widest text each policy menu may show, against its box less the arrow and padding.
CLIPPED_MENUS = """() => {
  const canvas = document.createElement("canvas").getContext("2d");
  const menus = document.querySelectorAll("#comparison-form fieldset select, #upload-form fieldset select");
  return Array.from(menus)
    .filter((select) => {
      const style = getComputedStyle(select);
      canvas.font = `${style.fontSize} ${style.fontFamily}`;
      const widest = Math.max(...Array.from(select.options).map((o) => canvas.measureText(o.text).width));
      return widest > select.clientWidth - 40;
    })
    .map((select) => select.name);
}"""


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_policy_menus_are_wide_enough_for_every_option(
    browser: Any, live_server: Any, transactional_db: None, language: str
) -> None:
    demo_with_pool()
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)
        context.add_cookies([{"name": "django_language", "value": language, "url": live_server.url}])
        for path in ("comparisons/new/", "runs/upload/"):
            page.goto(f"{live_server.url}/p/{DEMO_SLUG}/{path}")
            assert page.locator("fieldset select").count() >= 3
            assert page.evaluate(CLIPPED_MENUS) == [], path
    finally:
        context.close()
