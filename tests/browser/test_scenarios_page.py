"""In Chromium: a modeller adds a test scenario on the process's page, sees a bad one refused
with its step named, runs it and reads the result and the coverage, at 1280 and 390 pixels."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from tests.helpers.browser import save, serious_violations, sign_in
from webapp.cli.demo_processes import purchase_request

pytestmark = pytest.mark.browser

OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
SCENARIO = {
    "name": "Both approve",
    "input": {"item": "Desk", "amount": 300, "reviewers": ["alice", "bob"]},
    "actions": [
        {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
        {"do": "complete", "node": "offer", "data": {"approve": "yes"}},
    ],
    "expect": {"status": "completed", "values": {"$vars.decision.approved": True}},
}


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
def test_a_scenario_is_added_refused_and_run_from_the_page(request, size, app, demo):
    page = request.getfixturevalue(size)
    pid = _purchase(app)
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/scenarios")
    body = page.get_by_label("Scenario (JSON)")
    bad = {**SCENARIO, "actions": [{"do": "complete", "node": "approve"}]}
    body.fill(json.dumps(bad))
    page.get_by_role("button", name="Save the scenario").click()
    problems = page.locator("#scenario-problems")
    expect(problems).to_contain_text("actions[0].node: no user task 'approve' in this draft")
    expect(problems).to_be_focused()
    page.get_by_label("Scenario (JSON)").fill(json.dumps(SCENARIO))
    page.get_by_role("button", name="Save the scenario").click()
    expect(page.get_by_role("link", name="Both approve")).to_be_visible()
    page.get_by_role("button", name="Run Both approve").click()
    expect(page.locator("#scenario-list")).to_contain_text("passed")
    expect(page.locator("#scenario-coverage")).to_contain_text("Coverage: 70%")
    assert page.evaluate(OVERFLOW) <= 0
    assert serious_violations(page) == []


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_the_diagram_marks_what_the_scenarios_walked(request, size, app, demo):
    page = request.getfixturevalue(size)
    pid = _purchase(app)
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/")
    expect(page.locator("#coverage-share")).to_contain_text("Run the scenarios")
    page.get_by_role("link", name="Run the scenarios").click()
    page.get_by_label("Scenario (JSON)").fill(json.dumps(SCENARIO))
    page.get_by_role("button", name="Save the scenario").click()
    page.get_by_role("button", name="Run all 1 on the draft").click()
    expect(page.locator("#scenario-coverage")).to_contain_text("Coverage: 70%")
    page.get_by_role("link", name="See them on the diagram").click()
    expect(page.locator("#designer")).to_have_attribute("data-ready", "true")
    legend = page.locator("#coverage-legend")
    expect(legend).to_contain_text("walked by a scenario")
    expect(page.locator("#coverage-share")).to_contain_text("70% of the nodes (7 of 10)")
    for walked in ("requested", "review", "record", "decided", "f1", "f6", "f7"):
        expect(page.locator(f'.djs-element[data-element-id="{walked}"]')).to_have_class(
            re.compile(r"\bcovered\b")
        )
    for missed in ("reminder", "remind", "f4"):
        expect(page.locator(f'.djs-element[data-element-id="{missed}"]')).not_to_have_class(
            re.compile(r"\bcovered\b")
        )
    assert page.evaluate(OVERFLOW) <= 0
    assert serious_violations(page) == []
    page.evaluate(
        "(() => { const r = modeler.get('elementRegistry');"
        " modeler.get('modeling').moveElements([r.get('decided')], {x: 0, y: 60}); })()"
    )
    save(page)
    expect(page.locator(".djs-element.covered")).to_have_count(0)
    expect(page.locator("#coverage-share")).to_contain_text("The draft changed: run the scenarios")
    expect(legend).to_be_hidden()


@pytest.mark.parametrize("size", ["page", "phone_page"])
def test_a_scenario_built_in_the_form_fails_and_shows_the_diagram_where_it_stopped(
    request, size, app, demo
):
    page = request.getfixturevalue(size)
    pid = _purchase(app)
    sign_in(page, "designer")
    page.goto(f"/designer/{pid}/scenarios")
    page.get_by_role("link", name="Add a scenario in the form").click()
    page.get_by_label("Scenario name").fill("One review is enough")
    page.locator("#scenario-input").get_by_label("Item").fill("Desk")
    page.get_by_label("Amount (EUR)").fill("300")
    page.get_by_label("Alice Clerk").check()
    page.get_by_label("Bob Approver").check()
    page.get_by_role("button", name="Add an action").click()
    with page.expect_response(lambda answer: answer.request.method == "POST"):
        page.get_by_label("Kind of action 1").select_option("timer")
    expect(page.get_by_label("Form values (JSON)")).to_have_count(0)
    with page.expect_response(lambda answer: answer.request.method == "POST"):
        page.get_by_label("Kind of action 1").select_option("complete")
    expect(page.get_by_label("Node of action 1")).to_contain_text("Review offer (offer)")
    page.get_by_label("Node of action 1").select_option("offer")
    page.get_by_label("Form values (JSON)").fill('{"approve": "yes"}')
    page.get_by_label("End state").select_option("completed")
    page.get_by_role("button", name="Add a node check").click()
    page.get_by_label("Node of check 1").select_option("record")
    page.get_by_role("button", name="Save the scenario").click()
    expect(page.get_by_role("link", name="One review is enough")).to_be_visible()
    page.get_by_role("button", name="Run One review is enough").click()
    expect(page.locator("#scenario-list")).to_contain_text("failed")
    failed = page.get_by_role("region", name="Where “One review is enough” failed")
    expect(failed).to_contain_text("expect.status: expected completed, got running")
    viewer = failed.locator("[data-instance-viewer]")
    expect(viewer).to_have_attribute("data-ready", "true")
    expect(viewer.locator('.djs-element.op-active[data-element-id="offer"]')).to_have_count(1)
    expect(viewer.locator('.djs-element.op-visited[data-element-id="requested"]')).to_have_count(1)
    assert page.evaluate(OVERFLOW) <= 0
    assert serious_violations(page) == []
