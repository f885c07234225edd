"""A user makes an API token on the account page and an admin makes a service account, by
clicking in Chromium; the token shown once works on the API, at desktop and phone widths."""

from __future__ import annotations

import http.client
import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.helpers.browser import sign_in

pytestmark = pytest.mark.browser


def api_status(server: str, token: str) -> int:
    """The status of GET /api/instances with `token`, from outside the browser (no cookies)."""
    address = urlsplit(server)
    conn = http.client.HTTPConnection(address.hostname or "", address.port, timeout=10)
    try:
        conn.request("GET", "/api/instances", headers={"Authorization": f"Bearer {token}"})
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_user_creates_a_token_on_the_account_page(page, demo, live_server):
    sign_in(page, "alice")
    page.goto("/account")
    form = page.locator("form", has=page.get_by_role("button", name="Create token"))
    form.get_by_label("Token name").fill("deploy-bot")
    scopes = form.get_by_role("group", name="Scopes")
    scopes.get_by_role("checkbox", name="read —").check()
    scopes.get_by_role("checkbox", name="start —").check()
    form.get_by_label("Expires after").select_option(label="30 days")
    form.get_by_role("button", name="Create token").click()
    shown = page.get_by_label("Token “deploy-bot”")
    expect(shown).to_have_value(re.compile(r"^fdp_"))
    text = shown.input_value()
    expect(page.get_by_role("row", name="deploy-bot")).to_contain_text("read start")

    assert api_status(live_server, text) == 200

    page.goto("/account")
    expect(page.get_by_label("Token “deploy-bot”")).to_have_count(0)
    page.get_by_role("button", name="Revoke token deploy-bot").click()
    expect(page.get_by_text("Token deploy-bot revoked")).to_be_visible()
    expect(page.get_by_role("row", name="deploy-bot")).to_contain_text("revoked")


def test_an_admin_creates_a_service_account_and_its_token(phone_page, demo, live_server):
    page = phone_page
    sign_in(page, "admin")
    page.goto("/admin")
    page.get_by_role("link", name="Service accounts").first.click()
    page.get_by_role("link", name="New service account").click()
    page.get_by_label("Username").fill("erp-sync")
    roles, partitions = (
        page.get_by_role("group", name="Roles"),
        page.get_by_role("group", name="Partitions"),
    )
    roles.get_by_role("checkbox", name="clerk", exact=True).check()
    partitions.get_by_role("checkbox", name="Finance (finance)").check()
    page.get_by_role("button", name="Create service account").click()
    expect(page.get_by_text("Service account erp-sync created.")).to_be_visible()

    page.get_by_label("Token name").fill("erp")
    page.get_by_role("group", name="Scopes").get_by_role("checkbox", name="read —").check()
    page.get_by_role("button", name="Create token").click()
    shown = page.get_by_label("Token “erp”")
    expect(shown).to_be_visible()
    text = shown.input_value()
    assert text.startswith("fds_")
    assert api_status(live_server, text) == 200

    page.goto("/admin/tokens")
    expect(page.get_by_role("row", name="erp")).to_contain_text("erp-sync")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390 + 1, "the token list scrolls sideways on a phone"
