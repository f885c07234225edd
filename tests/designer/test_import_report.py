"""The import report: after an import, one page lists what was taken from the file, what was
kept as documentation only, and what still needs a person; groups are mapped to roles there."""

from __future__ import annotations

import copy
import io

import pytest
from sqlalchemy import select

from tests.helpers.app import login
from tests.helpers.designer import get_process, token
from webapp.models import Partition, Process, Role
from webapp.services import processes

CAMUNDA = b"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Defs" targetNamespace="x">
  <bpmn:process id="claims" name="Claims" isExecutable="true">
    <bpmn:laneSet id="lanes"><bpmn:lane id="clerks" name="Clerks"/></bpmn:laneSet>
    <bpmn:startEvent id="start"/>
    <bpmn:sequenceFlow id="f1" sourceRef="start" targetRef="check"/>
    <bpmn:userTask id="check" name="Check claim" camunda:candidateGroups="accounting">
      <bpmn:extensionElements>
        <camunda:formData>
          <camunda:formField id="amount" label="Amount" type="long"/>
        </camunda:formData>
      </bpmn:extensionElements>
    </bpmn:userTask>
    <bpmn:sequenceFlow id="f2" sourceRef="check" targetRef="sync"/>
    <bpmn:serviceTask id="sync" name="Sync CRM" camunda:type="external" camunda:topic="crm-sync"/>
    <bpmn:sequenceFlow id="f3" sourceRef="sync" targetRef="approve"/>
    <bpmn:userTask id="approve" name="Approve claim" camunda:candidateGroups="accounting"/>
    <bpmn:sequenceFlow id="f4" sourceRef="approve" targetRef="note"/>
    <bpmn:scriptTask id="note" name="Note" scriptFormat="groovy">
      <bpmn:script>x = 1</bpmn:script>
    </bpmn:scriptTask>
    <bpmn:sequenceFlow id="f5" sourceRef="note" targetRef="sign"/>
    <bpmn:userTask id="sign" name="Sign" camunda:assignee="demo"/>
    <bpmn:sequenceFlow id="f6" sourceRef="sign" targetRef="done"/>
    <bpmn:endEvent id="done"/>
  </bpmn:process>
