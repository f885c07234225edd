"""BPMN import and export of sub-processes, call activities, multi-instance, boundary events and
error, escalation and terminate events: standard elements, round trip, XSD and bpmn-moddle."""

from __future__ import annotations

import gc
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from tests.helpers.bpmn import bpmn_schema, codes, definitions, full_document, structured_document
from tests.helpers.requirements import moddle_node
from webapp.process.bpmn import BpmnImportError, auto_layout, export_bpmn, import_bpmn
from webapp.process.bpmn.layout import node_box
from webapp.process.bpmn.namespaces import BPMN, BPMNDI, FLOWDESK, q
from webapp.process.document import canonical_json, normalize
from webapp.process.validation import validate

REPO = Path(__file__).resolve().parents[2]
ZEEBE = "http://camunda.org/schema/zeebe/1.0"
CAMUNDA = "http://camunda.org/schema/1.0/bpmn"
BPMNDI_NS = 'xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"'
DC_NS = 'xmlns:dc="http://www.omg.org/spec/DD/20100524/DC"'


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return bpmn_schema()


def by_id(root: etree._Element) -> dict[str, etree._Element]:
    return {e.get("id"): e for e in root.iter() if isinstance(e.tag, str) and e.get("id")}


def test_structured_document_roundtrips_identically(schema: etree.XMLSchema) -> None:
    doc = structured_document()
    xml = export_bpmn(doc)
    assert schema.validate(etree.fromstring(xml.encode())), schema.error_log.last_error
    result = import_bpmn(xml)
    assert result.unsupported == []
    assert result.warnings == []
    assert canonical_json(result.document) == canonical_json(normalize(doc))
    assert export_bpmn(result.document) == xml


def test_structured_document_without_positions_roundtrips(schema: etree.XMLSchema) -> None:
    doc = structured_document()
    for node in doc["nodes"].values():
        del node["position"]
    xml = export_bpmn(doc)
    assert schema.validate(etree.fromstring(xml.encode())), schema.error_log.last_error
    back = import_bpmn(xml).document
    assert canonical_json(back) == canonical_json(normalize(doc))


def test_export_writes_structure_as_standard_bpmn() -> None:
    root = etree.fromstring(export_bpmn(structured_document()).encode())
    elements = by_id(root)
    process = root.find(q(BPMN, "process"))
    review = elements["review"]
    assert review.tag == q(BPMN, "subProcess") and review.getparent() is process
    assert review.get("triggeredByEvent") is None
    assert elements["r_check"].getparent() is review
    assert elements["r1"].getparent() is review  # flows live in their sub-process
    loop = review.find(q(BPMN, "multiInstanceLoopCharacteristics"))
    assert loop.get("isSequential") == "true"
    assert loop.find(q(BPMN, "completionCondition")).text == "$loop.completed >= 2"
    assert elements["call"].tag == q(BPMN, "callActivity")
    assert elements["call"].get("calledElement") == "shipping"
    cardinality = elements["call"].find(f"{q(BPMN, 'multiInstanceLoopCharacteristics')}/*")
    assert (cardinality.tag, cardinality.text) == (q(BPMN, "loopCardinality"), "2")
    assert elements["on_cancel"].get("triggeredByEvent") == "true"
    oc_start = elements["oc_start"]
    assert oc_start.get("isInterrupting") == "false"
    assert oc_start.find(q(BPMN, "messageEventDefinition")).get("messageRef")
    remind = elements["remind"]
    assert (remind.get("attachedToRef"), remind.get("cancelActivity")) == ("r_check", "false")
    cycle = remind.find(f"{q(BPMN, 'timerEventDefinition')}/{q(BPMN, 'timeCycle')}")
    assert cycle.text == "R/P1D"
    assert elements["late"].get("cancelActivity") is None
    error_ref = elements["rejected"].find(q(BPMN, "errorEventDefinition")).get("errorRef")
    assert elements[error_ref].tag == q(BPMN, "error")
    assert elements[error_ref].get("errorCode") == "REJECTED"
    assert elements[error_ref].getparent() is root
    fail_ref = elements["r_fail"].find(q(BPMN, "errorEventDefinition")).get("errorRef")
    assert fail_ref == error_ref  # one bpmn:error per code
    assert elements["any_error"].find(q(BPMN, "errorEventDefinition")).get("errorRef") is None
    escalation = elements["r_escalate"]
    assert escalation.tag == q(BPMN, "intermediateThrowEvent")
    ref = escalation.find(q(BPMN, "escalationEventDefinition")).get("escalationRef")
    assert elements[ref].get("escalationCode") == "LATE"
    assert elements["stop"].find(q(BPMN, "terminateEventDefinition")) is not None
    # what standard BPMN said is not repeated in our extension
    config = elements["remind"].find(f"{q(BPMN, 'extensionElements')}")
    assert config is None


