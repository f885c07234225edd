"""In Chromium: a modeller plays the Purchase request draft by typing its start input and
answering its task, sees the tokens move on the diagram, undoes a step, plays to the end and
saves the run as a scenario that then passes, at 1280 and 390 pixels."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import serious_violations, sign_in
from webapp.cli.demo_processes import purchase_request

pytestmark = pytest.mark.browser

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


def _purchase(app) -> int:
    from webapp.extensions import db
    from webapp.models import Partition
    from webapp.services import processes

    with app.app_context():
        finance = db.session.scalar(select(Partition.id).where(Partition.key == "finance"))
        process = processes.create_process(
            "purchase", "Purchase", partition_id=finance, actor=None, document=purchase_request()
        )
        db.session.commit()
        pid = process.id
        db.session.remove()
    return pid


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_a_draft_is_played_to_its_end_and_saved_as_a_scenario(request, size, app, demo):
    page = request.getfixturevalue(size)
    pid = _purchase(app)
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/scenarios")
    page.get_by_role("link", name="Play").click()
    expect(page.locator("[data-instance-viewer]")).to_have_attribute("data-ready", "true")
    page.evaluate("window.keptPage = true")
    page.get_by_label("Item").fill("Desk")
    page.get_by_label("Amount (EUR)").fill("0")
    page.get_by_label("Bob Approver").uncheck()
    page.get_by_role("button", name="Start the draft").click()
    expect(page.locator("#play-refused")).to_contain_text("Amount (EUR):")
    page.get_by_label("Amount (EUR)").fill("300")
    page.get_by_role("button", name="Start the draft").click()
    task = page.get_by_role("region", name=re.compile("Task “Review offer”"))
    expect(task).to_be_visible()
    expect(page.locator(".djs-element.op-active[data-element-id=offer]")).to_have_count(1)
    task.get_by_label("No").check()
    task.get_by_role("button", name="Complete “Review offer”").click()
    expect(page.locator("#play-status")).to_contain_text("completed")
    page.get_by_role("button", name="Undo the last step").click()
    expect(page.locator("#play-status")).to_contain_text("running")
    task = page.get_by_role("region", name=re.compile("Task “Review offer”"))
    task.get_by_role("button", name="Complete “Review offer”").click()
    expect(page.locator("#play-refused")).to_be_visible()
    expect(task.locator(".error").first).to_be_visible()
    task.get_by_label("Yes").check()
    task.get_by_role("button", name="Complete “Review offer”").click()
    expect(page.locator("#play-status")).to_contain_text("completed after 1 step")
    expect(page.locator("#play-status")).to_be_focused()
    expect(page.locator(".djs-element.op-visited[data-element-id=decided]")).to_have_count(1)
    expect(page.locator(".play-vars")).to_contain_text("decision")
    assert page.evaluate("window.keptPage === true"), "steps replace only the play's region"
    assert page.evaluate(OVERFLOW) <= 0
    assert serious_violations(page) == []
    page.get_by_label("Scenario name").fill("Alice approves")
    page.get_by_role("button", name="Save as scenario").click()
    expect(page).to_have_url(re.compile(rf"/designer/{pid}/scenarios/\d+$"))
    page.get_by_role("link", name="Test scenarios").click()
    page.get_by_role("button", name="Run Alice approves").click()
    expect(page.locator("#scenario-list")).to_contain_text("passed")
