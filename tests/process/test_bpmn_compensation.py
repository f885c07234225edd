"""Compensation and transactions in BPMN files: what import reads (handlers from associations,
`activityRef`, `waitForCompletion`, transactions with their nodes, cancel events) and what
export writes back, so that a file goes round without loss."""

from __future__ import annotations

from lxml import etree

from tests.helpers.bpmn import definitions
from tests.helpers.compensation import saga
from webapp.process.bpmn import export_bpmn, import_bpmn
from webapp.process.bpmn.namespaces import FLOWDESK
from webapp.process.document import canonical_json, normalize

MODEL = "{http://www.omg.org/spec/BPMN/20100524/MODEL}"

BODY = """
  <{p}process id="trip" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="tx"/>
    <{p}transaction id="tx" name="Book">
      <{p}startEvent id="tx_s"/>
      <{p}sequenceFlow id="t1" sourceRef="tx_s" targetRef="book"/>
      <{p}serviceTask id="book" name="Book hotel"/>
      <{p}boundaryEvent id="booked" attachedToRef="book"><{p}compensateEventDefinition/>
      </{p}boundaryEvent>
      <{p}serviceTask id="cancel_hotel" name="Cancel hotel" isForCompensation="true"/>
      <{p}association id="a1" sourceRef="booked" targetRef="cancel_hotel"/>
      <{p}sequenceFlow id="t2" sourceRef="book" targetRef="give_up"/>
      <{p}endEvent id="give_up"><{p}cancelEventDefinition/></{p}endEvent>
    </{p}transaction>
    <{p}boundaryEvent id="on_cancel" attachedToRef="tx"><{p}cancelEventDefinition/>
    </{p}boundaryEvent>
    <{p}sequenceFlow id="f2" sourceRef="on_cancel" targetRef="undo"/>
    <{p}intermediateThrowEvent id="undo">
      <{p}compensateEventDefinition activityRef="tx" waitForCompletion="false"/>
    </{p}intermediateThrowEvent>
    <{p}sequenceFlow id="f3" sourceRef="undo" targetRef="e"/>
    <{p}sequenceFlow id="f4" sourceRef="tx" targetRef="e"/>
    <{p}endEvent id="e"><{p}compensateEventDefinition/></{p}endEvent>
  </{p}process>
"""


def test_compensation_and_transactions_import_as_their_kinds() -> None:
    result = import_bpmn(definitions(BODY))
    assert result.unsupported == []
    nodes = result.document["nodes"]
    assert nodes["tx"]["kind"] == "transaction"
    assert nodes["book"]["parent"] == nodes["cancel_hotel"]["parent"] == "tx"
    assert nodes["booked"]["config"] == {
        "attachedTo": "book",
        "event": "compensate",
        "handler": "cancel_hotel",
    }
    assert nodes["give_up"]["config"] == {"event": "cancel"}
    assert nodes["on_cancel"]["config"]["event"] == "cancel"
    assert nodes["undo"]["kind"] == "compensationThrow"
    assert nodes["undo"]["config"] == {"activity": "tx", "waitForCompletion": False}
    assert nodes["e"]["config"] == {"event": "compensate"}


def test_the_diagram_association_names_the_handler_over_stale_extension_data() -> None:
    body = BODY.replace(
        "<{p}compensateEventDefinition/>\n      </{p}boundaryEvent>",
        '<{p}extensionElements><fd:config>{{"handler": "book"}}</fd:config>'
        "</{p}extensionElements><{p}compensateEventDefinition/>\n      </{p}boundaryEvent>",
        1,
    )
    xml = definitions(body, extra_ns=f'xmlns:fd="{FLOWDESK}"')
    assert import_bpmn(xml).document["nodes"]["booked"]["config"]["handler"] == "cancel_hotel"


def _associations(xml: str) -> list[tuple[str | None, str | None]]:
    root = etree.fromstring(xml.encode())
    return [(a.get("sourceRef"), a.get("targetRef")) for a in root.iter(f"{MODEL}association")]


def test_export_writes_handlers_associations_and_definitions_back() -> None:
    doc = saga(activity="book_flight")
    doc["nodes"]["throw0"]["config"]["waitForCompletion"] = False
    xml = export_bpmn(doc)
    root = etree.fromstring(xml.encode())
    handlers = {e.get("id") for e in root.iter() if e.get("isForCompensation") == "true"}
    assert handlers == {"undo_flight", "undo_hotel"}
    assert sorted(_associations(xml)) == [
        ("comp_flight", "undo_flight"),
        ("comp_hotel", "undo_hotel"),
    ]
    definition = next(root.iter(f"{MODEL}compensateEventDefinition"))
    throw = [d for d in root.iter(f"{MODEL}compensateEventDefinition") if d.get("activityRef")]
    assert definition is not None
    assert [(d.get("activityRef"), d.get("waitForCompletion")) for d in throw] == [
        ("book_flight", "false")
    ]
    edges = {e.get("bpmnElement") for e in root.iter() if e.tag.endswith("BPMNEdge")}
    assert {"comp_flight_handler", "comp_hotel_handler"} <= edges
    assert canonical_json(import_bpmn(xml).document["nodes"]) == canonical_json(
        normalize(doc)["nodes"]
    )


def test_a_file_goes_round_with_one_association_per_handler() -> None:
    first = import_bpmn(definitions(BODY)).document
    again = export_bpmn(first)
    assert _associations(again) == [("booked", "cancel_hotel")]
    back = import_bpmn(again).document
    assert canonical_json(back["nodes"]) == canonical_json(first["nodes"])
    assert _associations(export_bpmn(back)) == [("booked", "cancel_hotel")]


