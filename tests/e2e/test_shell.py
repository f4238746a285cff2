"""The shell as a person meets it: log in, find the project, read it in Chinese, log out."""

from __future__ import annotations

from typing import Any

from django.db.models import F, Value
from django.db.models.functions import Concat
from playwright.sync_api import Page, expect

from annotator.management.commands.demo import DEMO_PASSWORD, DEMO_SLUG, build_demo
from tests.e2e.conftest import log_in


def test_editor_logs_in_sees_the_demo_switches_to_chinese_and_logs_out(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    build_demo()
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)

    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    page.get_by_role("link", name="Help center demo").click()
    expect(page.get_by_role("heading", name="Help center demo")).to_be_visible()
    expect(page.get_by_text("Your role: Editor")).to_be_visible()

    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.get_by_role("heading", name="帮助中心示例")).to_be_visible()
    expect(page.get_by_text("你的角色：编辑")).to_be_visible()

    page.get_by_role("button", name="退出登录").click()
    # Logging out lands on the login page, still in the language the person chose.
    expect(page.get_by_role("heading", name="登录")).to_be_visible()
    page.goto(f"{live_server.url}/")
    expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/")


def test_wrong_password_shows_a_clear_error(page: Page, live_server: Any, transactional_db: None) -> None:
    build_demo()
    log_in(page, live_server.url, "editor-a", "not-the-password", succeeds=False)
    expect(page.get_by_role("alert")).to_contain_text("didn't match")


def test_switching_language_keeps_the_filter_htmx_put_in_the_address_bar(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    build_demo()
    log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/help-center-demo/disputes/")
    # The filter links swap the table with htmx and push ?status=... into the address bar; the
    # page around them (and its language form) was rendered for the bare URL.
    page.get_by_role("link", name="Settled").click()
    expect(page).to_have_url(f"{live_server.url}/p/help-center-demo/disputes/?status=settled")

    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page).to_have_url(f"{live_server.url}/p/help-center-demo/disputes/?status=settled")


