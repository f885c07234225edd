"""Business rule tasks on BPMN import and export: each vendor's decision reference, binding and
result variable read into the task's config and written back in the vendor's own form."""

from __future__ import annotations

from typing import Any

from lxml import etree

from tests.helpers.bpmn import CAMUNDA, ZEEBE, codes, element, same_after_round_trip, wrap
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.validation import validate

SPIFF = "http://spiffworkflow.org/bpmn/schema/1.0/core"


def imported(xml: str) -> tuple[dict[str, Any], set[str]]:
    result = import_bpmn(xml)
    assert result.unsupported == []
    return result.document["nodes"]["n1"], codes(result)


def test_camunda_7_decision_ref_with_a_version_binding_and_result_variable() -> None:
    node, _ = imported(
        wrap(
            '<{p}businessRuleTask id="n1" name="Assign" camunda:decisionRef="assign-approver"'
            ' camunda:decisionRefBinding="version" camunda:decisionRefVersion="3"'
            ' camunda:resultVariable="approvers" camunda:mapDecisionResult="collectEntries"/>'
        )
    )
    assert node["kind"] == "businessRuleTask"
    config = node["config"]
    assert config["decision"] == "assign-approver"
    assert (config["binding"], config["version"], config["saveTo"]) == ("version", 3, "approvers")
    exported = same_after_round_trip(import_bpmn_doc(node))
    task = element(exported, "n1")
    assert task.get(f"{{{CAMUNDA}}}decisionRef") == "assign-approver"
    assert task.get(f"{{{CAMUNDA}}}decisionRefVersion") == "3"
    assert task.get(f"{{{CAMUNDA}}}mapDecisionResult") == "collectEntries"


def import_bpmn_doc(node: dict[str, Any]) -> dict[str, Any]:
    """A one-task document around `node` (start -> n1 -> end)."""
    return {
        "nodes": {
            "s": {"kind": "startEvent", "title": "", "config": {}},
            "n1": node,
            "e": {"kind": "endEvent", "title": "", "config": {}},
        },
        "flows": {
            "f0": {"source": "s", "target": "n1"},
            "f1": {"source": "n1", "target": "e"},
        },
    }


def test_a_changed_decision_is_what_export_writes_in_the_vendor_attribute() -> None:
    node, _ = imported(wrap('<{p}businessRuleTask id="n1" camunda:decisionRef="old"/>'))
    node["config"]["decision"] = "new-decision"
    task = element(export_bpmn(import_bpmn_doc(node)), "n1")
    assert task.get(f"{{{CAMUNDA}}}decisionRef") == "new-decision"


def test_deployment_binding_is_the_latest_version_with_a_warning() -> None:
    node, found = imported(
        wrap(
            '<{p}businessRuleTask id="n1" camunda:decisionRef="d"'
            ' camunda:decisionRefBinding="deployment"/>'
        )
    )
    assert node["config"].get("binding", "latest") == "latest"
    assert "version" not in node["config"]
    assert "import.decision_binding" in found


def test_a_result_list_mapping_is_reported_since_flowdesk_shapes_results_by_hit_policy() -> None:
    _, found = imported(
        wrap('<{p}businessRuleTask id="n1" camunda:decisionRef="d" camunda:resultVariable="r"/>')
    )
    assert "import.decision_result" in found


def test_zeebe_called_decision() -> None:
    node, _ = imported(
        wrap(
            '<{p}businessRuleTask id="n1"><{p}extensionElements>'
            '<zeebe:calledDecision decisionId="risk_check" resultVariable="result"/>'
            "</{p}extensionElements></{p}businessRuleTask>"
        )
    )
    assert node["config"]["decision"] == "risk_check"
    assert node["config"]["saveTo"] == "result"
    task = element(same_after_round_trip(import_bpmn_doc(node)), "n1")
    called = task.find(f".//{{{ZEEBE}}}calledDecision")
    assert called is not None and called.get("decisionId") == "risk_check"


