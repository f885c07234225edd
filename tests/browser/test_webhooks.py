"""An admin registers a webhook in Chromium by clicking, at desktop and phone widths, and reaches
its page with the secret and the (empty) delivery log."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import sign_in
from webapp.models import Webhook

pytestmark = pytest.mark.browser


def _register(page, url: str) -> None:
    sign_in(page, "admin")
    page.goto("/admin")
    page.get_by_role("navigation", name="Admin").get_by_role("link", name="Webhooks").click()
    page.wait_for_url("**/admin/webhooks")
    page.get_by_role("button", name="Register webhook").click()
    expect(page.get_by_text("Choose at least one event type.").first).to_be_visible()
    page.get_by_label("URL").fill(url)
    events = page.get_by_role("group", name="Events")
    events.get_by_role("checkbox", name="instance.completed").check()
    events.get_by_role("checkbox", name="task.created").check()
    page.get_by_label("Only partition").select_option("finance")
    page.get_by_role("button", name="Register webhook").click()
    page.wait_for_url("**/admin/webhooks/*")
    expect(page.get_by_text("Webhook registered.")).to_be_visible()
    expect(page.get_by_text("No deliveries yet.")).to_be_visible()


def test_an_admin_registers_a_webhook_by_clicking(page, demo, db_session):
    _register(page, "https://hooks.example.org/flowdesk")
    db_session.rollback()
    hook = db_session.scalar(select(Webhook))
    assert hook.events == ["instance.completed", "task.created"]
    expect(page.locator("#secret")).to_have_text(hook.secret)
    page.get_by_role("button", name="Make a new secret").click()
    expect(page.get_by_text("New secret made")).to_be_visible()
    expect(page.locator("#secret")).not_to_have_text(hook.secret)


def test_registering_works_on_a_phone(phone_page, demo):
    _register(phone_page, "https://hooks.example.org/phone")
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