def test_collapsed_sub_processes_get_a_plane_of_their_own() -> None:
    root = etree.fromstring(export_bpmn(structured_document()).encode())
    planes = {
        p.get("bpmnElement"): {s.get("bpmnElement") for s in p}
        for p in root.iter(q(BPMNDI, "BPMNPlane"))
    }
    assert list(planes) == ["orders", "pack", "on_error"]
    assert planes["pack"] == {"p_start", "p_task", "p_end", "p1", "p2"}
    assert planes["on_error"] == {"oe_start", "oe_end", "o2"}
    assert {"review", "r_check", "remind", "r1", "pack", "on_error"} <= planes["orders"]
    shapes = {s.get("bpmnElement"): s for s in root.iter(q(BPMNDI, "BPMNShape"))}
    assert shapes["review"].get("isExpanded") == "true"
    assert shapes["pack"].get("isExpanded") == "false"
    assert shapes["on_cancel"].get("isExpanded") == "true"


def test_node_order_survives_nesting() -> None:
    doc = structured_document()
    nodes = doc["nodes"]
    doc["nodes"] = {"end": nodes.pop("end"), "r_end": nodes.pop("r_end"), **nodes}
    doc["flows"] = dict(reversed(doc["flows"].items()))
    back = import_bpmn(export_bpmn(doc)).document
    assert list(back["nodes"]) == list(doc["nodes"])
    assert list(back["flows"]) == list(doc["flows"])


def test_order_is_not_written_when_reading_gives_it() -> None:
    doc = full_document()
    root = etree.fromstring(export_bpmn(doc).encode())
    assert root.find(f".//{q(FLOWDESK, 'order')}") is None


def test_awkward_structured_values_survive() -> None:
    doc = structured_document()
    nodes = doc["nodes"]
    nodes["late"]["config"] = {"attachedTo": "nowhere", "event": "timer", "duration": "P1D"}
    nodes["rejected"]["config"]["code"] = ""
    nodes["any_error"]["config"]["interrupting"] = "sometimes"
    nodes["boss"]["config"]["event"] = "link"
    nodes["call"]["config"]["process"] = "not a key"
    nodes["call"]["config"]["multiInstance"] = {}
    nodes["review"]["config"]["multiInstance"] = "many"
    nodes["pack"]["config"]["collapsed"] = False
    nodes["on_cancel"]["config"] = {"collapsed": "yes"}
    nodes["start"]["config"] = {"event": "timer", "cycle": "R/PT1H", "interrupting": False}
    nodes["oc_start"]["config"]["cycle"] = " 'R/P1D' "
    nodes["stop"]["config"] = {"event": "", "code": "X"}
    nodes["r_escalate"]["config"] = {"code": " padded "}
    back = import_bpmn(export_bpmn(doc))
    assert back.unsupported == []
    assert canonical_json(back.document) == canonical_json(normalize(doc))


