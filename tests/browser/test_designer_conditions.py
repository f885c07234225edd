"""A conditional catch drawn like a person in Chromium: appended from the context pad, its
condition set in the panel, published and run; it waits until an operator's variable edit makes
the condition true, and the operations page shows the path it took."""

from __future__ import annotations

import base64

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    apply,
    bo,
    open_designer,
    pad,
    panel_for,
    pick,
    save_settled,
    sign_in,
    wait_until,
)
from tests.helpers.designer import get_process

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

START_ONLY = {
    "format_version": 1,
    "nodes": {"start": {"kind": "startEvent", "title": "Start", "position": {"x": 160, "y": 200}}},
    "flows": {},
}


def test_draw_publish_and_run_a_conditional_catch(
    page, demo, make_process, db_session, live_server
):
    pid = make_process("cond_e2e", doc=START_ONLY)
    sign_in(page, "designer")
    open_designer(page, pid)
    pick(page, "start")
    catch = pad(page, "append.conditional-catch")
    assert bo(page, catch, "bo.eventDefinitions[0].$type") == "bpmn:ConditionalEventDefinition"
    pad(page, "append.end-event")
    pick(page, catch)
    panel = panel_for(page, catch)
    panel.get_by_label("Title").fill("Approved?")
    panel.get_by_label("Condition", exact=True).fill("$vars.ok == true")
    apply(page)
    save_settled(page)
    nodes = get_process(db_session, pid).draft_document["nodes"]
    assert nodes[catch]["kind"] == "conditionalCatch"
    assert nodes[catch]["config"] == {"condition": "$vars.ok == true"}
    expect(page.locator("#problem-summary")).to_have_text("0 errors, 1 warning")
    page.click("#publish-link")
    page.get_by_label("Change note").fill("Wait for approval")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")

    auth = {"Authorization": "Basic " + base64.b64encode(b"admin:flowdesk-demo").decode()}
    started = page.request.post(
        f"{live_server}/api/instances", data={"process_key": "cond_e2e"}, headers=auth
    )
    assert started.status == 201, started.text()
    instance = started.json()["id"]
    assert started.json()["status"] == "running"

    page.context.clear_cookies()
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance}")
    page.wait_for_selector("[data-ready=true]")
    expect(page.locator(f".djs-element.op-active[data-element-id='{catch}']")).to_have_count(1)

    edited = page.request.post(
        f"{live_server}/api/instances/{instance}/modifications",
        data={"operations": [], "variables": {"ok": True}, "reason": "approved"},
        headers=auth,
    )
    assert edited.ok, edited.text()
    state = page.request.get(f"{live_server}/api/instances/{instance}", headers=auth).json()
    assert state["status"] == "completed", state
    page.reload()
    page.wait_for_selector("[data-ready=true]")
    expect(page.locator(f".djs-element.op-visited[data-element-id='{catch}']")).to_have_count(1)
    wait_until(page, "document.querySelectorAll('.djs-element.op-active').length === 0")
