"""Playwright driving Debian's Chromium (/usr/bin/chromium); no browser is ever downloaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("FLOWDESK_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("FLOWDESK_REQUIRE_BROWSER"):
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing: `apt-get install chromium` to run browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _page(browser, live_server: str, width: int, height: int):
    context = browser.new_context(base_url=live_server, viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


@pytest.fixture
def page(browser, live_server):
    context, page = _page(browser, live_server, 1280, 800)
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server):
    context, page = _page(browser, live_server, 390, 844)
    yield page
    context.close()


def sign_in(page, username: str, password: str = "flowdesk-demo") -> None:
    """Sign in through the login page, with the keyboard where a person would use it."""
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
