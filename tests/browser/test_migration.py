"""Migrating from the version compare page in Chromium: the link, the mapping for a removed
task, the dry run's verdicts, a reason typed, and the progress page as a worker moves them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import sign_in
from tests.helpers.instances import start
from tests.helpers.migration import first_version, second_version
from tests.helpers.processes import publish_document
from webapp.models import HistoryEntry, Instance, Task

pytestmark = pytest.mark.browser

engine = engine_conftest.engine
workers = engine_conftest.workers


def test_an_admin_migrates_from_the_compare_page(page, demo, engine, workers):
    v1 = publish_document(first_version(), key="mig", name="Migrating")
    publish_document(second_version(review="approve"), key="mig")
    waiting = [start(engine, v1, input={"path": "task"}) for _ in range(2)]
    timer = start(engine, v1, input={"path": "timer"})
    workers.start(1)
    sign_in(page, "admin")
    page.goto(f"/designer/{v1.process_id}/compare?a=1&b=2")
    expect(page.get_by_text("3 instances of v1 are running or failed.")).to_be_visible()
    page.get_by_role("link", name="Migrate instances of v1 to v2…").click()
    page.wait_for_url("**/operations/migrate?*")

    counts = page.locator("#verdict-counts")
    expect(counts).to_contain_text("Cannot migrate: 2")
    expect(counts).to_contain_text("Migrate as they are: 1")
    expect(page.locator("#verdict-groups")).to_contain_text("which v2 no longer has")
    mapping = page.get_by_label(re.compile(r"User task 'Review'.*maps to"))
    mapping.select_option("approve")
    page.get_by_role("button", name="Dry run").click()
    expect(counts).to_contain_text("Migrate with the chosen mapping: 2")
    expect(counts).not_to_contain_text("Cannot migrate")

    page.get_by_label("Reason (optional, kept in each instance's history)").fill("renamed review")
    page.get_by_role("button", name="Migrate 3 instances to v2").click()
    page.wait_for_url(re.compile(r"/operations/bulk/\d+$"))
    expect(page.locator("#bulk-progress")).to_contain_text("3 ok", timeout=30_000)

    engine.rollback()
    versions = engine.scalars(select(Instance.version).where(Instance.id.in_([*waiting, timer])))
    assert set(versions) == {2}
    nodes = engine.scalars(select(Task.node_id).where(Task.instance_id.in_(waiting))).all()
    assert nodes == ["approve", "approve"]
    reasons = engine.scalars(select(HistoryEntry.details).where(HistoryEntry.kind == "migrated"))
    assert {d["reason"] for d in reasons} == {"renamed review"}