def test_moddle_reads_our_exports_without_warnings(tmp_path: Path) -> None:
    node = moddle_node()
    no_positions = structured_document()
    for item in no_positions["nodes"].values():
        del item["position"]
    files = []
    for name, doc in (
        ("structured", structured_document()),
        ("generated", no_positions),
        ("flat", full_document()),
    ):
        path = tmp_path / f"{name}.bpmn"
        path.write_text(export_bpmn(doc), encoding="utf-8")
        files.append(str(path))
    script = REPO / "tests/process/moddle_read.mjs"
    extension = REPO / "static/js/flowdesk-moddle.json"
    output = subprocess.run(
        [node, str(script), str(extension), *files],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert json.loads(output) == {path: [] for path in files}


# --- other tools' files --------------------------------------------------------------------------


def shape(element_id: str, x: int, y: int, w: int = 36, h: int = 36, extra: str = "") -> str:
    bounds = f'<dc:Bounds x="{x}" y="{y}" width="{w}" height="{h}"/>'
    return f'<bpmndi:BPMNShape id="{element_id}_di" bpmnElement="{element_id}"{extra}>{bounds}' + (
        "</bpmndi:BPMNShape>"
    )


COLLAPSED = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}subProcess id="sub" name="Collapsed">
      <{p}incoming>f1</{p}incoming>
      <{p}outgoing>f2</{p}outgoing>
      <{p}startEvent id="s2"/>
      <{p}endEvent id="e2"/>
      <{p}sequenceFlow id="f3" sourceRef="s2" targetRef="e2"/>
    </{p}subProcess>
    <{p}subProcess id="open">
      <{p}startEvent id="s3"/>
      <{p}endEvent id="e3"/>
      <{p}sequenceFlow id="f5" sourceRef="s3" targetRef="e3"/>
    </{p}subProcess>
    <{p}endEvent id="e"/>
    <{p}sequenceFlow id="f1" sourceRef="s" targetRef="sub"/>
    <{p}sequenceFlow id="f2" sourceRef="sub" targetRef="open"/>
    <{p}sequenceFlow id="f4" sourceRef="open" targetRef="e"/>
  </{p}process>
  <bpmndi:BPMNDiagram id="d1"><bpmndi:BPMNPlane id="pl1" bpmnElement="p">
    SHAPES_1
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
  <bpmndi:BPMNDiagram id="d2"><bpmndi:BPMNPlane id="pl2" bpmnElement="sub">
    SHAPES_2
  </bpmndi:BPMNPlane></bpmndi:BPMNDiagram>
