"""A complex gateway drawn in Chromium like a person would: from the palette, joined from two
parallel reviews, its activation condition set in the panel (checked as typed), published, run,
and watched on the operations page: it goes on after the first review and takes in the second."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import (
    apply,
    bo,
    connect,
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
from webapp.engine import steps
from webapp.models import HistoryEntry, Process, ProcessVersion, Task
from webapp.services.jobs import commit

pytestmark = pytest.mark.browser


def review_by_approvers(page, element_id: str, title: str) -> None:
    pick(page, element_id)
    panel = panel_for(page, element_id)
    panel.get_by_label("Title").fill(title)
    apply(page)
    panel.get_by_label("Everyone with a role").check()
    page.wait_for_selector("#props select[name=assignee_role]")
    panel.get_by_label("Role", exact=True).select_option("approver")
    apply(page)
    wait_until(
        page,
        f"(modeler.get('elementRegistry').get('{element_id}').businessObject.extensionElements"
        " || {values: []}).values.some(v => (v.body || '').includes('approver'))",
    )


def test_draw_configure_publish_and_watch_a_complex_gateway(page, demo, db_session):
    sign_in(page, "designer")
    page.goto("/designer/")
    page.get_by_role("link", name="New process").click()
    page.get_by_label("Key").fill("gather")
    page.get_by_label("Name").fill("Gather reviews")
    page.get_by_label("Partition").select_option(label="Finance")
    page.get_by_role("button", name="Create and open the designer").click()
    page.wait_for_selector("#designer[data-ready=true]")

    pick(page, "end")
    pad(page, "delete")
    pick(page, "start")
    split = pad(page, "append.parallel-gateway")
    first = pad(page, "append.user-task")
    page.keyboard.press("Escape")
    pick(page, split)
    second = pad(page, "append.user-task")
    page.keyboard.press("Escape")
    above, below = shape_box(page, first), shape_box(page, second)
    x = above["x"] + above["width"] + 55
    y = (above["y"] + above["height"] + below["y"]) / 2
    gateway = palette_click(page, "create.complex-gateway", x, y)
    assert bo(page, gateway, "bo.$type") == "bpmn:ComplexGateway"
    page.keyboard.press("Escape")
    connect(page, first, gateway)
    connect(page, second, gateway)
    # Clear the selection on empty canvas: the new flow's context pad may cover the gateway.
    page.mouse.click(above["x"] + above["width"] / 2, above["y"] - 60)
    pick(page, gateway)
    end = pad(page, "append.end-event")
    page.keyboard.press("Escape")

    review_by_approvers(page, first, "First review")
    review_by_approvers(page, second, "Second review")
    pick(page, gateway)
    panel = panel_for(page, gateway)
    panel.get_by_label("Title").fill("Enough reviews")
    condition = panel.get_by_label("Activation condition")
    condition.fill("$gateway.arrived >=")
    page.wait_for_selector("#activation-check .error")
    condition.fill("$gateway.arrived >= 1")
    page.wait_for_selector("#activation-check:has-text('Valid expression')")
    apply(page)
    wait_until(
        page,
        f"(modeler.get('elementRegistry').get('{gateway}').businessObject.activationCondition"
        " || {}).body === '$gateway.arrived >= 1'",
    )
    save_settled(page)
    assert page.locator("#problem-summary").inner_text() == "No problems found.", page.locator(
        "#problem-list"
    ).inner_text()
    page.click("#publish-link")
    page.get_by_label("Change note").fill("First review is enough")
    page.get_by_role("button", name="Publish version 1").click()
    page.wait_for_url("**/versions")

    process_id = db_session.scalar(select(Process.id).where(Process.key == "gather"))
    version = db_session.scalar(
        select(ProcessVersion).where(ProcessVersion.process_id == process_id)
    )
    node = version.document["nodes"][gateway]
    assert (node["kind"], node["config"]) == (
        "complexGateway",
        {"activation": "$gateway.arrived >= 1"},
    )

    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    started = page.request.post(
        "/api/instances", data={"process_key": "gather"}, headers={"X-CSRFToken": token}
    )
    assert started.status == 201, started.text()
    instance_id = started.json()["id"]
    db_session.rollback()
    tasks = {
        t.title: t.id
        for t in db_session.scalars(select(Task).where(Task.instance_id == instance_id))
    }
    commit(steps.complete_task(db_session, tasks["First review"], {}, actor=None))

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/login**")
    sign_in(page, "operator")
    page.goto(f"/operations/instances/{instance_id}")
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    active = '.djs-element.op-active[data-element-id="{}"]'
    visited = '.djs-element.op-visited[data-element-id="{}"]'
    expect(page.locator(active.format(second))).to_have_count(1)
    expect(page.locator(visited.format(gateway))).to_have_count(1)
    expect(page.locator(visited.format(end))).to_have_count(1)
    assert serious_violations(page) == []

    commit(steps.complete_task(db_session, tasks["Second review"], {}, actor=None))
    page.reload()
    page.wait_for_selector('[data-instance-viewer][data-ready="true"]')
    expect(page.locator(".op-status-completed").first).to_be_visible()
    expect(page.get_by_text("late branch taken in").first).to_be_visible()
    db_session.rollback()
    resets = db_session.scalars(
        select(HistoryEntry.kind).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.node_id == gateway
        )
    ).all()
    assert resets.count("gateway_consumed") == 1 and resets.count("gateway_reset") == 1
