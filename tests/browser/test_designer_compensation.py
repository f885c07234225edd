"""Compensation in the designer and on the operations page, as a person works in Chromium: a
milestone after a booking is turned into a compensation throw with the wrench, its panel set to
compensate the booking; the process is published and run, and the operations diagram shows the
handler's token went by; a handler still at work shows as the active token beside its throw;
an association drawn from a compensation boundary event to a task makes that task its handler."""

from __future__ import annotations

import base64

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.engine import conftest as engine_conftest
from tests.helpers.browser import (
    CLICK_TRAP_MS,
    apply,
    bo,
    open_designer,
    pad,
    panel_for,
    pick,
    save_settled,
    selected,
    shape_box,
    sign_in,
    wait_until,
)
from tests.helpers.compensation import booking
from tests.helpers.designer import get_process
from tests.helpers.documents import document, node, wire
from tests.helpers.instances import start
from tests.helpers.processes import publish_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process
engine = engine_conftest.engine


def _trip() -> dict:
    """start -> book_flight (with its compensation boundary and handler) -> a milestone -> end."""
    nodes = {
        "start": node("startEvent", "Start"),
        **booking("flight", script="price_now = 5"),
        "later": node("milestone", "Undo the flight"),
        "end": node("endEvent", "Done"),
    }
    doc = document(nodes, wire("start", "book_flight", "later", "end"))
    host = doc["nodes"]["book_flight"]["position"]
    doc["nodes"]["comp_flight"]["position"] = {"x": host["x"] + 32, "y": host["y"] + 62}
    doc["nodes"]["undo_flight"]["position"] = {"x": host["x"] + 120, "y": host["y"] + 180}
    return doc


def test_a_compensation_throw_drawn_published_and_run_shows_its_handler(
    page, demo, make_process, live_server
):
    pid = make_process("trip_undo", doc=_trip())
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, "designer")
    open_designer(page, pid)
    assert bo(page, "undo_flight", "bo.isForCompensation") is True

    pick(page, "later")
    pad(page, "replace")
    page.click('.djs-popup .entry[data-id="replace-with-compensation-intermediate-throw"]')
    wait_until(
        page,
        "modeler.get('selection').get().length === 1 && (modeler.get('selection').get()[0]"
        ".businessObject.eventDefinitions || [{}])[0].$type === 'bpmn:CompensateEventDefinition'",
    )
    throw = selected(page)[0]
    panel = panel_for(page, throw)
    expect(panel.locator(".panel-title")).to_contain_text("Compensation throw")
    panel.get_by_label("Activity to compensate (its id)").fill("book_flight")
    expect(panel.get_by_label("Wait for the handlers")).to_be_checked()
    apply(page)
    save_settled(page)
    expect(page.locator("#problem-summary")).to_have_text("No problems found.")

    page.click("#publish-link")
    page.get_by_label("Change note").fill("Undo the flight")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")

    auth = {"Authorization": "Basic " + base64.b64encode(b"admin:flowdesk-demo").decode()}
    started = page.request.post(
        f"{live_server}/api/instances", data={"process_key": "trip_undo"}, headers=auth
    )
    assert started.status == 201, started.text()
    instance = started.json()["id"]
    state = page.request.get(f"{live_server}/api/instances/{instance}", headers=auth).json()
    assert state["status"] == "completed", state
    assert state["vars"]["refund_flight"] == 5, state

    page.context.clear_cookies()
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance}")
    page.wait_for_selector("[data-ready=true]")
    for visited in ("book_flight", throw, "undo_flight"):
        expect(page.locator(f".djs-element.op-visited[data-element-id='{visited}']")).to_have_count(
            1
        )
    assert not errors, errors


def test_the_operations_diagram_shows_a_handler_at_work_and_its_waiting_throw(page, demo, engine):
    doc = _trip()
    doc["nodes"]["later"] = node("compensationThrow", "Undo the flight")
    doc["nodes"]["undo_flight"] = {
        **node("userTask", "Cancel flight", assignee={"type": "user", "value": "alice"}),
        "position": doc["nodes"]["undo_flight"]["position"],
    }
    version = publish_document(doc, key="trip_waiting", partition="finance")
    instance_id = start(engine, version)

    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    for active in ("undo_flight", "later"):
        expect(page.locator(f".djs-element.op-active[data-element-id='{active}']")).to_have_count(1)
    expect(page.locator(".djs-element.op-visited[data-element-id='book_flight']")).to_have_count(1)


def test_an_association_drawn_from_a_compensation_boundary_makes_its_handler(
    page, make_process, db_session
):
    doc = _trip()
    doc["nodes"]["later"] = node("compensationThrow", "Undo the flight")
    del doc["nodes"]["comp_flight"]["config"]["handler"]
    pid = make_process("trip_draw", doc=doc)
    sign_in(page, "designer")
    open_designer(page, pid)
    assert bo(page, "undo_flight", "!!bo.isForCompensation") is False

    pick(page, "comp_flight")
    page.click('.djs-context-pad .entry[data-action="connect"]')
    box = shape_box(page, "undo_flight")
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x - 20, y, steps=5)
    page.mouse.move(x, y, steps=3)
    page.mouse.click(x, y)
    page.wait_for_timeout(CLICK_TRAP_MS)
    wait_until(page, "modeler.get('elementRegistry').get('undo_flight').businessObject"
               ".isForCompensation === true")  # fmt: skip
    save_settled(page)
    expect(page.locator("#problem-summary")).to_have_text("No problems found.")
    nodes = get_process(db_session, pid).draft_document["nodes"]
    assert nodes["comp_flight"]["config"]["handler"] == "undo_flight"