""".replace(
    "SHAPES_1",
    shape("s", 10, 20)
    + shape("sub", 100, 0, 100, 80)
    + shape("open", 300, 0, 300, 200, ' isExpanded="true"')
    + shape("s3", 320, 50)
    + shape("e3", 500, 50)
    + shape("e", 700, 20),
).replace("SHAPES_2", shape("s2", 180, 160) + shape("e2", 400, 160))


def test_bpmn_js_collapsed_sub_process_with_its_own_plane() -> None:
    result = import_bpmn(definitions(COLLAPSED, extra_ns=f"{BPMNDI_NS} {DC_NS}"))
    assert result.unsupported == []
    nodes = result.document["nodes"]
    assert list(nodes) == ["s", "sub", "s2", "e2", "open", "s3", "e3", "e"]
    assert nodes["sub"]["config"] == {"collapsed": True}
    assert nodes["open"]["config"] == {}
    assert [nodes[n].get("parent") for n in ("s2", "e2", "s3", "e")] == ["sub", "sub", "open", None]
    assert nodes["s2"]["position"] == {"x": 180, "y": 160, "width": 36, "height": 36}
    assert list(result.document["flows"]) == ["f1", "f2", "f4", "f3", "f5"]


def vendor(body: str) -> Any:
    extra = f'xmlns:zeebe="{ZEEBE}" xmlns:camunda="{CAMUNDA}"'
    return import_bpmn(definitions(body, extra_ns=extra))


VENDOR_STRUCTURE = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}userTask id="c7" camunda:assignee="${{reviewer}}">
      <{p}multiInstanceLoopCharacteristics camunda:collection="${{reviewers}}"
          camunda:elementVariable="reviewer">
        <{p}completionCondition>${{nrOfCompletedInstances >= 2 and loopCounter > 0}}
        </{p}completionCondition>
      </{p}multiInstanceLoopCharacteristics>
    </{p}userTask>
    <{p}serviceTask id="c8">
      <{p}extensionElements><zeebe:taskDefinition type="mail"/></{p}extensionElements>
      <{p}multiInstanceLoopCharacteristics isSequential="true">
        <{p}extensionElements>
          <zeebe:loopCharacteristics inputCollection="=items" inputElement="item"
              outputCollection="results" outputElement="=result"/>
        </{p}extensionElements>
        <{p}completionCondition>=loopCounter &gt;= 3</{p}completionCondition>
      </{p}multiInstanceLoopCharacteristics>
    </{p}serviceTask>
    <{p}callActivity id="call8">
      <{p}extensionElements><zeebe:calledElement processId="shipping"/></{p}extensionElements>
    </{p}callActivity>
    <{p}callActivity id="call7" calledElement="billing" camunda:calledElementBinding="version"
        camunda:calledElementVersion="4">
      <{p}extensionElements>
        <camunda:in source="amount" target="total"/>
        <camunda:in sourceExpression="${{order.id}}" target="order"/>
        <camunda:out source="paid" target="paid"/>
      </{p}extensionElements>
      <{p}multiInstanceLoopCharacteristics><{p}loopCardinality>3</{p}loopCardinality>
      </{p}multiInstanceLoopCharacteristics>
    </{p}callActivity>
    <{p}scriptTask id="spiff">
      <{p}multiInstanceLoopCharacteristics>
        <{p}loopDataInputRef>input_data</{p}loopDataInputRef>
        <{p}loopDataOutputRef>output_data</{p}loopDataOutputRef>
        <{p}inputDataItem id="input_item" name="input item"/>
        <{p}outputDataItem id="output_item" name="output item"/>
      </{p}multiInstanceLoopCharacteristics>
    </{p}scriptTask>
    <{p}endEvent id="e"/>
  </{p}process>
"""


def test_vendor_multi_instance_and_call_activities() -> None:
    result = vendor(VENDOR_STRUCTURE)
    assert result.unsupported == []
    nodes = result.document["nodes"]
    assert nodes["c7"]["config"]["multiInstance"] == {
        "collection": "$vars.reviewers",
        "element": "reviewer",
        "completion": "$loop.completed >= 2 and $loop.index > 0",
    }
    assert nodes["c8"]["config"]["multiInstance"] == {
        "sequential": True,
        "collection": "$vars.items",
        "element": "item",
        "output": "$vars.result",
        "completion": "($loop.index + 1) >= 3",
    }
    assert nodes["c8"]["config"]["saveTo"] == "results"
    assert nodes["call8"] == {
        "kind": "callActivity", "title": "", "config": {"process": "shipping"},
    } | {k: v for k, v in nodes["call8"].items() if k == "position"}  # fmt: skip
    assert nodes["call7"]["config"] == {
        "process": "billing",
        "binding": "version",
        "version": 4,
        "inputs": {"total": "$vars.amount", "order": "$vars.order.id"},
        "multiInstance": {"cardinality": "3"},
    }
    assert nodes["spiff"]["config"]["multiInstance"] == {
        "collection": "$vars.input_data",
        "element": "input_item",
    }
    assert nodes["spiff"]["config"]["saveTo"] == "output_data"
    assert {"import.output_lossy", "import.multi_instance_lossy"} <= codes(result)


