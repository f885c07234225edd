"""Export a process document as BPMN 2.0 XML with diagram interchange (BPMNDI).

Standard BPMN carries what it can (names, conditions, default flows, timers, messages, shapes and
edges); the rest of a node's config goes into `<flowdesk:config>` as canonical JSON, and whatever
standard BPMN cannot reproduce exactly goes into `<flowdesk:node>`, `<flowdesk:flow>` or
`<flowdesk:document>` so that `import_bpmn(export_bpmn(doc))` gives the same document back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from lxml import etree

from webapp.process.document import CURRENT_FORMAT_VERSION, is_valid_id, normalize

from . import layout, routing
from .namespaces import BPMN, BPMNDI, DC, DI, EXPORT_NSMAP, FLOWDESK, FLOWDESK_LANGUAGE, XSI, q

EXPORTER = "Flowdesk"
EXPORTER_VERSION = "1"

ELEMENT_FOR_KIND = {
    "startEvent": "startEvent",
    "endEvent": "endEvent",
    "userTask": "userTask",
    "serviceTask": "serviceTask",
    "exclusiveGateway": "exclusiveGateway",
    "parallelGateway": "parallelGateway",
    "timerCatch": "intermediateCatchEvent",
    "messageCatch": "intermediateCatchEvent",
}
#: Kinds whose BPMN element has a `default` attribute naming one outgoing flow.
_DEFAULT_CAPABLE = {"exclusiveGateway", "userTask", "serviceTask"}
_NODE_KEYS = {"kind", "title", "config", "position"}
_FLOW_KEYS = {"source", "target", "title", "condition", "default", "waypoints"}
_DOC_KEYS = {"nodes", "flows"}
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SHAPE_KEYS = {"x", "y", "width", "height"}


class BpmnExportError(ValueError):
    """The document cannot be written as BPMN (bad ids or flows pointing at missing nodes)."""


def export_bpmn(doc: Mapping[str, Any]) -> str:
    """Return `doc` as a BPMN 2.0 XML string (UTF-8 declaration, 2-space indentation)."""
    doc = normalize(doc)
    writer = _Writer(doc)
    root = writer.build()
    etree.indent(root, space="  ")
    body = etree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def config_json(value: Any) -> str:
    """Canonical JSON (sorted keys, compact) that is also safe inside XML text."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return _XML_INVALID.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def xml_safe(value: object) -> bool:
    """Tell whether `value` is a string XML 1.0 can hold unchanged."""
    return isinstance(value, str) and not _XML_INVALID.search(value)


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else repr(float(value))


