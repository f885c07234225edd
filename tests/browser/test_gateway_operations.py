"""The instance diagram in Chromium names what a token at an event-based gateway or an inclusive
join waits for in its badge's accessible name (and the node's tooltip), with a clean axe audit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import diamond, node, simple, task
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain

pytestmark = pytest.mark.browser

engine = engine_conftest.engine


def test_gateway_badges_name_what_the_token_waits_for(page, demo, engine):
    waiting = start(engine, publish_document(simple(), key="pay"), input={"order": "X"})
    branches = {"a": node("serviceTask", tool="noop", inputs={}), "b": task("B"), "c": task("C")}
    joining = start(
        engine, publish_document(diamond(branches), key="incl"), input={"a": 1, "b": 1, "c": 0}
    )
    drain(engine)

    sign_in(page, "operator")
    page.goto(f"/operations/instances/{waiting}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    events = "the first of: message 'paid' (Paid), timer (Late)"
    expect(page.get_by_role("img", name=f"1 token waiting at Wait for {events}")).to_be_visible()
    assert serious_violations(page) == []

    page.goto(f"/operations/instances/{joining}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    branch = "the branches from B (from_b)"
    expect(page.get_by_role("img", name=f"1 token waiting at Join for {branch}")).to_be_visible()
    tooltip = page.locator('.djs-element[data-element-id="join"] > title.op-title')
    expect(tooltip).to_have_text(f"Waiting for {branch}")