EVENTS = """
  <{p}process id="p" isExecutable="true">
    <{p}startEvent id="s"/>
    <{p}userTask id="t"/>
    <{p}boundaryEvent id="b_timer" attachedToRef="t" cancelActivity="false">
      <{p}timerEventDefinition><{p}timeCycle>R3/PT1H</{p}timeCycle></{p}timerEventDefinition>
    </{p}boundaryEvent>
    <{p}boundaryEvent id="b_date" attachedToRef="t">
      <{p}timerEventDefinition><{p}timeDate>2027-01-01T08:00:00Z</{p}timeDate></{p}timerEventDefinition>
    </{p}boundaryEvent>
    <{p}boundaryEvent id="b_msg" attachedToRef="t">
      <{p}messageEventDefinition messageRef="m1"/>
    </{p}boundaryEvent>
    <{p}boundaryEvent id="b_err" attachedToRef="t">
      <{p}errorEventDefinition errorRef="err1"/>
    </{p}boundaryEvent>
    <{p}boundaryEvent id="b_esc" attachedToRef="t">
      <{p}escalationEventDefinition escalationRef="esc1"/>
    </{p}boundaryEvent>
    <{p}boundaryEvent id="b_sig" attachedToRef="t"><{p}conditionalEventDefinition/>
    </{p}boundaryEvent>
    <{p}intermediateThrowEvent id="throw"><{p}escalationEventDefinition escalationRef="esc1"/>
    </{p}intermediateThrowEvent>
    <{p}endEvent id="e_err"><{p}errorEventDefinition errorRef="err1"/></{p}endEvent>
    <{p}endEvent id="e_term"><{p}terminateEventDefinition/></{p}endEvent>
    <{p}endEvent id="e_msg"><{p}compensateEventDefinition/></{p}endEvent>
    <{p}subProcess id="esp" triggeredByEvent="true">
      <{p}startEvent id="esp_start" isInterrupting="false">
        <{p}escalationEventDefinition escalationRef="esc1"/>
      </{p}startEvent>
    </{p}subProcess>
    <{p}subProcess id="inner">
      <{p}startEvent id="inner_start"><{p}timerEventDefinition/></{p}startEvent>
    </{p}subProcess>
  </{p}process>
  <{p}message id="m1" name="cancel"/>
  <{p}error id="err1" errorCode="E42"/>
  <{p}escalation id="esc1" escalationCode="LATE"/>
"""


def test_boundary_throw_end_and_event_start_definitions() -> None:
    result = import_bpmn(definitions(EVENTS))
    nodes = result.document["nodes"]
    config = {node_id: node["config"] for node_id, node in nodes.items()}
    assert config["b_timer"] == {
        "attachedTo": "t", "event": "timer", "cycle": "R3/PT1H", "interrupting": False,
    }  # fmt: skip
    assert config["b_date"] == {
        "attachedTo": "t",
        "event": "timer",
        "date": "'2027-01-01T08:00:00Z'",
    }
    assert config["b_msg"] == {
        "attachedTo": "t",
        "event": "message",
        "message": "cancel",
        "correlationKey": "$instance.businessKey",
    }
    assert config["b_err"] == {"attachedTo": "t", "event": "error", "code": "E42"}
    assert config["b_esc"] == {"attachedTo": "t", "event": "escalation", "code": "LATE"}
    assert nodes["throw"]["kind"] == "escalationThrow" and config["throw"] == {"code": "LATE"}
    assert config["e_err"] == {"event": "error", "code": "E42"}
    assert config["e_term"] == {"event": "terminate"}
    assert config["e_msg"] == {"event": "compensate"}
    assert nodes["esp"]["kind"] == "eventSubProcess"
    assert config["esp_start"] == {"event": "escalation", "code": "LATE", "interrupting": False}
    assert nodes["esp_start"]["parent"] == "esp"
    listed = {(u.id, u.type) for u in result.unsupported}
    assert listed == {
        ("inner_start", "startEvent[timer]"),  # a sub-process starts on no event
    }
    assert config["b_sig"] == {"attachedTo": "t", "event": "conditional"}
    assert "import.correlation_business_key" in codes(result)


def test_unknown_error_reference_is_a_warning_and_catches_all() -> None:
    body = EVENTS.replace(
        'errorRef="err1"/>\n    </{p}boundaryEvent>', 'errorRef="nope"/>\n    </{p}boundaryEvent>'
    )
    result = import_bpmn(definitions(body))
    assert result.document["nodes"]["b_err"]["config"] == {"attachedTo": "t", "event": "error"}
    assert "import.code_missing" in codes(result)


