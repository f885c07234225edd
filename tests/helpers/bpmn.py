"""BPMN files and documents for the importer and exporter: the official schema, a document
with every kind and setting, vendor namespaces and the XML wrappers, and sample files."""

from __future__ import annotations

import importlib.util
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from lxml import etree

from webapp.process.bpmn import (
    ImportResult,
    export_bpmn,
    import_bpmn,
)
from webapp.process.document import canonical_json, normalize

SPECIAL = "<tag> & \"double\" 'single' ünïcødé ✓ 🚀 \\ back"


def bpmn_schema() -> etree.XMLSchema:
    """The official BPMN 2.0 XSD shipped by the SpiffWorkflow wheel (tests only)."""
    spec = importlib.util.find_spec("SpiffWorkflow")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("SpiffWorkflow (which ships BPMN20.xsd) is not installed")
    xsd = Path(next(iter(spec.submodule_search_locations))) / "bpmn/parser/schema/BPMN20.xsd"
    return etree.XMLSchema(etree.parse(str(xsd)))


def full_document() -> dict[str, Any]:
    """Every node kind and every config key, with awkward characters everywhere."""
    form = {
        "fields": [
            {"key": "amount", "label": f"Amount {SPECIAL}", "type": "number", "required": True,
             "min": 0, "max": 100000, "help": "<b>not html</b> & more"},
            {"key": "kind", "label": "Kind", "type": "select", "required": False,
             "options": [{"value": "a&b", "label": "A & B"}, {"value": "<c>", "label": "\"C\""}],
             "visibleIf": "$input.amount > 10 and $input.kind != '<x>'"},
        ]
    }  # fmt: skip
    box = {"width": 100, "height": 80}
    return {
        "format_version": 1,
        "key": "invoice-approval",
        "name": f"Invoice approval {SPECIAL}",
        "nodes": {
            "start": {"kind": "startEvent", "title": "Invoice received", "config": {"form": form},
                      "position": {"x": 100, "y": 100, "width": 36, "height": 36}},
            "review": {"kind": "userTask", "title": f"Review {SPECIAL}",
                       "config": {"assignee": {"type": "role", "value": "finance & <ops>"},
                                  "form": form, "dueIn": "P1DT2H", "saveTo": "review"},
                       "position": {"x": 200, "y": 78, **box}},
            "decide": {"kind": "exclusiveGateway", "title": "Amount > 1000?", "config": {},
                       "position": {"x": 350, "y": 93, "width": 50, "height": 50}},
            "call_api": {"kind": "serviceTask", "title": "Call API",
                         "config": {"tool": "http.get", "saveTo": "api", "retries": 5,
                                    "backoff": 1.5, "timeout": 12.5,
                                    "inputs": {"url": "'https://x.test/?a=1&b=<2>'",
                                               "note": '"quoted" + $vars.review.comment'}},
                         "position": {"x": 450.5, "y": 0.25, **box}},
            "approve": {"kind": "userTask", "title": "",
                        "config": {"assignee": {"type": "expression", "value": "$input.manager"}},
                        "position": {"x": 450, "y": 200, **box}},
            "split": {"kind": "parallelGateway", "title": "", "config": {},
                      "position": {"x": 600, "y": 93, "width": 50, "height": 50}},
            "wait": {"kind": "timerCatch", "title": "Wait 5 minutes",
                     "config": {"duration": "PT5M"},
                     "position": {"x": 700, "y": 20, "width": 36, "height": 36}},
            "wait_until": {"kind": "timerCatch", "title": "Due date",
                           "config": {"date": "$input.due_at"},
                           "position": {"x": 700, "y": 100, "width": 36, "height": 36}},
            "paid": {"kind": "messageCatch", "title": "Payment received",
                     "config": {"message": f"payment {SPECIAL}",
                                "correlationKey": "$input.invoice_id", "saveTo": "payment"},
                     "position": {"x": 700, "y": 180, "width": 36, "height": 36}},
            "join": {"kind": "parallelGateway", "title": "", "config": {},
                     "position": {"x": 800, "y": 93, "width": 50, "height": 50}},
            "end": {"kind": "endEvent", "title": "Done", "config": {},
                    "position": {"x": 900, "y": 100, "width": 36, "height": 36}},
        },
        "flows": {
            "f1": {"source": "start", "target": "review", "title": "", "condition": None,
                   "default": False, "waypoints": [{"x": 136, "y": 118}, {"x": 200, "y": 118}]},
            "f2": {"source": "review", "target": "decide", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "big": {"source": "decide", "target": "call_api", "title": f"yes {SPECIAL}",
                    "condition": "$vars.review.amount > 1000 and $input.kind == 'a & <b>'",
                    "default": False,
                    "waypoints": [{"x": 375, "y": 93}, {"x": 375, "y": 40.5}, {"x": 450, "y": 40}]},
            "small": {"source": "decide", "target": "approve", "title": "otherwise",
                      "condition": None, "default": True, "waypoints": []},
            "f3": {"source": "call_api", "target": "split", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f4": {"source": "approve", "target": "split", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f5": {"source": "split", "target": "wait", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f6": {"source": "split", "target": "wait_until", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f7": {"source": "split", "target": "paid", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f8": {"source": "wait", "target": "join", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f9": {"source": "wait_until", "target": "join", "title": "", "condition": None,
                   "default": False, "waypoints": []},
            "f10": {"source": "paid", "target": "join", "title": "", "condition": None,
                    "default": False, "waypoints": []},
            "f11": {"source": "join", "target": "end", "title": "", "condition": None,
                    "default": False, "waypoints": []},
        },
    }  # fmt: skip


MODEL = "http://www.omg.org/spec/BPMN/20100524/MODEL"


CAMUNDA = "http://camunda.org/schema/1.0/bpmn"


def definitions(body: str, prefix: str = "bpmn", extra_ns: str = "") -> str:
    """Wrap `body` (written with `{p}` for the BPMN prefix) in a definitions element."""
    p = f"{prefix}:" if prefix else ""
    xmlns = f'xmlns:{prefix}="{MODEL}"' if prefix else f'xmlns="{MODEL}"'
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<{p}definitions {xmlns} {extra_ns} '
        f'id="Definitions_test" targetNamespace="http://example.com">'
        f"{body.format(p=p)}</{p}definitions>"
    )


def codes(result: ImportResult) -> set[str]:
    return {warning.code for warning in result.warnings}


FLOWABLE = "http://flowable.org/bpmn"


ZEEBE = "http://camunda.org/schema/zeebe/1.0"


NAMESPACES = f'xmlns:camunda="{CAMUNDA}" xmlns:flowable="{FLOWABLE}" xmlns:zeebe="{ZEEBE}"'


def wrap(nodes: str, root_extensions: str = "") -> str:
    """A process start -> `nodes` (ids n1, n2... chained) -> end, in a definitions element."""
    ids = re.findall(r'<\{p\}\w+ id="([^"]+)"', nodes)
    chain = ["s", *ids, "e"]
    flows = "".join(
        f'<{{p}}sequenceFlow id="f{i}" sourceRef="{a}" targetRef="{b}"/>'
        for i, (a, b) in enumerate(itertools.pairwise(chain))
    )
    body = (
        f'<{{p}}process id="p" isExecutable="true">{root_extensions}<{{p}}startEvent id="s"/>'
        f'{nodes}<{{p}}endEvent id="e"/>{flows}</{{p}}process>'
    )
    # `definitions` formats its body: the braces of JUEL and JSON are escaped for it first.
    escaped = body.replace("{", "{{").replace("}", "}}").replace("{{p}}", "{p}")
    return definitions(escaped, extra_ns=NAMESPACES)


def same_after_round_trip(document: dict[str, Any]) -> str:
    """Export, re-import: the document comes back identical, and so does a second export."""
    exported = export_bpmn(document)
    again = import_bpmn(exported)
    assert again.unsupported == []
    assert canonical_json(normalize(again.document)) == canonical_json(normalize(document))
    assert export_bpmn(again.document) == exported
    return exported


def element(exported: str, element_id: str) -> etree._Element:
    root = etree.fromstring(exported.encode())
    return next(e for e in root.iter() if e.get("id") == element_id)


def structured_document() -> dict[str, Any]:
    """Every structured element: nested expanded and collapsed sub-processes, an event
    sub-process, call activity, multi-instance, boundary events and error/escalation/terminate."""

    def at(x: int, y: int, w: int = 36, h: int = 36) -> dict[str, int]:
        return {"x": x, "y": y, "width": w, "height": h}

    return {
        "format_version": 1,
        "key": "orders",
        "name": "Orders",
        "nodes": {
            "start": {"kind": "startEvent", "title": "Order", "position": at(100, 200)},
            "review": {"kind": "subProcess", "title": "Review",
                       "config": {"multiInstance": {"collection": "$input.reviewers",
                                                    "element": "reviewer", "sequential": True,
                                                    "completion": "$loop.completed >= 2",
                                                    "output": "$vars.verdict"}},
                       "position": at(200, 100, 500, 260)},
            "r_start": {"kind": "startEvent", "parent": "review", "position": at(220, 200)},
            "r_check": {"kind": "userTask", "title": "Check", "parent": "review",
                        "config": {"assignee": {"type": "expression", "value": "$item"},
                                   "saveTo": "verdict"},
                        "position": at(300, 178, 100, 80)},
            "r_end": {"kind": "endEvent", "parent": "review", "position": at(600, 200)},
            "r_fail": {"kind": "endEvent", "title": "Rejected", "parent": "review",
                       "config": {"event": "error", "code": "REJECTED"},
                       "position": at(600, 300)},
            "r_gw": {"kind": "exclusiveGateway", "parent": "review",
                     "position": at(450, 193, 50, 50)},
            "remind": {"kind": "boundaryEvent", "title": "Every day", "parent": "review",
                       "config": {"attachedTo": "r_check", "event": "timer", "cycle": "R/P1D",
                                  "interrupting": False},
                       "position": at(330, 240)},
            "r_escalate": {"kind": "escalationThrow", "title": "Tell boss", "parent": "review",
                           "config": {"code": "LATE"}, "position": at(330, 320)},
            "r_end2": {"kind": "endEvent", "parent": "review", "position": at(420, 320)},
            "late": {"kind": "boundaryEvent", "title": "Too late",
                     "config": {"attachedTo": "review", "event": "timer", "duration": "P2D"},
                     "position": at(400, 342)},
            "rejected": {"kind": "boundaryEvent", "title": "Rejected",
                         "config": {"attachedTo": "review", "event": "error", "code": "REJECTED"},
                         "position": at(500, 342)},
            "any_error": {"kind": "boundaryEvent",
                          "config": {"attachedTo": "review", "event": "error"},
                          "position": at(550, 342)},
            "boss": {"kind": "boundaryEvent",
                     "config": {"attachedTo": "review", "event": "escalation", "code": "LATE",
                                "interrupting": False},
                     "position": at(600, 342)},
            "cancelled": {"kind": "boundaryEvent", "title": "Cancelled",
                          "config": {"attachedTo": "call", "event": "message",
                                     "message": "order cancelled",
                                     "correlationKey": "$input.order_id", "saveTo": "why"},
                          "position": at(850, 242)},
            "call": {"kind": "callActivity", "title": "Ship",
                     "config": {"process": "shipping", "binding": "version", "version": 3,
                                "inputs": {"order": "$input.order_id"}, "saveTo": "shipment",
                                "multiInstance": {"cardinality": "2"}},
                     "position": at(800, 160, 100, 80)},
            "pack": {"kind": "subProcess", "title": "Pack",
                     "config": {"collapsed": True}, "position": at(950, 160, 100, 80)},
            "p_start": {"kind": "startEvent", "parent": "pack", "position": at(100, 100)},
            "p_task": {"kind": "serviceTask", "parent": "pack",
                       "config": {"tool": "mail", "inputs": {"to": "'x'"},
                                  "multiInstance": {"collection": "$input.items",
                                                    "element": "item"}},
                       "position": at(200, 78, 100, 80)},
            "p_end": {"kind": "endEvent", "parent": "pack", "position": at(400, 100)},
            "end": {"kind": "endEvent", "position": at(1100, 182)},
            "stop": {"kind": "endEvent", "title": "Stop", "config": {"event": "terminate"},
                     "position": at(1100, 300)},
            "alarm": {"kind": "endEvent", "config": {"event": "escalation", "code": "ALARM"},
                      "position": at(1100, 400)},
            "on_cancel": {"kind": "eventSubProcess", "title": "On cancel",
                          "position": at(200, 500, 350, 200)},
            "oc_start": {"kind": "startEvent", "parent": "on_cancel",
                         "config": {"event": "message", "message": "order cancelled",
                                    "correlationKey": "$input.order_id", "interrupting": False},
                         "position": at(230, 580)},
            "oc_end": {"kind": "endEvent", "parent": "on_cancel", "position": at(400, 580)},
            "on_error": {"kind": "eventSubProcess", "config": {"collapsed": True},
                         "position": at(600, 500, 100, 80)},
            "oe_start": {"kind": "startEvent", "parent": "on_error",
                         "config": {"event": "error", "code": "BROKEN"}, "position": at(100, 100)},
            "oe_end": {"kind": "endEvent", "parent": "on_error", "position": at(200, 100)},
            "on_timer": {"kind": "eventSubProcess", "position": at(800, 500, 350, 200)},
            "ot_start": {"kind": "startEvent", "parent": "on_timer",
                         "config": {"event": "timer", "date": "$input.deadline",
                                    "interrupting": True},
                         "position": at(830, 580)},
            "ot_end": {"kind": "endEvent", "parent": "on_timer",
                       "config": {"event": "escalation"}, "position": at(900, 580)},
        },
        "flows": {
            "f1": {"source": "start", "target": "review"},
            "r1": {"source": "r_start", "target": "r_check"},
            "r2": {"source": "r_check", "target": "r_gw"},
            "r3": {"source": "r_gw", "target": "r_end", "condition": "$vars.verdict.ok"},
            "r4": {"source": "r_gw", "target": "r_fail", "default": True},
            "r5": {"source": "remind", "target": "r_escalate"},
            "r6": {"source": "r_escalate", "target": "r_end2"},
            "f2": {"source": "review", "target": "call"},
            "f3": {"source": "late", "target": "stop"},
            "f4": {"source": "rejected", "target": "stop"},
            "f5": {"source": "any_error", "target": "alarm"},
            "f6": {"source": "boss", "target": "end"},
            "f7": {"source": "call", "target": "pack"},
            "f8": {"source": "cancelled", "target": "stop"},
            "p1": {"source": "p_start", "target": "p_task"},
            "p2": {"source": "p_task", "target": "p_end"},
            "f9": {"source": "pack", "target": "end"},
            "o1": {"source": "oc_start", "target": "oc_end"},
            "o2": {"source": "oe_start", "target": "oe_end"},
            "o3": {"source": "ot_start", "target": "ot_end"},
        },
    }  # fmt: skip


TOOL = {"tool": "notify", "inputs": {"to": "$input.email"}}


def events_document() -> dict[str, Any]:
    """Every gateway, event and task type beyond the core in one valid process."""

    def n(kind: str, title: str = "", x: int = 0, y: int = 0, **config: Any) -> dict[str, Any]:
        return {"kind": kind, "title": title, "config": config, "position": {"x": x, "y": y}}

    nodes = {
        "start": n("startEvent", "Order", 0, 0),
        "split": n("inclusiveGateway", "What?", 100, 0),
        "calc": n("scriptTask", "Compute", 200, 0, script="total = $input.price * $input.qty\n"
                  "# gross\n$vars.gross = $vars.total * 2", language="flowdesk"),
        "sign": n("manualTask", "Sign", 200, 150),
        "join": n("inclusiveGateway", "", 350, 0),
        "send": n("sendTask", "Ask", 450, 0, message="request", **TOOL),
        "race": n("eventBasedGateway", "First", 600, 0),
        "reply": n("messageCatch", "Reply", 700, 0, message="reply",
                   correlationKey="$input.id", saveTo="reply"),
        "wait": n("timerCatch", "A day", 700, 100, duration="P1D"),
        "abort": n("signalCatch", "Abort", 700, 200, signal="abort", saveTo="why"),
        "doc": n("receiveTask", "Document", 700, 300, message="doc",
                 correlationKey="$input.id"),
        "tell": n("messageThrow", "Tell", 800, 0, message="told", **TOOL),
        "noted": n("milestone", "Noted", 900, 0),
        "jump": n("linkThrow", "Go on", 1000, 0, link="next"),
        "land": n("linkCatch", "Go on", 1000, 100, link="next"),
        "shout": n("signalThrow", "Done", 1100, 100, signal="done",
                   payload={"total": "$vars.total"}),
        "end": n("endEvent", "Finished", 1200, 100, event="signal", signal="finished"),
        "late": n("endEvent", "Late", 800, 100, event="message", message="late", **TOOL),
        "aborted": n("endEvent", "Aborted", 800, 200, event="terminate"),
        "got": n("endEvent", "Got it", 800, 300),
        "stop": n("boundaryEvent", "Stop", 220, 210, attachedTo="sign", event="signal",
                  signal="stop", interrupting=False),
        "stopped": n("endEvent", "", 300, 250),
        "daily": n("startEvent", "Daily", 0, 400, event="timer", cycle="0 8 * * MON-FRI",
                   timezone="Europe/Berlin"),
        "once": n("startEvent", "Once", 0, 500, event="timer", date="2027-01-01T08:00:00Z"),
        "hourly": n("startEvent", "Hourly", 0, 600, event="timer", cycle="R/PT1H"),
        "ordered": n("startEvent", "Ordered", 0, 700, event="message", message="order"),
        "alarm": n("startEvent", "Alarm", 0, 800, event="signal", signal="alarm"),
        "scheduled": n("endEvent", "", 100, 600),
    }  # fmt: skip
    pairs = [
        ("start", "split"), ("split", "calc"), ("split", "sign"), ("calc", "join"),
        ("sign", "join"), ("join", "send"), ("send", "race"), ("race", "reply"),
        ("race", "wait"), ("race", "abort"), ("race", "doc"), ("reply", "tell"),
        ("tell", "noted"), ("noted", "jump"), ("land", "shout"), ("shout", "end"),
        ("wait", "late"), ("abort", "aborted"), ("doc", "got"), ("stop", "stopped"),
        ("daily", "scheduled"), ("once", "scheduled"), ("hourly", "scheduled"),
        ("ordered", "scheduled"), ("alarm", "scheduled"),
    ]  # fmt: skip
    flows: dict[str, Any] = {f"f{i}": {"source": a, "target": b} for i, (a, b) in enumerate(pairs)}
    flows["f1"]["condition"] = "$input.price > 0"
    flows["f2"]["default"] = True
    return {"format_version": 1, "key": "events", "name": "Events", "nodes": nodes, "flows": flows}


KEPT_FILE = """<?xml version="1.0" encoding="UTF-8"?>
<semantic:definitions xmlns:semantic="http://www.omg.org/spec/BPMN/20100524/MODEL"
    xmlns:bpmndi="http://www.omg.org/spec/BPMN/20100524/DI"
    xmlns:dc="http://www.omg.org/spec/DD/20100524/DC"
    xmlns:di="http://www.omg.org/spec/DD/20100524/DI"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xmlns:camunda="http://camunda.org/schema/1.0/bpmn"
    xmlns:tns="http://example.com/tns"
    id="Defs" targetNamespace="http://example.com/tns">
  <semantic:itemDefinition id="Item_order" structureRef="tns:Order"/>
  <semantic:dataStore id="Store" name="Orders DB" itemSubjectRef="tns:Item_order"/>
  <semantic:category id="Cat">
    <semantic:categoryValue id="CatValue" value="Sales"/></semantic:category>
  <semantic:process id="orders" name="Orders" isExecutable="true">
    <semantic:extensionElements>
      <camunda:properties><camunda:property name="owner" value="team-a"/></camunda:properties>
    </semantic:extensionElements>
    <semantic:ioSpecification id="ProcessIo">
      <semantic:dataInput id="ProcessIn" name="order"/>
      <semantic:inputSet id="ProcessInSet">
        <semantic:dataInputRefs>ProcessIn</semantic:dataInputRefs>
      </semantic:inputSet>
      <semantic:outputSet id="ProcessOutSet"/>
    </semantic:ioSpecification>
    <semantic:property id="ProcessProp" name="total"/>
    <semantic:laneSet id="Lanes">
      <semantic:lane id="LaneSales" name="Sales">
        <semantic:flowNodeRef>start</semantic:flowNodeRef>
        <semantic:flowNodeRef>check</semantic:flowNodeRef>
      </semantic:lane>
      <semantic:lane id="LaneOps" name="Ops"><semantic:flowNodeRef>done</semantic:flowNodeRef>
      </semantic:lane>
    </semantic:laneSet>
    <semantic:startEvent id="start" name="Order in"/>
    <semantic:userTask id="check" name="Check order">
      <semantic:extensionElements>
        <camunda:executionListener class="com.example.Audit" event="start"/>
      </semantic:extensionElements>
      <semantic:ioSpecification id="CheckIo">
        <semantic:dataInput id="CheckIn" name="order"/>
        <semantic:dataOutput id="CheckOut" name="verdict"/>
        <semantic:inputSet id="CheckInSet"><semantic:dataInputRefs>CheckIn</semantic:dataInputRefs>
        </semantic:inputSet>
        <semantic:outputSet id="CheckOutSet">
          <semantic:dataOutputRefs>CheckOut</semantic:dataOutputRefs>
        </semantic:outputSet>
      </semantic:ioSpecification>
      <semantic:property id="CheckProp" name="note"/>
      <semantic:dataInputAssociation id="ReadOrder">
        <semantic:sourceRef>OrderRef</semantic:sourceRef>
        <semantic:targetRef>CheckIn</semantic:targetRef>
      </semantic:dataInputAssociation>
      <semantic:dataOutputAssociation id="WriteStore">
        <semantic:sourceRef>CheckOut</semantic:sourceRef>
        <semantic:targetRef>StoreRef</semantic:targetRef>
      </semantic:dataOutputAssociation>
    </semantic:userTask>
    <semantic:endEvent id="done" name="Done"/>
    <semantic:sequenceFlow id="f1" sourceRef="start" targetRef="check">
      <semantic:extensionElements>
        <camunda:executionListener expression="${audit.taken()}" event="take"/>
      </semantic:extensionElements>
    </semantic:sequenceFlow>
    <semantic:sequenceFlow id="f2" sourceRef="check" targetRef="done"/>
    <semantic:dataObject id="OrderData" name="Order" itemSubjectRef="tns:Item_order"/>
    <semantic:dataObjectReference id="OrderRef" name="Order" dataObjectRef="OrderData"/>
    <semantic:dataStoreReference id="StoreRef" name="Orders DB" dataStoreRef="tns:Store"/>
    <semantic:textAnnotation id="Note">
      <semantic:text>Checked within a day &amp; logged</semantic:text>
    </semantic:textAnnotation>
    <semantic:association id="NoteLink" sourceRef="check" targetRef="Note"/>
    <semantic:group id="SalesGroup" categoryValueRef="tns:CatValue"/>
  </semantic:process>
  <bpmndi:BPMNDiagram id="Diagram">
    <bpmndi:BPMNPlane id="Plane" bpmnElement="orders">
      <bpmndi:BPMNShape id="LaneSales_di" bpmnElement="LaneSales" isHorizontal="true">
        <dc:Bounds x="100" y="50" width="600" height="150"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="LaneOps_di" bpmnElement="LaneOps" isHorizontal="true">
        <dc:Bounds x="100" y="200" width="600" height="150"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="start_di" bpmnElement="start">
        <dc:Bounds x="150" y="100" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="check_di" bpmnElement="check">
        <dc:Bounds x="250" y="78" width="100" height="80"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="done_di" bpmnElement="done">
        <dc:Bounds x="450" y="250" width="36" height="36"/></bpmndi:BPMNShape>
      <bpmndi:BPMNEdge id="f1_di" bpmnElement="f1">
        <di:waypoint xsi:type="dc:Point" x="186" y="118"/><di:waypoint x="250" y="118"/>
      </bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="f2_di" bpmnElement="f2">
        <di:waypoint x="350" y="118"/><di:waypoint x="468" y="250"/></bpmndi:BPMNEdge>
      <bpmndi:BPMNShape id="OrderRef_di" bpmnElement="OrderRef">
        <dc:Bounds x="162" y="400" width="36" height="50"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="StoreRef_di" bpmnElement="StoreRef">
        <dc:Bounds x="400" y="400" width="50" height="50"/></bpmndi:BPMNShape>
      <bpmndi:BPMNShape id="Note_di" bpmnElement="Note">
        <dc:Bounds x="400" y="10" width="150" height="30"/></bpmndi:BPMNShape>
      <bpmndi:BPMNEdge id="NoteLink_di" bpmnElement="NoteLink">
        <di:waypoint x="330" y="78"/><di:waypoint x="420" y="40"/></bpmndi:BPMNEdge>
      <bpmndi:BPMNShape id="SalesGroup_di" bpmnElement="SalesGroup">
        <dc:Bounds x="230" y="60" width="140" height="120"/></bpmndi:BPMNShape>
      <bpmndi:BPMNEdge id="ReadOrder_di" bpmnElement="ReadOrder">
        <di:waypoint x="180" y="400"/><di:waypoint x="280" y="158"/></bpmndi:BPMNEdge>
      <bpmndi:BPMNEdge id="WriteStore_di" bpmnElement="WriteStore">
        <di:waypoint x="320" y="158"/><di:waypoint x="420" y="400"/></bpmndi:BPMNEdge>
    </bpmndi:BPMNPlane>
  </bpmndi:BPMNDiagram>
</semantic:definitions>
"""


CALLS = b"""<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d"
    targetNamespace="http://x">
  <bpmn:process id="caller" name="Caller" isExecutable="true">
    <bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="call"/>
    <bpmn:callActivity id="call" name="Run callee" calledElement="callee"/>
    <bpmn:sequenceFlow id="f2" sourceRef="call" targetRef="e"/><bpmn:endEvent id="e"/>
  </bpmn:process>
  <bpmn:process id="callee" name="Callee" isExecutable="true">
    <bpmn:startEvent id="cs"/><bpmn:sequenceFlow id="c1" sourceRef="cs" targetRef="ce"/>
    <bpmn:endEvent id="ce"/>
  </bpmn:process>
</bpmn:definitions>"""


SIGNAVIO = b"""<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" id="sid-d" targetNamespace="x">
  <process id="sid-7911A358-1C2B-4E5F-9A0B-1234567890AB" name="Order handling"
      isExecutable="false">
    <startEvent id="sid-A1"/>
    <sequenceFlow id="sid-F1" sourceRef="sid-A1" targetRef="sid-A2"/>
    <userTask id="sid-A2" name="Check order"/>
    <sequenceFlow id="sid-F2" sourceRef="sid-A2" targetRef="sid-A3"/>
    <endEvent id="sid-A3"/>
  </process>
</definitions>"""
