"""The app works in a real browser under its Content-Security-Policy, and the browser reports no
violation of it: every script, handler and style it needs comes from static/.

A violation is what the browser itself reports: the `securitypolicyviolation` event (passed out
through a binding, which outlives page loads), and its console and log entries. A first,
deliberate violation proves the watch sees one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from annotator.demo import grading as demo_grading
from annotator.management.commands import demo
from annotator.models import Candidate, Grade
from tests.conftest import PASSWORD, make_user
from tests.e2e.conftest import log_in

REPORT = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(
    `${event.effectiveDirective} refused ${event.blockedURI || "inline code"}` +
      ` (${event.sourceFile || location.pathname}:${event.lineNumber})`
  );
}, true);
"""
# What Chromium writes to the console about either policy (a refusal, an unknown feature name).
POLICY_WORDS = (
    "Content Security Policy",
    "Content-Security-Policy",
    "Permissions-Policy",
    "Permissions policy",
)


@pytest.fixture
def violations(page: Page) -> Iterator[list[str]]:
    """Everything the browser says against the policies on `page`, from any page it loads."""
    found: list[str] = []
    page.expose_function("reportViolation", lambda text: found.append(text))
    page.add_init_script(REPORT)

    def on_console(message: ConsoleMessage) -> None:
        if any(word in message.text for word in POLICY_WORDS):
            found.append(f"console: {message.text}")

    page.on("console", on_console)
    page.on("pageerror", lambda error: found.append(f"script error: {error}"))

    # Chromium's own log, where it writes each refusal as it happens (the console copy comes later).
    def on_log(event: dict[str, Any]) -> None:
        if any(word in event["entry"]["text"] for word in POLICY_WORDS):
            found.append(f"log: {event['entry']['text']}")

    log = page.context.new_cdp_session(page)
    log.send("Log.enable")
    log.on("Log.entryAdded", on_log)
    yield found


def prove_the_watch_sees_a_violation(page: Page, violations: list[str]) -> None:
    """An inline style attribute put into the page is refused, and reported: the policy is on
    and the watch hears it. The list is then emptied for the flow under test."""
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color: red\">x</p>')")

    def heard() -> bool:  # as the event, in Chromium's log and in the console, in any order
        return all(
            any(v.startswith(prefix) for v in violations) for prefix in ("style-src-attr", "log:", "console:")
        )

    for _ in range(100):
        if heard():
            break
        page.wait_for_timeout(100)
    assert heard(), violations
    violations.clear()


@pytest.fixture
def grading_demo(monkeypatch: pytest.MonkeyPatch, transactional_db: None) -> None:
    monkeypatch.setattr(demo, "DEMO_STEPS", [demo_grading.build])
    demo.build_demo()


def grade_every_open_document(page: Page, grades: dict[str, str]) -> None:
    """From the focused row, with the keyboard: the document's grade, then Enter to the next."""
    for _ in grades:
        page.wait_for_function(
            "() => document.activeElement && document.activeElement.closest('article.candidate')"
        )
        row = page.locator("article.candidate:focus")
        doc = row.locator(".candidate-head .muted").inner_text().split("·")[0].strip()
        row_id = row.get_attribute("id")
        page.keyboard.press(grades[doc])
        # Saved, or locked when it was the pair's last grade (agreed, or now in dispute).
        expect(page.locator(f"#{row_id}")).to_have_attribute("data-state", re.compile("^(saved|locked)$"))
        page.keyboard.press("Enter")


