"""Engine test files of other tools (jBPM, Zeebe) import and publish: modelling-only elements
are kept, empty scripts run as no-ops, short durations, Java conditions and FEEL lists translate."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.designer import finance, publish, upload, versions
from webapp.models import Process
from webapp.process import document as documents
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.kinds import EMPTY_SCRIPT
from webapp.process.validation import validate

JBPM = b"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xmlns:drools="http://www.jboss.org/drools" id="Defs" targetNamespace="x">
  <process id="jbpm_engine" name="Engine test" isExecutable="true">
    <startEvent id="_1"/>
    <sequenceFlow id="_1-_2" sourceRef="_1" targetRef="_2"/>
    <scriptTask id="_2" name="Nothing" scriptFormat="http://www.java.com/java">
      <script></script>
    </scriptTask>
    <sequenceFlow id="_2-_3" sourceRef="_2" targetRef="_3"/>
    <intermediateCatchEvent id="_3" name="Wait">
      <timerEventDefinition>
        <timeDuration xsi:type="tFormalExpression">1s</timeDuration>
      </timerEventDefinition>
    </intermediateCatchEvent>
    <sequenceFlow id="_3-_4" sourceRef="_3" targetRef="_4"/>
    <userTask id="_4" name="Form">
      <rendering id="r1"/>
    </userTask>
    <sequenceFlow id="_4-_5" sourceRef="_4" targetRef="_5"/>
    <exclusiveGateway id="_5" default="_5-_7"/>
    <sequenceFlow id="_5-_6" sourceRef="_5" targetRef="_6">
      <conditionExpression xsi:type="tFormalExpression"
          language="http://www.java.com/java">return amount &gt; 5;</conditionExpression>
    </sequenceFlow>
    <sequenceFlow id="_5-_7" sourceRef="_5" targetRef="_7"/>
    <endEvent id="_6"/>
    <endEvent id="_7"/>
  </process>
</definitions>
"""


def imported(designer, db_session, content: bytes) -> Process:
    response = upload(designer, "/designer/import", content, partition=finance(db_session))
    assert response.status_code == 302, response.get_data(as_text=True)
    return db_session.scalar(select(Process).where(Process.key == "jbpm_engine"))


def test_a_jbpm_engine_file_imports_and_publishes(designer, db_session):
    process = imported(designer, db_session, JBPM)
    nodes = process.draft_document["nodes"]
    assert nodes["_3"]["config"]["duration"] == "PT1S"
    assert process.draft_document["flows"]["_5-_6"]["condition"] == "$vars.amount > 5"
    assert [k["tag"] for k in nodes["_4"]["kept"]] == ["rendering"]
    assert [p for p in process.draft_problems if p["severity"] == "error"] == []
    assert not [p for p in process.draft_problems if "emptyInFile" in p["message"]]
    page = designer.get(f"/designer/{process.id}/import-report").get_data(as_text=True)
    assert "runs as a no-op" in page
    assert "1 rendering" in page
    assert publish(designer, process.id, revision=process.draft_revision).status_code == 302
    assert len(versions(db_session, process.id)) == 1


def test_a_condition_that_is_not_exact_java_stays_a_publish_error(designer, db_session):
    content = JBPM.replace(b"return amount &gt; 5;", b'return name == "x";')
    process = imported(designer, db_session, content)
    assert process.draft_document["flows"]["_5-_6"]["condition"] == 'return name == "x";'
    errors = [p for p in process.draft_problems if p["severity"] == "error"]
    assert [p["element_id"] for p in errors] == ["_5-_6"]


def test_a_feel_list_translates(designer, db_session):
    content = JBPM.replace(
        b'\n          language="http://www.java.com/java">return amount &gt; 5;',
        b'>= os = ["ubuntu", "windows", "macos"]',
    )
    process = imported(designer, db_session, content)
    condition = process.draft_document["flows"]["_5-_6"]["condition"]
    assert condition == "$vars.os == ['ubuntu', 'windows', 'macos']"


def test_an_empty_script_drawn_in_flowdesk_stays_an_error():
    doc = {
        "nodes": {
            "s": {"kind": "startEvent"},
            "calc": {"kind": "scriptTask", "config": {"script": "", "language": "groovy"}},
            "e": {"kind": "endEvent"},
        },
        "flows": {"f1": {"source": "s", "target": "calc"}, "f2": {"source": "calc", "target": "e"}},
    }
    again = import_bpmn(export_bpmn(documents.normalize(doc)).encode()).document
    assert EMPTY_SCRIPT not in again["nodes"]["calc"]["config"]
    errors = [p.code for p in validate(again, {}) if p.element_id == "calc"]
    assert "config.missing" in errors


def test_an_empty_script_from_a_tool_that_does_not_run_it_stays_an_error(designer, db_session):
    content = JBPM.replace(b'xmlns:drools="http://www.jboss.org/drools"', b"")
    content = content.replace(b"drools:", b"")
    process = imported(designer, db_session, content)
    script_ids = [
        node_id
        for node_id, node in process.draft_document["nodes"].items()
        if node["kind"] == "scriptTask"
    ]
    assert script_ids
    errors = {p["element_id"] for p in process.draft_problems if p["severity"] == "error"}
    assert set(script_ids) <= errors
