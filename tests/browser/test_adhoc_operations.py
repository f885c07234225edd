"""An ad-hoc sub-process on the instance page in Chromium, at 1280 px and on a phone: the
operator starts an activity with a button (by keyboard too), the diagram marks the new token,
and the page passes the accessibility audit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.engine import conftest as engine_conftest
from tests.helpers.browser import serious_violations, sign_in
from tests.helpers.documents import document, flow, inside, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document

pytestmark = pytest.mark.browser

engine = engine_conftest.engine
APPROVER = {"type": "role", "value": "approver"}


def _instance(engine) -> int:
    nodes = {
        "start": node("startEvent"),
        "work": node("adHocSubProcess", "Handle the case"),
        "call": inside("work", "userTask", "Call the customer", assignee=APPROVER),
        "letter": inside("work", "userTask", "Write a letter", assignee=APPROVER),
        "end": node("endEvent"),
    }
    nodes["call"]["position"] = {"x": 160, "y": 160}
    nodes["letter"]["position"] = {"x": 320, "y": 160}
    nodes["work"]["position"] = {"x": 120, "y": 100, "width": 400, "height": 200}
    doc = document(nodes, {"f1": flow("start", "work"), "f2": flow("work", "end")})
    return start(engine, publish_document(doc, key="cases"))


@pytest.mark.parametrize("width", [1280, 390])
def test_an_operator_starts_an_activity_and_sees_its_token(page, demo, engine, width):
    page.set_viewport_size({"width": width, "height": 844})
    instance_id = _instance(engine)
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    section = page.get_by_role("region", name="Start an activity")
    button = section.get_by_role("button", name="Start Write a letter in Handle the case")
    expect(button).to_be_visible()
    button.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_text("“Write a letter” started.")).to_be_visible()
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    expect(page.locator('.djs-element.op-active[data-element-id="letter"]')).to_have_count(1)
    expect(page.locator('.djs-element.op-active[data-element-id="work"]')).to_have_count(1)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    assert serious_violations(page) == []