# --- automatic layout ----------------------------------------------------------------------------


def inside(inner: tuple, outer: tuple) -> bool:
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh


def test_auto_layout_puts_nested_nodes_inside_their_expanded_sub_process() -> None:
    doc = structured_document()
    for node in doc["nodes"].values():
        del node["position"]
    laid = auto_layout(normalize(doc))
    nodes = laid["nodes"]
    boxes = {node_id: node_box(node) for node_id, node in nodes.items()}
    for node_id, node in nodes.items():
        parent = node.get("parent")
        if parent and not nodes[parent]["config"].get("collapsed"):
            assert inside(boxes[node_id], boxes[parent]), (node_id, parent)
    # siblings in one scope do not overlap
    for a in nodes:
        for b in nodes:
            same_scope = nodes[a].get("parent") == nodes[b].get("parent")
            boundary = "boundaryEvent" in (nodes[a]["kind"], nodes[b]["kind"])
            if a < b and same_scope and not boundary:
                ax, ay, aw, ah = boxes[a]
                bx, by, bw, bh = boxes[b]
                assert ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay, (a, b)
    # a boundary event sits on its host's border
    for node_id, node in nodes.items():
        if node["kind"] == "boundaryEvent":
            x, y, w, h = boxes[node_id]
            hx, hy, hw, hh = boxes[node["config"]["attachedTo"]]
            assert hx <= x + w / 2 <= hx + hw and y + h / 2 == hy + hh, node_id
    assert boxes["pack"][2:] == (100, 80)  # collapsed: a task-sized shape


def nested_chain(depth: int) -> dict[str, Any]:
    """Sub-processes nested `depth` deep, each holding start → the next one → end."""
    nodes: dict[str, Any] = {"start": {"kind": "startEvent"}, "end": {"kind": "endEvent"}}
    nodes["s0"] = {"kind": "subProcess", "title": "Level 0"}
    flows = {"a": {"source": "start", "target": "s0"}, "b": {"source": "s0", "target": "end"}}
    for level in range(depth):
        scope = f"s{level}"
        nodes[f"st{level}"] = {"kind": "startEvent", "parent": scope}
        nodes[f"en{level}"] = {"kind": "endEvent", "parent": scope}
        inner = f"s{level + 1}" if level + 1 < depth else f"t{level}"
        nodes[inner] = (
            {"kind": "subProcess", "parent": scope, "config": {"collapsed": level % 3 == 1}}
            if level + 1 < depth
            else {"kind": "userTask", "parent": scope,
                  "config": {"assignee": {"type": "role", "value": "clerk"}}}
        )  # fmt: skip
        flows[f"f{level}a"] = {"source": f"st{level}", "target": inner}
        flows[f"f{level}b"] = {"source": inner, "target": f"en{level}"}
    return {"format_version": 1, "key": "deep", "nodes": nodes, "flows": flows}


def test_sub_processes_nested_ten_deep_roundtrip(schema: etree.XMLSchema) -> None:
    doc = nested_chain(10)
    xml = export_bpmn(doc)
    assert schema.validate(etree.fromstring(xml.encode())), schema.error_log.last_error
    result = import_bpmn(xml)
    assert result.unsupported == []
    assert canonical_json(result.document) == canonical_json(normalize(doc))
    assert validate(doc) == []


@pytest.mark.slow
def test_deep_nesting_costs_linear_time() -> None:
    """Four times the nesting costs about four times the time (quadratic work would cost sixteen
    times); the best of five runs per size in CPU time, with no garbage collection inside a run,
    keeps a busy machine from deciding the outcome."""

    def best(size: int) -> float:
        doc = nested_chain(size)
        times = []
        gc.collect()
        gc.disable()  # a collection inside one timed run is noise, not cost
        try:
            for _ in range(5):
                began = time.process_time()
                normalized = normalize(doc)
                assert validate(normalized) == []
                auto_layout(normalized)
                times.append(time.process_time() - began)
        finally:
            gc.enable()
        return min(times)

    small, large = best(300), best(1200)
    assert large / small < 8, f"{small:.2f} s for 300 levels, {large:.2f} s for 1,200"


