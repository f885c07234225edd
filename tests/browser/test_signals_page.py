"""An operator watches a broadcast on the Signals page on a phone: the row refreshes to done
by itself, and the broadcast's page (whom it reached) passes the accessibility audit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.browser.conftest import sign_in
from tests.browser.test_accessibility import _serious_violations
from tests.engine import conftest as engine_conftest
from tests.engine.broadcasts import run_broadcasts
from tests.engine.conftest import chain, node, publish_document
from tests.engine.test_steps import start
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
    assert _serious_violations(page) == []


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
