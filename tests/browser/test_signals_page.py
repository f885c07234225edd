"""An operator watches a broadcast on the Signals page on a phone: the row refreshes to done
by itself, and the broadcast's page (whom it reached) passes the accessibility audit."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.engine.broadcasts import run_broadcasts
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import chain, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from webapp.engine import signals
from webapp.models import Partition
from webapp.models.base import utcnow

pytestmark = pytest.mark.browser

engine = engine_conftest.engine


def test_a_running_broadcast_refreshes_to_done_on_a_phone(phone_page, demo, engine):
    version = publish_document(chain(("wait", node("signalCatch", signal="go"))), "waits")
    waiting = start(engine, version)
    conn = engine.connection()
    ref = signals.record(conn, name="go", payload={}, partition_id=None, now=utcnow())
    engine.commit()
    page = phone_page
    sign_in(page, "operator")
    page.goto("/operations/signals")
    row = page.locator(f'tr[data-broadcast="{ref.id}"]')
    expect(row).to_have_attribute("data-status", "pending")
    run_broadcasts(engine)
    expect(row).to_have_attribute("data-status", "done", timeout=10_000)
    expect(row).to_contain_text("1 of 1")
    page.get_by_role("link", name=f"#{ref.id}").click()
    expect(page.get_by_role("heading", name=f"Signal “go” #{ref.id}")).to_be_visible()
    expect(page.get_by_role("link", name=f"#{waiting}")).to_be_visible()
    assert serious_violations(page) == []


def test_an_operator_broadcasts_a_signal_from_the_page_by_keyboard_on_a_phone(
    phone_page, demo, engine
):

    version = publish_document(
        chain(("wait", node("signalCatch", signal="recall"))), "waits", partition="finance"
    )
    waiting = start(engine, version)
    page = phone_page
    sign_in(page, "operator")
    page.goto("/operations/signals")
    page.get_by_label("Signal name").fill("recall")
    page.get_by_label("Payload (JSON object, optional)").fill("{lot: 7}")
    page.get_by_label("Partition").select_option(label="Finance")
    page.get_by_role("button", name="Broadcast…").click()
    errors = page.locator("#errors")
    expect(errors).to_be_focused()
    expect(errors).to_contain_text("The payload is not JSON")
    expect(page.get_by_label("Signal name")).to_have_value("recall")
    expect(page.get_by_label("Partition")).to_have_value("finance")
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.get_by_label("Payload (JSON object, optional)").fill('{"lot": 7}')
    page.get_by_label("Payload (JSON object, optional)").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(
        page.get_by_role("heading", name="Broadcast “recall” to 1 waiting instance?")
    ).to_be_visible()
    assert serious_violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.get_by_role("link", name="No, go back").click()
    expect(page.get_by_label("Payload (JSON object, optional)")).to_have_value('{"lot": 7}')
    page.get_by_role("button", name="Broadcast…").click()
    page.get_by_role("button", name="Yes, broadcast to 1 instance").click()
    expect(page.get_by_role("heading", name=re.compile("Signal “recall” #"))).to_be_visible()
    expect(page.get_by_text("Partition Finance")).to_be_visible()
    run_broadcasts(engine)
    expect(page.get_by_role("link", name=f"#{waiting}")).to_be_visible(timeout=10_000)


def test_a_broadcast_in_a_partition_shows_only_its_instances(phone_page, demo, engine):
    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    wait = chain(("wait", node("signalCatch", signal="go")))
    in_finance = start(
        engine, publish_document(wait, "in_finance", "finance"), partition_id=finance
    )
    shared = start(engine, publish_document(wait, "shared"))
    ref = signals.record(
        engine.connection(), name="go", payload={}, partition_id=finance, now=utcnow()
    )
    engine.commit()
    run_broadcasts(engine)
    page = phone_page
    sign_in(page, "operator")
    page.goto("/operations/signals")
    row = page.locator(f'tr[data-broadcast="{ref.id}"]')
    expect(row).to_have_attribute("data-status", "done")
    expect(row).to_contain_text("1 of 1")
    page.get_by_role("link", name=f"#{ref.id}").click()
    expect(page.get_by_role("link", name=f"#{in_finance}")).to_be_visible()
    expect(page.get_by_role("link", name=f"#{shared}")).to_have_count(0)
