"""Playwright driving Debian's Chromium (/usr/bin/chromium); no browser is ever downloaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import requirements
from tests.helpers.browser import close_context, new_context

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
        if os.environ.get("FLOWDESK_REQUIRE_BROWSER") or requirements.required():
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing: `apt-get install chromium` to run browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _page(browser, live_server: str, width: int, height: int):
    context = new_context(browser, live_server, width, height)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


@pytest.fixture
def page(browser, live_server):
    context, page = _page(browser, live_server, 1280, 800)
    yield page
    close_context(context)


@pytest.fixture
def phone_page(browser, live_server):
    context, page = _page(browser, live_server, 390, 844)
    yield page
    close_context(context)