def test_the_whole_grading_flow_runs_without_a_policy_violation(
    page: Page, live_server: Any, grading_demo: None, violations: list[str]
) -> None:
    base = f"{live_server.url}/p/{demo.DEMO_SLUG}"
    page.goto(f"{live_server.url}/accounts/login/")
    prove_the_watch_sees_a_violation(page, violations)

    # Editor A grades q1 with the keyboard: a reason, an undo, the shortcut help.
    log_in(page, live_server.url, "editor-a", demo.DEMO_PASSWORD)
    page.goto(f"{base}/grading/")
    page.get_by_role("button", name="Start grading").click()
    expect(page.locator("h1.query-text")).to_have_text("报名已经提交，如何修改联系电话，是否有截止时间？")
    page.wait_for_function(
        "() => document.activeElement && document.activeElement.closest('article.candidate')"
    )
    first = page.locator("article.candidate:focus").get_attribute("id")
    page.keyboard.press("1")
    expect(page.locator(f"#{first}")).to_have_attribute("data-state", "saved")
    page.keyboard.press("u")
    expect(page.locator(f"#{first}")).to_have_attribute("data-state", "ungraded")
    page.keyboard.press("r")
    page.keyboard.type("a reason typed under the policy")
    page.keyboard.press("Escape")
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    page.locator(f"#{first}").focus()
    grade_every_open_document(page, {"A": "3", "B": "2", "C": "1", "D": "0", "E": "0"})
    expect(page.locator("#progress")).to_contain_text("5 of 5")
    assert Grade.objects.filter(editor__username="editor-a").count() == 5

    # The language switch (its script fills in the address bar's page) and back.
    grading_page = page.url
    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    assert page.url == grading_page
    page.get_by_role("button", name="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")

    # Editor B disagrees on B: the pair goes into dispute, and B's reason is saved with htmx.
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server.url, "editor-b", demo.DEMO_PASSWORD)
    page.goto(f"{base}/grading/")
    page.get_by_role("button", name="Start grading").click()
    grade_every_open_document(page, {"A": "3", "B": "0", "C": "1", "D": "0", "E": "0"})
    page.goto(f"{base}/")
    page.get_by_role("link", name="Disputes", exact=True).click()
    page.get_by_role("link", name="q1 / B").click()
    page.get_by_role("textbox", name="The basis of your grade").fill("No phone field is named.")
    page.get_by_role("button", name="Save my reason").click()
    expect(page.get_by_text("Your reason is saved.")).to_be_visible()

    # The owner removes a pair from a set: the question is asked first (a script, not onsubmit).
    page.get_by_role("button", name="Log out").click()
    log_in(page, live_server.url, "owner", demo.DEMO_PASSWORD)
    page.goto(f"{base}/sets/")
    page.get_by_role("link", name="Seed 000").click()
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Remove").first.click()
    page.wait_for_timeout(300)
    assert len(questions) == 1 and questions[0].startswith("Remove J-")
    assert Candidate.objects.filter(grading_set__name="Seed 000").count() == 4  # dismissed: kept
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Remove").first.click()
    expect(page.locator("#messages")).to_contain_text("Removed J-")
    assert Candidate.objects.filter(grading_set__name="Seed 000").count() == 3

    assert not violations, "\n".join(violations)


def test_the_review_pages_and_the_admin_run_without_a_policy_violation(
    page: Page, live_server: Any, transactional_db: None, violations: list[str]
) -> None:
    demo.build_demo()
    base = f"{live_server.url}/p/{demo.DEMO_SLUG}"
    log_in(page, live_server.url, "reviewer", demo.DEMO_PASSWORD)
    prove_the_watch_sees_a_violation(page, violations)

    # A frozen version's page draws its grade shares as SVG bars (no style attribute).
    page.goto(f"{base}/pools/")
    page.get_by_role("link", name="Frozen · version 1").first.click()
    bars = page.locator(".distribution svg.bar-track rect")
    expect(bars).to_have_count(4)
    widths = [box["width"] for box in (bars.nth(i).bounding_box() or {"width": 0.0} for i in range(4))]
    assert any(w > 0 for w in widths), widths
    # A comparison: the what-if gain is an htmx form, the chart is SVG.
    page.goto(f"{base}/comparisons/")
    page.locator("table a[href*='/comparisons/']").first.click()
    expect(page.locator("#query-table")).to_be_visible()
    with page.expect_response(lambda r: r.request.headers.get("hx-request") == "true"):
        page.get_by_label("Query ID contains").fill("q")  # the table is filtered with htmx
    expect(page).to_have_url(re.compile(r"search=q"))
    page.goto(f"{base}/disputes/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Help", exact=True).click()

    # Django's admin, as a superuser: its index, a list with filters, a form with its widgets.
    make_user("root", is_staff=True, is_superuser=True)
    page.get_by_role("button", name="Log out").click()
    page.goto(f"{live_server.url}/admin/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#site-name")).to_be_visible()
    page.goto(f"{live_server.url}/admin/auth/user/")
    page.goto(f"{live_server.url}/admin/auth/user/add/")
    expect(page.locator("form#user_form")).to_be_visible()

    # The Permissions-Policy is the browser's: the camera is off for the page, scripts are not.
    allows = page.evaluate(
        "() => ['camera', 'microphone', 'geolocation', 'sync-xhr']"
        ".map((feature) => document.featurePolicy.allowsFeature(feature))"
    )
    assert allows == [False, False, False, True]

    assert not violations, "\n".join(violations)
