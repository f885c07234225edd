"""In Chromium: the import report maps a user the file names to a Flowdesk user, and
the properties panel offers a task to further roles, users and the names an expression gives."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.designer import conftest as designer_fixtures
from tests.helpers.browser import (
    apply,
    click_shape,
    open_designer,
    panel_for,
    save,
    serious_violations,
    sign_in,
)
from tests.helpers.designer import get_process
from tests.helpers.documents import approval_document

pytestmark = pytest.mark.browser

make_process = designer_fixtures.make_process

GHOST = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="d" targetNamespace="http://x">
  <bpmn:process id="leave" name="Leave request" isExecutable="true">
    <bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="ok"/>
    <bpmn:userTask id="ok" name="Approve leave" camunda:assignee="ghost"/>
    <bpmn:sequenceFlow id="f2" sourceRef="ok" targetRef="e"/><bpmn:endEvent id="e"/>
  </bpmn:process>
</bpmn:definitions>"""


def test_a_user_the_file_names_is_mapped_on_the_import_report(page, demo, db_session, tmp_path):
    upload = tmp_path / "leave.bpmn"
    upload.write_text(GHOST)
    sign_in(page, "designer")
    page.goto("/designer/import")
    page.get_by_label("BPMN or JSON file").set_input_files(str(upload))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Users that are not Flowdesk users")).to_be_visible()
    assert serious_violations(page) == []
    choice = page.get_by_label("For user ghost")
    choice.focus()
    options = choice.locator("option").all_inner_texts()
    assert any("alice" in option.lower() for option in options), options
    choice.select_option("alice")
    page.get_by_role("button", name="Apply to the draft").click()
    expect(page.get_by_text("Mapped ghost → alice.")).to_be_visible()
    expect(page.get_by_role("heading", name="Users that are not Flowdesk users")).to_have_count(0)
    db_session.expire_all()
    from sqlalchemy import select

    from webapp.models import Process

    process = db_session.scalar(select(Process).where(Process.key == "leave"))
    assignee = process.draft_document["nodes"]["ok"]["config"]["assignee"]
    assert assignee == {"type": "user", "value": "alice"}


def test_the_panel_offers_a_task_to_more_roles_users_and_computed_names(
    page, make_process, db_session
):
    pid = make_process(doc=approval_document())
    sign_in(page, "designer")
    open_designer(page, pid)
    click_shape(page, "review")
    panel = panel_for(page, "review")
    panel.get_by_label("Also offered to roles", exact=True).fill("clerk")
    panel.get_by_label("Also offered to users", exact=True).fill("bob")
    panel.get_by_label("Also offered to roles from (expression)").fill("$input.groups")
    apply(page)
    save(page)
    config = get_process(db_session, pid).draft_document["nodes"]["review"]["config"]
    assert config["candidates"] == {
        "roles": ["clerk"],
        "users": ["bob"],
        "rolesFrom": "$input.groups",
    }
    page.reload()
    page.wait_for_selector("#designer[data-ready=true]")
    click_shape(page, "review")
    panel = panel_for(page, "review")
    expect(panel.get_by_label("Also offered to roles", exact=True)).to_have_value("clerk")
    expect(panel.get_by_label("Also offered to roles from (expression)")).to_have_value(
        "$input.groups"
    )
