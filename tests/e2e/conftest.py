"""Browser tests: Playwright's Python API driving Debian's Chromium against pytest-django's live server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test body
# are still synchronous and safe, so lift Django's async guard for browser tests only.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/e2e/" in str(item.path):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Callable[[], Browser]]:
    """A launcher that hands out one running Chromium and starts a new one if it has gone.

    Chromium can die under a long run (seen once as every later test failing at new_context):
    relaunching keeps a crash to the test it happened in instead of every test after it.
    """
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    with sync_playwright() as p:
        running: list[Browser] = []

        def connected() -> Browser:
            if not running or not running[-1].is_connected():
                running.append(
                    p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS, headless=True)
                )
            return running[-1]

        yield connected
        if running and running[-1].is_connected():
            running[-1].close()


@pytest.fixture
def browser(chromium: Callable[[], Browser]) -> Browser:
    return chromium()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    page = context.new_page()
    yield page
    if browser.is_connected():
        context.close()


def log_in(page: Page, base_url: str, username: str, password: str, *, succeeds: bool = True) -> None:
    """Sign in through the login form and wait for the page it leads to to load.

    The click returns before the redirect's page commits. A test that then closed the page (or
    navigated) raced that commit, and Chromium can drop a close that lands mid-commit: page.close()
    then waits for good (crbug.com/536385539, microsoft/playwright#42068). CI hung there once.
    """
    page.goto(f"{base_url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_response(lambda r: r.request.method == "POST" and "/accounts/login/" in r.url):
        page.get_by_role("button", name="Log in").click()
    if succeeds:
        page.wait_for_url(lambda url: "/accounts/login/" not in url, wait_until="load")
    else:
        page.wait_for_load_state("load")
