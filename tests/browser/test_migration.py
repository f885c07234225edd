"""Migrating from the version compare page in Chromium: the link, the mapping for a removed
task, the dry run's verdicts, a reason typed, and the progress page as a worker moves them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
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


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_the_migration_page_passes_the_audit_and_fits(request, size, demo, engine):
    page = request.getfixturevalue(size)
    v1 = publish_document(first_version(), key="mig", name="Migrating")
    publish_document(second_version(review="approve"), key="mig")
    start(engine, v1, input={"path": "task"})
    sign_in(page, "operator")
    for query, status in (("", 200), ("&map.review=wait", 422)):
        response = page.goto(f"/operations/migrate?process=mig&from=1&to=2{query}")
        assert response.status == status
        assert serious_violations(page) == []
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    expect(page.get_by_role("alert")).to_contain_text("'review' is a user task and 'wait'")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement !== document.body")