class _Writer:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.nodes: dict[str, dict[str, Any]] = doc["nodes"]
        self.flows: dict[str, dict[str, Any]] = doc["flows"]
        self._check_ids()
        self.used: set[str] = set(self.nodes) | set(self.flows)
        self.messages: dict[str, str] = {}
        self.incoming: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        self.outgoing: dict[str, list[str]] = {node_id: [] for node_id in self.nodes}
        self.defaults: dict[str, str] = {}
        for flow_id, flow in self.flows.items():
            self.incoming[flow["target"]].append(flow_id)
            self.outgoing[flow["source"]].append(flow_id)
            source_kind = self.nodes[flow["source"]]["kind"]
            if flow["default"] is True and source_kind in _DEFAULT_CAPABLE:
                self.defaults.setdefault(flow["source"], flow_id)
        self.placed = _display_positions(doc)

    def _check_ids(self) -> None:
        for element_id in [*self.nodes, *self.flows]:
            if not is_valid_id(element_id):
                raise BpmnExportError(f"'{element_id}' is not a valid BPMN element id")
        if shared := sorted(set(self.nodes) & set(self.flows)):
            raise BpmnExportError(f"'{shared[0]}' is used by a node and a flow")
        for flow_id, flow in self.flows.items():
            for end in ("source", "target"):
                if flow[end] not in self.nodes:
                    raise BpmnExportError(
                        f"Flow '{flow_id}' {end} '{flow[end]}' is not a node of the process"
                    )

    def fresh(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self.used:
            n += 1
            candidate = f"{base}_{n}"
        self.used.add(candidate)
        return candidate

    def build(self) -> etree._Element:
        key = self.doc.get("key")
        process_id = self.fresh(key if is_valid_id(key) and key not in self.used else "Process_1")
        root = etree.Element(q(BPMN, "definitions"), nsmap=EXPORT_NSMAP)
        root.set("id", self.fresh("Definitions_1"))
        root.set("targetNamespace", "http://bpmn.io/schema/bpmn")
        root.set("exporter", EXPORTER)
        root.set("exporterVersion", EXPORTER_VERSION)
        process = etree.SubElement(root, q(BPMN, "process"), id=process_id, isExecutable="true")
        if xml_safe(self.doc.get("name")) and self.doc["name"]:
            process.set("name", self.doc["name"])
        document_ext = {k: v for k, v in self.doc.items() if k not in _DOC_KEYS}
        document_ext.setdefault("format_version", CURRENT_FORMAT_VERSION)
        _extensions(process, {"document": document_ext})
        for node_id, node in self.nodes.items():
            self._node(process, node_id, node)
        for flow_id, flow in self.flows.items():
            self._flow(process, flow_id, flow)
        for name, message_id in self.messages.items():
            etree.SubElement(root, q(BPMN, "message"), id=message_id, name=name)
        self._diagram(root, process_id)
        return root

    def _node(self, process: etree._Element, node_id: str, node: dict[str, Any]) -> None:
        kind = node["kind"]
        element = etree.SubElement(process, q(BPMN, ELEMENT_FOR_KIND.get(kind, "task")), id=node_id)
        extras = {k: v for k, v in node.items() if k not in _NODE_KEYS}
        if kind not in ELEMENT_FOR_KIND:
            extras["kind"] = kind
        if xml_safe(node["title"]):
            if node["title"]:
                element.set("name", node["title"])
        else:
            extras["title"] = node["title"]
        if "position" in node and set(node["position"]) != _SHAPE_KEYS:
            extras["position"] = node["position"]
        config = dict(node["config"])
        definition = self._event_definition(node_id, kind, config)
        if node_id in self.defaults:
            element.set("default", self.defaults[node_id])
        _extensions(element, {"config": config, "node": extras})
        for flow_id in self.incoming[node_id]:
            etree.SubElement(element, q(BPMN, "incoming")).text = flow_id
        for flow_id in self.outgoing[node_id]:
            etree.SubElement(element, q(BPMN, "outgoing")).text = flow_id
        if definition is not None:
            element.append(definition)

    def _event_definition(
        self, node_id: str, kind: str, config: dict[str, Any]
    ) -> etree._Element | None:
        """Build the timer/message definition, removing from `config` what it carries."""
        if kind == "timerCatch":
            definition = etree.Element(q(BPMN, "timerEventDefinition"))
            definition.set("id", self.fresh(f"{node_id}_timer"))
            for key, tag in (("duration", "timeDuration"), ("date", "timeDate")):
                if _plain_text(config.get(key)):
                    expression = _formal_expression(definition, tag, config.pop(key))
                    if key == "date":
                        expression.set("language", FLOWDESK_LANGUAGE)
                    break
            return definition
        if kind == "messageCatch":
            definition = etree.Element(q(BPMN, "messageEventDefinition"))
            definition.set("id", self.fresh(f"{node_id}_message"))
            if _plain_text(config.get("message")):
                definition.set("messageRef", self._message_id(config.pop("message")))
            return definition
        return None

    def _message_id(self, name: str) -> str:
        if name not in self.messages:
            base = "Message_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            self.messages[name] = self.fresh(base)
        return self.messages[name]

    def _flow(self, process: etree._Element, flow_id: str, flow: dict[str, Any]) -> None:
        element = etree.SubElement(process, q(BPMN, "sequenceFlow"), id=flow_id)
        extras = {k: v for k, v in flow.items() if k not in _FLOW_KEYS}
        if xml_safe(flow["title"]):
            if flow["title"]:
                element.set("name", flow["title"])
        else:
            extras["title"] = flow["title"]
        element.set("sourceRef", flow["source"])
        element.set("targetRef", flow["target"])
        if flow["default"] and self.defaults.get(flow["source"]) != flow_id:
            extras["default"] = flow["default"]
        condition = flow["condition"]
        if condition is not None and not xml_safe(condition):
            extras["condition"] = condition
        waypoints = flow["waypoints"]
        if waypoints and (len(waypoints) < 2 or any(set(p) != {"x", "y"} for p in waypoints)):
            extras["waypoints"] = waypoints
        _extensions(element, {"flow": extras})
        if condition is not None and "condition" not in extras:
            expression = _formal_expression(element, "conditionExpression", condition)
            expression.set("language", FLOWDESK_LANGUAGE)

    def _diagram(self, root: etree._Element, process_id: str) -> None:
        diagram = etree.SubElement(root, q(BPMNDI, "BPMNDiagram"), id=self.fresh("BPMNDiagram_1"))
        plane = etree.SubElement(diagram, q(BPMNDI, "BPMNPlane"), id=self.fresh("BPMNPlane_1"))
        plane.set("bpmnElement", process_id)
        boxes: dict[str, routing.Box] = {}
        shapes: dict[str, etree._Element] = {}
        for node_id, node in self.nodes.items():
            shape = etree.SubElement(plane, q(BPMNDI, "BPMNShape"), id=self.fresh(f"{node_id}_di"))
            shapes[node_id] = shape
            shape.set("bpmnElement", node_id)
            if node["kind"] == "exclusiveGateway":
                shape.set("isMarkerVisible", "true")
            box = layout.node_box(node)
            if box is None:
                box = layout.node_box(self.placed[node_id])
                shape.set(q(FLOWDESK, "generated"), "true")
            assert box is not None
            boxes[node_id] = box
            bounds = etree.SubElement(shape, q(DC, "Bounds"))
            for name, value in zip(("x", "y", "width", "height"), box, strict=True):
                bounds.set(name, _number(value))
        kinds = {node_id: node["kind"] for node_id, node in self.nodes.items()}
        ends = {flow_id: (flow["source"], flow["target"]) for flow_id, flow in self.flows.items()}
        routes = routing.route_flows(boxes, kinds, ends)
        drawn: list[list[dict[str, Any]]] = []
        for flow_id, flow in self.flows.items():
            edge = etree.SubElement(plane, q(BPMNDI, "BPMNEdge"), id=self.fresh(f"{flow_id}_di"))
            edge.set("bpmnElement", flow_id)
            points = flow["waypoints"]
            if len(points) < 2 or any(set(p) != {"x", "y"} for p in points):
                points = routes[flow_id]
                edge.set(q(FLOWDESK, "generated"), "true")
            drawn.append(points)
            for point in points:
                waypoint = etree.SubElement(edge, q(DI, "waypoint"))
                waypoint.set("x", _number(point["x"]))
                waypoint.set("y", _number(point["y"]))
            if flow["title"] and xml_safe(flow["title"]):
                _label(edge, routing.label_bounds(points, flow["title"]))
        for node_id, node in self.nodes.items():
            if node["title"] and xml_safe(node["title"]):
                spot = routing.name_bounds(boxes[node_id], node["kind"], node["title"], drawn)
                if spot is not None:
                    _label(shapes[node_id], spot)


def _label(parent: etree._Element, box: routing.Box) -> None:
    """Write where an editor draws the element's name (BPMNLabel bounds)."""
    bounds = etree.SubElement(etree.SubElement(parent, q(BPMNDI, "BPMNLabel")), q(DC, "Bounds"))
    for name, value in zip(("x", "y", "width", "height"), box, strict=True):
        bounds.set(name, _number(value))


def _plain_text(value: object) -> bool:
    """Tell whether `value` is a non-empty string that XML text or attributes keep exactly."""
    return isinstance(value, str) and xml_safe(value) and value != "" and value == value.strip()


def _display_positions(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Positions for nodes without one, used only to draw their (generated) shapes."""
    placed = [node_id for node_id, node in doc["nodes"].items() if "position" in node]
    if not placed:
        return layout.auto_layout(doc)["nodes"]
    copy = {**doc, "nodes": {k: dict(v) for k, v in doc["nodes"].items()}}
    layout.place_missing(copy, [n for n in doc["nodes"] if n not in placed])
    return copy["nodes"]


def _formal_expression(parent: etree._Element, tag: str, text: str) -> etree._Element:
    element = etree.SubElement(parent, q(BPMN, tag))
    element.set(q(XSI, "type"), "bpmn:tFormalExpression")
    element.text = text
    return element


def _extensions(element: etree._Element, blobs: Mapping[str, Any]) -> None:
    """Write non-empty JSON blobs as `<flowdesk:NAME>` inside `bpmn:extensionElements`."""
    present = {name: value for name, value in blobs.items() if value}
    if not present:
        return
    container = etree.SubElement(element, q(BPMN, "extensionElements"))
    for name, value in present.items():
        etree.SubElement(container, q(FLOWDESK, name)).text = config_json(value)
