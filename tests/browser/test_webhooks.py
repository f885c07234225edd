"""An admin registers a webhook in Chromium by clicking, at desktop and phone widths, and reaches
its page with the secret and the (empty) delivery log."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import waiting_doc
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models import Webhook
from webapp.models.base import utcnow

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


def test_an_admin_registers_a_webhook_by_clicking(app, page, demo, db_session):
    _register(page, "https://hooks.example.org/flowdesk")
    db_session.rollback()
    hook = db_session.scalar(select(Webhook))
    assert hook.events == ["instance.completed", "task.created"]
    expect(page.locator("#secret")).to_have_text(hook.secret)
    page.get_by_role("button", name="Make a new secret").click()
    expect(page.get_by_text("New secret made")).to_be_visible()
    expect(page.locator("#secret")).not_to_have_text(hook.secret)

    with app.app_context():
        version = publish_document(waiting_doc("bob"), key="pay", partition="finance")
        start(db.session, version)
    db_session.execute(
        Webhook.__table__.update().values(paused_at=utcnow(), paused_reason="Kept failing.")
    )
    db_session.commit()
    page.reload()
    expect(page.get_by_role("alert")).to_contain_text("Kept failing.")
    expect(page.get_by_role("button", name=re.compile(r"^Redeliver task\.created"))).to_be_visible()
    assert serious_violations(page) == []
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_text("Webhook resumed")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)


def test_registering_works_on_a_phone(phone_page, demo):
    _register(phone_page, "https://hooks.example.org/phone")
    width = phone_page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    assert serious_violations(phone_page) == []
