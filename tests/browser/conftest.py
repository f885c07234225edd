"""Playwright driving Debian's Chromium (/usr/bin/chromium); no browser is ever downloaded."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.helpers import requirements

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


# Reports every Content-Security-Policy violation of every page of the context to the test.
REPORT_VIOLATIONS = """
document.addEventListener('securitypolicyviolation', (event) => {
  window.__reportCspViolation(
    `${event.effectiveDirective} blocked ${event.blockedURI || 'inline'}`
    + ` at ${event.sourceFile}:${event.lineNumber} on ${document.location.pathname}`
    + (event.sample ? ` (${event.sample})` : ''));
});
"""
POLICY_MESSAGES = ("Content Security Policy", "Refused to", "Permissions-Policy")


def watch_policies(context) -> list[str]:
    """Collect the CSP violations (events and console errors) of every page `context` opens."""
    violations: list[str] = []

    def report(text: str) -> None:
        violations.append(text)

    context.expose_function("__reportCspViolation", report)
    context.add_init_script(REPORT_VIOLATIONS)

    def console(message) -> None:
        if any(text in message.text for text in POLICY_MESSAGES):
            violations.append(f"console: {message.text}")

    context.on("page", lambda page: page.on("console", console))
    return violations


def new_context(browser, live_server: str, width: int = 1280, height: int = 800):
    """A browser context whose CSP violations are in `context.csp_violations`."""
    context = browser.new_context(base_url=live_server, viewport={"width": width, "height": height})
    context.csp_violations = watch_policies(context)
    return context


def _page(browser, live_server: str, width: int, height: int):
    context = new_context(browser, live_server, width, height)
    page = context.new_page()
    page.set_default_timeout(10_000)
    return context, page


def close_context(context) -> None:
    """Close a context from `new_context`; fail if any page of it reported a CSP violation."""
    violations = list(context.csp_violations)
    context.close()
    assert not violations, "Content-Security-Policy violations:\n" + "\n".join(violations)


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


def wait_until(page, expression: str, timeout: float = 10.0) -> None:
    """Poll a JavaScript expression from here until it is truthy: Playwright's wait_for_function
    runs its predicate through eval() in the page, which the Content-Security-Policy refuses."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"still false after {timeout} s: {expression}")
        page.wait_for_timeout(50)


def sign_in(page, username: str, password: str = "flowdesk-demo") -> None:
    """Sign in through the login page, with the keyboard where a person would use it."""
    page.goto("/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
