"""The keyboard focus survives htmx swaps: a person paging a table or sending a form with an
error keeps their place, not dropped to <body>."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from annotator.documents import views as document_views
from annotator.management.commands.demo import DEMO_PASSWORD, DEMO_SLUG, build_demo
from annotator.models import DisputeStatus
from tests.e2e.conftest import log_in
from tests.factories import disputed_pair


def test_paging_with_the_keyboard_keeps_the_focus_on_the_pager(
    page: Page, live_server: Any, transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(document_views, "PAGE_SIZE", 5)  # the demo's documents fill three pages
    build_demo()
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/documents/")
    page.get_by_role("link", name="Next").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#document-table")).to_contain_text("Page 2 of")
    expect(page.locator(":focus")).to_have_attribute("rel", "next")
    page.keyboard.press("Enter")
    expect(page.locator("#document-table")).to_contain_text("Page 3 of")
    # The last page has no Next: the other link takes the focus.
    expect(page.locator(":focus")).to_have_attribute("rel", "prev")


def test_a_refused_dispute_reason_puts_the_focus_on_the_field(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    project = build_demo()
    users = {m.user.get_username(): m.user for m in project.memberships.select_related("user")}
    dispute = disputed_pair(
        project, users["editor-a"], users["editor-b"], (0, 3), set_name="Focus", document="FOCUS"
    )
    assert dispute.status == DisputeStatus.AWAITING_REASONS
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/disputes/{dispute.pk}/")
    page.locator("#id_reason").fill("   ")
    page.locator("section[aria-labelledby=reason-heading]").get_by_role("button").first.click()
    expect(page.get_by_text("Write the basis of your grade: which condition")).to_be_visible()
    expect(page.locator(":focus")).to_have_attribute("name", "reason")


def test_an_error_takes_the_focus_to_its_field_even_from_a_disabled_button_or_another_field(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """The upload button is disabled during its request, so the focus would fall to <body>; and
    htmx would put it back on the field that had it, while the error is on another."""
    from annotator.models import GradingSet

    project = build_demo()
    taken = GradingSet.objects.filter(project=project).first()
    assert taken is not None
    log_in(page, live_server.url, "owner", DEMO_PASSWORD)

    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/runs/upload/")
    page.get_by_label("Name").fill("twice")
    page.get_by_label("…or paste ordered IDs per query").fill("q1: C, A, C\n")
    page.get_by_role("button", name="Upload run").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#upload-form")).to_contain_text("appears twice")
    expect(page.locator(":focus")).to_have_attribute("aria-invalid", "true")
    expect(page.locator(":focus")).to_have_attribute("name", "text")

    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/sets/")
    page.wait_for_load_state("networkidle")
    form = page.locator("#set-form")
    form.get_by_label("Name").fill(taken.name)
    grades = form.locator("input[name=required_grades]")
    grades.focus()
    grades.press("Enter")
    expect(page.locator("#set-form .errorlist").first).to_be_visible()
    expect(page.locator(":focus")).to_have_attribute("name", "name")


def test_a_filter_link_keeps_the_focus_after_its_table_is_replaced(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """After Enter on a status filter the focus stays on the filter, so Tab does not start over."""
    build_demo()
    log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/disputes/")
    page.locator('#dispute-table a[href="?status=settled"]').focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/p/{DEMO_SLUG}/disputes/?status=settled")
    expect(page.locator(":focus")).to_have_attribute("href", "?status=settled")
    # A filter that leaves the table empty says so to screen readers too.
    page.locator('#dispute-table a[href="?status=awaiting_reasons"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator("#dispute-table .empty-state")).to_have_text("No disputes with this status.")
    expect(page.locator("#live-status")).to_have_text("No disputes with this status.")
    expect(page.locator(":focus")).to_have_attribute("href", "?status=awaiting_reasons")
    # A table with rows and one page has nothing to say: the old sentence does not stay.
    page.locator('#dispute-table a[href="?status=settled"]').focus()
    page.keyboard.press("Enter")
    expect(page.locator("#dispute-table .empty-state")).to_have_count(0)
    expect(page.locator("#live-status")).to_have_text("")


def test_the_names_toggle_keeps_the_focus_so_enter_toggles_back(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """After the toggle's swap the focus is on the toggle, not the whole review where Enter does nothing."""
    from annotator.models import Dispute

    build_demo()
    dispute = Dispute.objects.filter(status=DisputeStatus.IN_REVIEW).order_by("pk").first()
    assert dispute is not None
    log_in(page, live_server.url, "owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/disputes/{dispute.pk}/review/")
    page.get_by_role("link", name="Hide names (Editor 1, Editor 2…)").focus()
    page.keyboard.press("Enter")
    expect(page.locator(":focus")).to_have_text("Show editors' names")
    page.keyboard.press("Enter")
    expect(page.locator(":focus")).to_have_text("Hide names (Editor 1, Editor 2…)")


def test_a_form_sent_without_htmx_comes_back_with_the_focus_on_its_error(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """Members, "add nobody" (a plain post): the page comes back with the focus on the error."""
    build_demo()
    log_in(page, live_server.url, "owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/members/")
    field = page.get_by_label("Username")
    field.fill("nobody-at-all")
    field.press("Enter")
    expect(page.locator(":focus")).to_have_attribute("aria-invalid", "true")


def test_the_message_a_finished_action_leaves_takes_the_focus_on_the_next_page(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """A success message present when a page loads is not read out as a status: a screen-reader
    user would not learn that the action worked. It takes the focus, as an error does."""
    build_demo()
    log_in(page, live_server.url, "owner", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/members/")
    page.get_by_text("Remove editor-b", exact=True).click()  # the removal asks first, in the page
    page.get_by_role("button", name="Yes, remove editor-b").click()
    expect(page.locator("#messages .message").first).to_contain_text("editor-b was removed from the project.")
    expect(page.locator("#messages .message").first).to_be_focused()
    # A failed sign-in says so in the window title too, not only in the page.
    page.context.clear_cookies()
    log_in(page, live_server.url, "owner", "wrong password", succeeds=False)
    expect(page).to_have_title("Error: Log in · ranking-lab")