VENDOR_NS = (
    'xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" '
    'xmlns:camunda="http://camunda.org/schema/1.0/bpmn" '
    'xmlns:flowable="http://flowable.org/bpmn" '
    'xmlns:spiffworkflow="http://spiffworkflow.org/bpmn/schema/1.0/core"'
)
VENDOR_HANDLERS = {
    "zeebe": '<{p}extensionElements><zeebe:taskDefinition type="refund-card"/>'
    "</{p}extensionElements>",
    "camunda": "",
    "flowable": "",
    "spiff": '<{p}extensionElements><spiffworkflow:serviceTaskOperator id="refund-card"/>'
    "</{p}extensionElements>",
}
VENDOR_ATTRIBUTES = {
    "zeebe": "",
    "camunda": 'camunda:type="external" camunda:topic="refund-card"',
    "flowable": 'flowable:type="external" flowable:topic="refund-card"',
    "spiff": "",
}


def test_a_handler_keeps_its_vendor_tool_settings_from_each_engine() -> None:
    for vendor, children in VENDOR_HANDLERS.items():
        body = f"""
  <{{p}}process id="p" isExecutable="true">
    <{{p}}startEvent id="s"/>
    <{{p}}sequenceFlow id="f1" sourceRef="s" targetRef="charge"/>
    <{{p}}serviceTask id="charge"/>
    <{{p}}boundaryEvent id="charged" attachedToRef="charge"><{{p}}compensateEventDefinition/>
    </{{p}}boundaryEvent>
    <{{p}}serviceTask id="refund" isForCompensation="true" {VENDOR_ATTRIBUTES[vendor]}>
      {children}
    </{{p}}serviceTask>
    <{{p}}association id="a1" sourceRef="charged" targetRef="refund"/>
    <{{p}}sequenceFlow id="f2" sourceRef="charge" targetRef="e"/>
    <{{p}}endEvent id="e"><{{p}}compensateEventDefinition/></{{p}}endEvent>
  </{{p}}process>
"""
        result = import_bpmn(definitions(body, extra_ns=VENDOR_NS))
        assert result.unsupported == [], vendor
        nodes = result.document["nodes"]
        assert nodes["refund"]["config"]["tool"] == "refund-card", vendor
        assert nodes["charged"]["config"]["handler"] == "refund", vendor


COLLAPSED = """<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"
  xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
  xmlns:dc="http://www.omg.org/spec/DD/20100524/DC" id="d" targetNamespace="http://example.com">
  <bpmn:process id="p" isExecutable="true">
    <bpmn:startEvent id="s"/>
    <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="tx"/>
    <bpmn:transaction id="tx" name="Pay">
      <bpmn:startEvent id="inner"/>
      <bpmn:textAnnotation id="InnerNote"><bpmn:text>inside</bpmn:text></bpmn:textAnnotation>
    </bpmn:transaction>
    <bpmn:sequenceFlow id="f2" sourceRef="tx" targetRef="e"/>
    <bpmn:endEvent id="e"/>
  </bpmn:process>
  <bpmndi:BPMNDiagram id="D1"><bpmndi:BPMNPlane id="P1" bpmnElement="p">
    <bpmndi:BPMNShape id="s_di" bpmnElement="s"><dc:Bounds x="0" y="0" width="36" height="36"/>
    </bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="tx_di" bpmnElement="tx" isExpanded="false">
      <dc:Bounds x="100" y="0" width="100" height="80"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="e_di" bpmnElement="e"><dc:Bounds x="300" y="0" width="36" height="36"/>
    </bpmndi:BPMNShape>
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
  <bpmndi:BPMNDiagram id="D2"><bpmndi:BPMNPlane id="P2" bpmnElement="tx">
    <bpmndi:BPMNShape id="inner_di" bpmnElement="inner">
      <dc:Bounds x="100" y="100" width="36" height="36"/></bpmndi:BPMNShape>
    <bpmndi:BPMNShape id="InnerNote_di" bpmnElement="InnerNote">
      <dc:Bounds x="200" y="100" width="100" height="30"/></bpmndi:BPMNShape>
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
</bpmn:definitions>
"""


def test_a_collapsed_transaction_keeps_its_annotation_on_its_own_plane() -> None:
    result = import_bpmn(COLLAPSED)
    assert result.unsupported == []
    assert result.document["nodes"]["tx"]["config"]["collapsed"] is True
    on_plane = {e["element"]["attrs"]["id"]: e["plane"] for e in result.document["kept"]["diagram"]}
    assert on_plane["InnerNote_di"] == "tx"
    root = etree.fromstring(export_bpmn(result.document).encode())
    shape = next(e for e in root.iter() if e.get("id") == "InnerNote_di")
    assert shape.getparent().get("bpmnElement") == "tx"


def test_a_second_handler_association_is_a_warning_naming_both() -> None:
    body = BODY.replace(
        '<{p}association id="a1" sourceRef="booked" targetRef="cancel_hotel"/>',
        '<{p}association id="a1" sourceRef="booked" targetRef="cancel_hotel"/>'
        '<{p}association id="a2" sourceRef="booked" targetRef="book"/>',
    )
    result = import_bpmn(definitions(body))
    assert result.document["nodes"]["booked"]["config"]["handler"] == "cancel_hotel"
    (warning,) = [w for w in result.warnings if w.code == "import.compensation_handlers"]
    assert warning.element_id == "booked"
    assert "'cancel_hotel' and 'book'" in warning.message