_KEYS = ["event", "code", "duration", "date", "cycle", "message", "correlationKey", "attachedTo",
         "interrupting", "collapsed", "multiInstance", "process", "binding", "version", "inputs",
         "saveTo"]  # fmt: skip
_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12)
    | st.sampled_from(["timer", "error", "escalation", "terminate", "review", "R/P1D", " x "]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=2),
    max_leaves=4,
)  # fmt: skip


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(sorted(structured_document()["nodes"])),
                  st.sampled_from(_KEYS), _VALUE),
        min_size=1, max_size=4,
    )
)  # fmt: skip
def test_arbitrary_structured_config_roundtrips(changes: list[tuple[str, str, Any]]) -> None:
    doc = structured_document()
    for node_id, key, value in changes:
        doc["nodes"][node_id].setdefault("config", {})[key] = value
    result = import_bpmn(export_bpmn(doc))
    assert result.unsupported == []
    assert canonical_json(result.document) == canonical_json(normalize(doc))


def test_auto_layout_survives_boundary_events_on_what_cannot_hold_them() -> None:
    doc = structured_document()
    for node in doc["nodes"].values():
        del node["position"]
    doc["nodes"]["late"]["config"]["attachedTo"] = "on_cancel"  # an event sub-process
    doc["nodes"]["boss"]["config"]["attachedTo"] = "late"  # another boundary event
    doc["nodes"]["rejected"]["config"]["attachedTo"] = ["not", "an", "id"]
    laid = auto_layout(normalize(doc))
    assert all(node_box(node) for node in laid["nodes"].values())
    xml = export_bpmn(doc)
    assert canonical_json(import_bpmn(xml).document) == canonical_json(normalize(doc))


def test_nodes_of_a_sub_process_are_never_dropped_silently() -> None:
    body = """
  <{p}process id="p">
    <{p}startEvent id="s"/>
    <{p}subProcess id="sub">
      <{p}extensionElements><fd:node>{{"kind": "userTask"}}</fd:node></{p}extensionElements>
      <{p}startEvent id="inner"/>
      <{p}dataObject id="data"/>
    </{p}subProcess>
    <{p}transaction id="tx"><{p}startEvent id="tx_start"/></{p}transaction>
  </{p}process>
"""
    xml = definitions(body, extra_ns=f'xmlns:fd="{FLOWDESK}"')
    with pytest.raises(BpmnImportError, match="'inner' has parent 'sub', a userTask"):
        import_bpmn(xml)
    result = import_bpmn(xml.replace('{"kind": "userTask"}', "{}"))
    assert result.document["nodes"]["inner"]["parent"] == "sub"
    listed = {(u.id, u.type) for u in result.unsupported}
    assert listed == set()
    assert result.document["nodes"]["tx"]["kind"] == "transaction"
    assert result.document["nodes"]["tx_start"]["parent"] == "tx"
    assert result.document["nodes"]["sub"]["kept"] == [
        {"tag": "dataObject", "attrs": {"id": "data"}}
    ]


def test_an_activity_whose_loop_marker_another_tool_removed_runs_once() -> None:
    """Our extension keeps the multi-instance settings BPMN cannot say; without the standard
    loop element (Camunda Modeler took the marker off) they must not keep it multi-instance."""
    doc = structured_document()
    multi = [n for n, node in doc["nodes"].items() if node.get("config", {}).get("multiInstance")]
    assert multi
    root = etree.fromstring(export_bpmn(doc).encode())
    for loop in root.iter(q(BPMN, "multiInstanceLoopCharacteristics")):
        loop.getparent().remove(loop)
    nodes = import_bpmn(etree.tostring(root).decode()).document["nodes"]
    assert all("multiInstance" not in nodes[n]["config"] for n in multi)