</bpmn:definitions>
"""


@pytest.fixture
def imported(designer, db_session, demo):
    finance = db_session.scalar(select(Partition.id).where(Partition.key == "finance"))
    body = {
        "csrf_token": token(designer, "/designer/import"),
        "file": (io.BytesIO(CAMUNDA), "claims.bpmn"),
        "partition": finance,
    }
    response = designer.post("/designer/import", data=body, content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)
    process = db_session.scalar(select(Process).where(Process.key == "claims"))
    assert response.headers["Location"] == f"/designer/{process.id}/import-report"
    return process.id


def report_page(client, pid: int, query: str = "") -> str:
    response = client.get(f"/designer/{pid}/import-report{query}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


def map_names(client, pid: int, revision: int, mapping: str = "groups", **choices: str):
    data = {"csrf_token": token(client, f"/designer/{pid}/import-report"), "revision": revision}
    return client.post(f"/designer/{pid}/import-report/{mapping}", data={**data, **choices})


def test_the_report_names_each_item_with_its_element(designer, imported):
    page = report_page(designer, imported)
    assert "Needs a person (4)" in page
    assert '<th scope="row">accounting</th>' in page
    outline = f"/designer/{imported}/outline"
    assert f'href="{outline}#node-check">Check claim</a> <code class="hint">check</code>' in page
    assert f'href="{outline}#node-approve">Approve claim</a>' in page
    assert "Tools that are not installed" in page and "crm-sync" in page
    assert "Writing a tool" in page
    assert "Scripts and expressions in a language Flowdesk does not run" in page
    assert "groovy" in page
    assert "form with 1 field: amount" in page and "tool crm-sync" in page
    assert "Kept as documentation only" in page and "1 lane set<" in page
    assert "Create the role accounting" not in page, "designers may not create roles"
    assert "Users that are not Flowdesk users" in page and '<th scope="row">demo</th>' in page
    assert 'value="clerk"' in page


def test_mapping_a_group_offers_its_tasks_to_the_role(designer, imported, db_session):
    revision = get_process(db_session, imported).draft_revision
    response = map_names(designer, imported, revision, group_0="clerk")
    assert response.status_code == 303
    assert "Mapped accounting → clerk." in designer.get(response.headers["Location"]).get_data(
        as_text=True
    )
    process = get_process(db_session, imported)
    assert process.draft_revision == revision + 1
    for node_id in ("check", "approve"):
        assignee = process.draft_document["nodes"][node_id]["config"]["assignee"]
        assert assignee == {"type": "role", "value": "clerk"}
    assert not any(p["code"] == "task.role_unknown" for p in process.draft_problems)
    page = report_page(designer, imported)
    assert "Groups that are not Flowdesk roles" not in page and "Needs a person (2)" in page


def test_an_admin_creates_the_role_and_the_tasks_keep_the_group_name(app, imported, db_session):
    admin = app.test_client()
    assert login(admin, "admin").status_code == 302
    assert "Create the role accounting" in report_page(admin, imported)
    revision = get_process(db_session, imported).draft_revision
    response = map_names(admin, imported, revision, group_0="+create")
    assert response.status_code == 303
    role = db_session.scalar(select(Role).where(Role.name == "accounting"))
    assert role is not None and role.permissions == {"tasks.work"}
    process = get_process(db_session, imported)
    assert process.draft_document["nodes"]["check"]["config"]["assignee"]["value"] == "accounting"
    assert "Groups that are not Flowdesk roles" not in report_page(admin, imported)


@pytest.mark.parametrize(
    ("choices", "stale", "message"),
    [
        ({}, False, "Choose for at least one group."),
        ({"group_0": "no-such-role"}, False, "There is no role &#39;no-such-role&#39;"),
        ({"group_0": "+create"}, False, "Only administrators may create roles."),
        ({"group_0": "clerk"}, True, "saved by someone else"),
    ],
)
def test_a_refused_mapping_changes_nothing_and_says_why(
    designer, imported, db_session, choices, stale, message
):
    before = get_process(db_session, imported)
    revision, document = before.draft_revision, before.draft_document
    response = map_names(designer, imported, revision - 1 if stale else revision, **choices)
    assert response.status_code == 303
    assert "?failed=" in response.headers["Location"]
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert message in page and 'class="alert error-summary"' in page
    after = get_process(db_session, imported)
    assert (after.draft_revision, after.draft_document) == (revision, document)
    assert db_session.scalar(select(Role).where(Role.name == "accounting")) is None


def test_the_report_is_partition_scoped_and_needs_csrf(designer, user_with, imported):
    outsider = user_with(["processes.edit"], ["hr"])
    assert outsider.get(f"/designer/{imported}/import-report").status_code == 404
    assert outsider.post(f"/designer/{imported}/import-report/groups").status_code in (400, 404)
    refused = designer.post(
        f"/designer/{imported}/import-report/groups", data={"group_0": "clerk", "revision": 1}
    )
    assert refused.status_code == 400


def test_a_process_drawn_here_has_a_report_of_what_it_needs(designer, make_process):
    pid = make_process()
    page = report_page(designer, pid)
    assert "was not imported from a file" in page
    assert "Taken from the file" not in page


def test_a_user_who_does_not_exist_is_a_warning_mapped_on_the_report(
    designer, imported, db_session
):
    process = get_process(db_session, imported)
    warned = [p for p in process.draft_problems if p["code"] == "task.user_unknown"]
    assert [(p["element_id"], p["severity"]) for p in warned] == [("sign", "warning")]
    response = map_names(designer, imported, process.draft_revision, "users", user_0="alice")
    assert response.status_code == 303
    assert "Mapped demo → alice." in designer.get(response.headers["Location"]).get_data(
        as_text=True
    )
    sign = get_process(db_session, imported).draft_document["nodes"]["sign"]
    assert sign["config"]["assignee"] == {"type": "user", "value": "alice"}
    assert "Users that are not Flowdesk users" not in report_page(designer, imported)


def test_a_user_s_tasks_can_be_left_open_to_everyone(designer, imported, db_session):
    revision = get_process(db_session, imported).draft_revision
    assert map_names(designer, imported, revision, "users", user_0="+open").status_code == 303
    sign = get_process(db_session, imported).draft_document["nodes"]["sign"]
    assert "assignee" not in sign.get("config", {})
    refused = map_names(designer, imported, revision + 1, "teams", team_0="x")
    assert refused.status_code == 404


def test_a_tool_is_picked_on_the_report(designer, imported, db_session):
    page = report_page(designer, imported)
    assert '<select id="tool_0" name="tool_0">' in page and 'value="vars.set"' in page
    revision = get_process(db_session, imported).draft_revision
    response = map_names(designer, imported, revision, "tools", tool_0="vars.set")
    assert response.status_code == 303
    assert "Mapped crm-sync → vars.set." in designer.get(response.headers["Location"]).get_data(
        as_text=True
    )
    process = get_process(db_session, imported)
    assert process.draft_document["nodes"]["sync"]["config"]["tool"] == "vars.set"
    assert not any(p["code"].startswith("tool.") for p in process.draft_problems)
    page = report_page(designer, imported)
    assert "Tools that are not installed" not in page and "Restart the web server" not in page


def test_a_tool_that_is_not_installed_is_refused(designer, imported, db_session):
    revision = get_process(db_session, imported).draft_revision
    response = map_names(designer, imported, revision, "tools", tool_0="no.such")
    page = designer.get(response.headers["Location"]).get_data(as_text=True)
    assert "There is no installed tool &#39;no.such&#39; for &#39;crm-sync&#39;" in page
    assert get_process(db_session, imported).draft_revision == revision


def test_tasks_that_name_no_tool_are_picked_for_without_a_restart_hint(designer, db_session):
    xml = CAMUNDA.replace(b' camunda:type="external" camunda:topic="crm-sync"', b"")
    body = {
        "csrf_token": token(designer, "/designer/import"),
        "file": (io.BytesIO(xml), "claims.bpmn"),
        "partition": db_session.scalar(select(Partition.id).where(Partition.key == "finance")),
    }
    response = designer.post("/designer/import", data=body, content_type="multipart/form-data")
    pid = db_session.scalar(select(Process.id).where(Process.key == "claims"))
    page = report_page(designer, pid)
    assert '<th scope="row">(no tool named)</th>' in page
    assert "Restart the web server" not in page
    revision = get_process(db_session, pid).draft_revision
    assert map_names(designer, pid, revision, "tools", tool_0="vars.set").status_code == 303
    assert get_process(db_session, pid).draft_document["nodes"]["sync"]["config"]["tool"] == (
        "vars.set"
    ), response


def test_untitled_elements_and_flows_are_named_by_kind_and_neighbours(
    designer, imported, db_session
):
    flows = designer.get(f"/designer/{imported}/outline").get_data(as_text=True)
    assert "Check claim → Sync CRM" in flows
    assert "<h3>Start event before &#39;Check claim&#39; <span" in flows


def test_what_the_import_said_of_an_element_edited_since_is_settled(designer, imported, db_session):
    process = get_process(db_session, imported)
    page = report_page(designer, imported)
    assert "Script in &#39;groovy&#39; imported as written; rewrite it" in page
    assert "Settled since the import" not in page
    doc = copy.deepcopy(process.draft_document)
    doc["nodes"]["note"]["config"] = {"language": "flowdesk", "script": "x = 1"}
    processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    db_session.commit()
    page = report_page(designer, imported)
    settled = page.split("Settled since the import (1)")[1]
    assert "rewrite it" in settled and "Imported in part (1)" in page


def test_a_flow_s_settings_page_names_where_it_runs(designer, imported):
    page = designer.get(f"/designer/{imported}/outline/f2").get_data(as_text=True)
    assert "settings of Check claim → Sync CRM" in page