def test_a_failed_htmx_request_is_reported_in_the_pages_language(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    build_demo()
    log_in(page, live_server.url, "reviewer", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/help-center-demo/disputes/")
    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    # The server answers the filter's htmx request with an error, then not at all.
    page.route("**/disputes/?status=settled", lambda route: route.fulfill(status=500, body="boom"))
    page.get_by_role("link", name="已定级", exact=True).click()
    expect(page.get_by_role("alert")).to_have_text("服务器未能完成这个请求。本页内容没有丢失：请重试。")
    page.unroute("**/disputes/?status=settled")
    page.route("**/disputes/?status=in_review", lambda route: route.abort())
    page.locator("#messages").evaluate("box => box.replaceChildren()")
    page.get_by_role("link", name="等待审核人裁定").click()
    expect(page.get_by_role("alert")).to_have_text("服务器未能完成这个请求。本页内容没有丢失：请重试。")


def test_no_page_is_wider_than_a_phone(page: Page, live_server: Any, transactional_db: None) -> None:
    """At 390 px every page of the demo fits the screen: a wide table scrolls inside its own box,
    a long ID wraps in its cell, so no table pushes the whole page sideways."""
    from annotator.documents.readers import read_queries
    from annotator.documents.services import queries_import
    from evaluation.models import Comparison

    project = build_demo()
    queries_import(
        project=project, records=read_queries(f"query_id,text\n{'Q' * 240},long ID\n".encode(), "csv")
    )
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, live_server.url, "owner", DEMO_PASSWORD)
    base = f"{live_server.url}/p/{project.slug}"
    comparison = Comparison.objects.filter(project=project).first()
    assert comparison is not None
    paths = [
        "/",
        "/grading/",
        "/sets/",
        "/queries/",
        "/documents/",
        "/members/",
        "/pools/",
        "/disputes/",
        "/disputes/queue/",
        "/disputes/agreement/",
        "/disputes/recheck/",
        "/runs/",
        "/comparisons/",
        "/imports/",
        "/criteria/",
        f"/sets/{project.grading_sets.order_by('pk').first().pk}/",
        f"/comparisons/{comparison.pk}/",
        f"/comparisons/{comparison.pk}/query/",
    ]
    too_wide, squeezed, unreachable, broken = {}, {}, {}, {}
    # A link made of words (a set's name) breaks between its words, not inside one
    # ("Cancellatio|n and refunds"); IDs without spaces may still break anywhere.
    words_cut = """(() => {
      const cut = [];
      for (const a of document.querySelectorAll('.table td a')) {
        const words = a.textContent.trim().split(/\\s+/);
        if (a.querySelector('code') || words.length < 2) continue;
        const probe = document.createElement('span');
        Object.assign(probe.style, {whiteSpace: 'nowrap', position: 'absolute', visibility: 'hidden', font: getComputedStyle(a).font});
        document.body.append(probe);
        // Chinese text breaks between any two characters: only words of Latin script count.
        for (const word of words.filter((w) => w.length <= 20 && !/[\\u3000-\\u9fff\\uff00-\\uffef]/.test(w))) {
          probe.textContent = word;
          if (probe.getBoundingClientRect().width > a.getBoundingClientRect().width + 1) cut.push(word);
        }
        probe.remove();
      }
      return cut;
    })()"""  # noqa: E501 (JavaScript run as is: its lines are not Python's)
    # A cell holding a name or an ID (a link, code) keeps room for a few words: long IDs may wrap
    # anywhere, which may squeeze such columns to one character per line at 390 px.
    narrowest_named_cell = (
        "Math.min(Infinity, ...[...document.querySelectorAll('.table td')]"
        ".filter(td => td.querySelector('a, code')).map(td => td.getBoundingClientRect().width))"
    )
    for path in paths:
        page.goto(base + path)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            too_wide[path] = width
        if (cell := page.evaluate(narrowest_named_cell)) < 100:
            squeezed[path] = cell
        # A table that scrolls in its box takes the keyboard focus, or keyboard users cannot
        # scroll it (axe: scrollable-region-focusable).
        if stuck := page.evaluate(
            "[...document.querySelectorAll('.table')].filter(t => t.scrollWidth > t.clientWidth + 1 && "
            "t.tabIndex < 0).length"
        ):
            unreachable[path] = stuck
        if cut := page.evaluate(words_cut):
            broken[path] = cut
    assert not too_wide, too_wide
    assert not squeezed, squeezed
    assert not unreachable, unreachable
    assert not broken, broken
    # The narrowest phones and the tablet widths between the phone layout and the desktop one
    # (the overview's cards at 320 px; the pools, disputes and comparisons lists at 701-850 px).
    for width in (320, 768, 880):
        page.set_viewport_size({"width": width, "height": 800})
        for path in paths:
            page.goto(base + path)
            if (scroll := page.evaluate("document.documentElement.scrollWidth")) > width:
                too_wide[(width, path)] = scroll
    assert not too_wide, too_wide
    page.set_viewport_size({"width": 390, "height": 800})
    # ...and a breakdown table keeps a readable document column, in Chinese too, where six number
    # columns would squeeze it to one character per line.
    page.get_by_role("button", name="中文").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    narrowest = page.evaluate(
        "Math.min(...[...document.querySelectorAll('.positions td.doc')].map(td => "
        "td.getBoundingClientRect().width))"
    )
    assert narrowest >= 100, narrowest


def test_an_editors_queue_and_disputes_show_every_column_on_a_phone(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """At 390 px the queue's "Next in ..." button and the disputes' "Your part" (the final grade)
    would be off screen inside tables scrolled sideways: there they are cards."""
    from annotator.models import Document, GradingSet, Query

    build_demo()
    # A long set name, and IDs too long for any column: the button stays on the card, and at
    # 1280 px the disputes list stays within the window.
    long_name = "Cancellation and refunds, the long second round with a rather long name"
    GradingSet.objects.filter(name="Cancellation and refunds").update(name=long_name)
    Query.objects.update(external_id=Concat(F("external_id"), Value("-" + "q" * 120)))
    Document.objects.update(external_id=Concat(F("external_id"), Value("-" + "d" * 120)))
    page.set_viewport_size({"width": 390, "height": 800})
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/grading/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    button = page.get_by_role("button", name=f"Next in {long_name}")
    expect(button).to_be_in_viewport()
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    # Each value is named on its card, the header row being hidden there.
    labels = page.evaluate(
        "[...document.querySelectorAll('.table td[data-label]')].map(td => getComputedStyle(td, "
        "'::before').content)"
    )
    assert '"Graded by you"' in labels and '"Waiting for you"' in labels, labels
    page.goto(f"{live_server.url}/p/{DEMO_SLUG}/disputes/")
    final = page.get_by_text("Final grade 2 (Settled by a reviewer)")
    final.scroll_into_view_if_needed()
    box = final.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert page.evaluate(
        "[...document.querySelectorAll('.table')].every(t => t.scrollWidth <= t.clientWidth + 1)"
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    page.reload()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280


def test_the_language_switch_changes_nothing_until_it_is_pressed(
    page: Page, live_server: Any, transactional_db: None
) -> None:
    """WCAG 3.2.2: no language control reloads the page on a single arrow key."""
    build_demo()
    log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
    switch = page.get_by_role("button", name="中文")
    switch.focus()
    for key in ("ArrowDown", "ArrowUp", "Tab"):
        page.keyboard.press(key)
    page.wait_for_timeout(300)
    expect(page.locator("html")).to_have_attribute("lang", "en")
    switch.focus()
    page.keyboard.press("Enter")
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
    expect(page.get_by_role("button", name="English")).to_be_visible()


def test_times_are_shown_in_the_browsers_time_zone(
    browser: Any, live_server: Any, transactional_db: None
) -> None:
    """Times are shown in the browser's zone and labelled, not in UTC, hours off for Beijing."""
    build_demo()
    context = browser.new_context(locale="en-US", timezone_id="Asia/Shanghai")
    try:
        page = context.new_page()
        log_in(page, live_server.url, "editor-a", DEMO_PASSWORD)
        page.goto(f"{live_server.url}/p/{DEMO_SLUG}/criteria/")  # the cookie is set from the first page on
        expect(page.locator("footer")).to_contain_text("Asia/Shanghai")
    finally:
        context.close()