def test_spiffarena_called_decision_id() -> None:
    node, _ = imported(
        wrap(
            f'<{{p}}businessRuleTask id="n1" xmlns:spiffworkflow="{SPIFF}"><{{p}}extensionElements>'
            "<spiffworkflow:calledDecisionId>my_decision</spiffworkflow:calledDecisionId>"
            "</{p}extensionElements></{p}businessRuleTask>"
        )
    )
    assert node["config"]["decision"] == "my_decision"
    task = element(same_after_round_trip(import_bpmn_doc(node)), "n1")
    assert [e.text for e in task.iter(f"{{{SPIFF}}}calledDecisionId")] == ["my_decision"]


def test_flowable_decision_table_reference_key_and_throw_on_no_hits() -> None:
    node, _ = imported(
        wrap(
            '<{p}businessRuleTask id="n1"><{p}extensionElements>'
            '<flowable:field name="decisionTableReferenceKey" stringValue="discounts"/>'
            '<flowable:field name="decisionTaskThrowErrorOnNoHits">'
            "<flowable:string>true</flowable:string></flowable:field>"
            "</{p}extensionElements></{p}businessRuleTask>"
        )
    )
    assert node["config"]["decision"] == "discounts"
    assert node["config"]["required"] is True


def test_a_java_class_is_kept_for_export_and_the_missing_decision_named() -> None:
    xml = wrap('<{p}businessRuleTask id="n1" name="Rate" camunda:class="org.example.Rate"/>')
    result = import_bpmn(xml)
    assert "import.decision_implementation" in codes(result)
    problems = validate(result.document)
    missing = [p for p in problems if p.code == "config.missing" and p.element_id == "n1"]
    assert missing and "decision" in missing[0].message
    task = element(export_bpmn(result.document), "n1")
    assert task.get(f"{{{CAMUNDA}}}class") == "org.example.Rate"


def test_a_zeebe_job_worker_is_written_back() -> None:
    node, found = imported(
        wrap(
            '<{p}businessRuleTask id="n1"><{p}extensionElements>'
            '<zeebe:taskDefinition type="rate-worker"/>'
            "</{p}extensionElements></{p}businessRuleTask>"
        )
    )
    assert "import.decision_implementation" in found
    task = element(export_bpmn(import_bpmn_doc(node)), "n1")
    worker = task.find(f".//{{{ZEEBE}}}taskDefinition")
    assert worker is not None and worker.get("type") == "rate-worker"


def test_an_expression_as_decision_is_reported_not_imported() -> None:
    node, found = imported(wrap('<{p}businessRuleTask id="n1" camunda:decisionRef="${d}"/>'))
    assert "decision" not in node["config"]
    assert "import.decision_ref" in found


def test_a_flowdesk_document_round_trips_with_every_setting() -> None:
    node = {
        "kind": "businessRuleTask",
        "title": "Classify",
        "config": {
            "decision": "classify",
            "binding": "version",
            "version": 2,
            "saveTo": "klass",
            "required": True,
        },
    }
    exported = same_after_round_trip(import_bpmn_doc(node))
    assert etree.fromstring(exported.encode()) is not None
    again = import_bpmn(exported).document["nodes"]["n1"]["config"]
    assert again["required"] is True and again["version"] == 2


def test_an_external_task_topic_is_kept_for_export_with_the_decision_chosen_since() -> None:
    xml = wrap('<{p}businessRuleTask id="n1" camunda:type="external" camunda:topic="rates"/>')
    result = import_bpmn(xml)
    node = result.document["nodes"]["n1"]
    assert node["config"]["implementation"]["topic"] == "rates"
    node["config"]["decision"] = "rates"
    task = element(same_after_round_trip(result.document), "n1")
    assert task.get(f"{{{CAMUNDA}}}topic") == "rates"
    assert task.get(f"{{{CAMUNDA}}}type") == "external"
    assert task.get(f"{{{CAMUNDA}}}decisionRef") == "rates"
