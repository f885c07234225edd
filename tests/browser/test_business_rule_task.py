"""A business rule task drawn like a person in Chromium: placed from the palette, its decision
picked in the panel from those published for the partition, published, run, and its evaluation
read on the operations page at 1280 and 390 pixels."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    apply,
    connect,
    open_designer,
    pad,
    palette_click,
    panel_for,
    pick,
    save_settled,
    serious_violations,
    shape_box,
    sign_in,
    wait_until,
)
from tests.helpers.decision_tasks import publish_decision, table_dmn
from webapp.models import Process, ProcessVersion
from webapp.process.document import new_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

RULES = [("&lt; 100", "0"), ("100 &lt;= ? &lt; 1000", "0.1"), ("&gt;= 1000", "0.2")]
PAGE_OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def test_place_a_business_rule_task_pick_its_decision_publish_and_see_the_evaluation(
    page, make_process, db_session
):
    publish_decision(table_dmn("discount", RULES), "pricing", partition="finance")
    doc = new_document("priced", "Priced")
    doc["variables"] = "pool"  # the start input is what the decision reads
    process_id = make_process("priced", doc=doc)
    sign_in(page, "designer")
    open_designer(page, process_id)

    pick(page, "end")
    pad(page, "delete")
    start = shape_box(page, "start")
    rule = palette_click(
        page, "create.business-rule-task", start["x"] + 200, start["y"] + start["height"] / 2
    )
    wait_until(
        page,
        f"modeler.get('elementRegistry').get('{rule}').businessObject.$type"
        " === 'bpmn:BusinessRuleTask'",
    )
    page.keyboard.press("Escape")
    connect(page, "start", rule)
    pick(page, rule)
    pad(page, "append.end-event")
    page.keyboard.press("Escape")

    pick(page, rule)
    panel = panel_for(page, rule)
    expect(panel.locator("#published-decisions option[value=discount]")).to_have_count(1)
    panel.get_by_label("Title").fill("Work out the discount")
    panel.get_by_label("Decision", exact=True).fill("discount")
    panel.get_by_label("Save the result as").fill("discount")
    apply(page)
    wait_until(
        page,
        f"(modeler.get('elementRegistry').get('{rule}').businessObject.extensionElements"
        " || {values: []}).values.some(v => (v.body || '').includes('\"decision\":\"discount\"'))",
    )
    save_settled(page)
    expect(page.locator("#problem-summary")).to_have_text("No problems found.")

    page.click("#publish-link")
    page.get_by_label("Change note").fill("Discounts by decision")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")
    version = db_session.scalar(
        select(ProcessVersion)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == "priced")
    )
    assert version.document["nodes"][rule]["config"]["decision"] == "discount"

    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    started = page.request.post(
        "/api/instances",
        data={"process_key": "priced", "input": {"amount": 500}},
        headers={"X-CSRFToken": token},
    )
    assert started.status == 201, started.text()
    instance_id = started.json()["id"]

    page.goto(f"/operations/instances/{instance_id}")
    decisions = page.locator("#live-decisions")
    expect(decisions).to_contain_text("Work out the discount")
    expect(decisions).to_contain_text("decision discount v1 · matched rule 2")
    expect(decisions).to_contain_text("inputs: amount = 500")
    expect(decisions).to_contain_text("result: 0.1")
    history = page.locator("#history tr[data-kind=decision_evaluated]")
    expect(history).to_contain_text("matched rule 2")
    assert serious_violations(page, "#live-decisions") == []

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#live-decisions")).to_contain_text("result: 0.1")
    page.locator("#live-decisions").scroll_into_view_if_needed()
    expect(page.locator("#live-decisions h2")).to_be_in_viewport()
    assert page.evaluate(PAGE_OVERFLOW) <= 0
