"""Importing a BPMN file with business rule tasks: the import report names each decision that
is not published yet (with where to import its DMN file), and publishing waits for it."""

from __future__ import annotations

import io

from sqlalchemy import select

from tests.helpers.decision_tasks import publish_decision, table_dmn
from tests.helpers.designer import token
from tests.helpers.pages import text_of
from webapp.models import Partition, Process

INVOICE = b"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn" id="Defs" targetNamespace="x">
  <process id="invoice" name="Invoice" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="assignApprover"/>
    <businessRuleTask id="assignApprover" name="Assign Approver Group"
        camunda:resultVariable="approverGroups" camunda:decisionRef="invoice-assign-approver"
        camunda:mapDecisionResult="collectEntries"/>
    <sequenceFlow id="f2" sourceRef="assignApprover" targetRef="done"/>
    <endEvent id="done"/>
  </process>
</definitions>
"""


def test_the_report_names_the_decision_to_import_until_it_is_published(designer, db_session, demo):
    finance = db_session.scalar(select(Partition.id).where(Partition.key == "finance"))
    body = {
        "csrf_token": token(designer, "/designer/import"),
        "file": (io.BytesIO(INVOICE), "invoice.bpmn"),
        "partition": finance,
    }
    response = designer.post("/designer/import", data=body, content_type="multipart/form-data")
    assert response.status_code == 302, response.get_data(as_text=True)
    process = db_session.scalar(select(Process).where(Process.key == "invoice"))
    assert "decision.unpublished" in {problem["code"] for problem in process.draft_problems}
    html = designer.get(f"/designer/{process.id}/import-report").get_data(as_text=True)
    assert '<a href="/designer/decisions/import">Import a DMN file</a>' in html
    page = text_of(html)
    assert "Decisions not imported yet" in page
    assert "Decision 'invoice-assign-approver': not imported yet — import its DMN file" in page
    assert "Assign Approver Group" in page
    assert "evaluates decision invoice-assign-approver" in page  # taken from the file

    rules = [('"accounting"', '"accounting"')]
    publish_decision(
        table_dmn(
            "invoice-assign-approver",
            rules,
            input_text="category",
            input_type="string",
            output="group",
            output_type="string",
        ),
        "invoice-rules",
        partition="finance",
    )
    page = text_of(designer.get(f"/designer/{process.id}/import-report").get_data(as_text=True))
    assert "Decisions not imported yet" not in page
    db_session.refresh(process)
    stored = {problem["code"] for problem in process.draft_problems}
    assert "decision.unpublished" not in stored, "the processes list reads these"
