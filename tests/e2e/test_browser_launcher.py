"""The browser tests' own launcher: a Chromium that has gone is replaced for the next test."""

from collections.abc import Callable

from playwright.sync_api import Browser


def test_a_browser_that_has_gone_is_replaced_by_a_running_one(chromium: Callable[[], Browser]) -> None:
    first = chromium()
    assert chromium() is first  # one browser while it runs
    first.close()
    second = chromium()
    assert second is not first
    assert second.is_connected()
    page = second.new_page()
    page.set_content("<p>alive</p>")
    assert page.text_content("p") == "alive"
    page.close()
