"""Export a process document as BPMN 2.0 XML with diagram interchange (BPMNDI).

Standard BPMN carries what it can (names, conditions, default flows, timers, messages, signals,
links, errors and escalations, scripts and their format, sub-processes with their nodes, boundary
attachments, called process keys, multi-instance flags and expressions, shapes and edges, a plane
per collapsed sub-process); the
rest of a node's config goes into `<flowdesk:config>` as canonical JSON, and whatever standard
BPMN cannot reproduce exactly goes into `<flowdesk:node>`, `<flowdesk:flow>`, `<flowdesk:order>`
or `<flowdesk:document>` so that `import_bpmn(export_bpmn(doc))` gives the same document back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from webapp.process.document import CURRENT_FORMAT_VERSION, depths, is_valid_id, normalize
from webapp.process.kinds import (
    BOUNDARY_EVENTS,
    CONDITION_GATEWAYS,
    END_EVENTS,
    EVENT_START_EVENTS,
    KIND_EVENT,
    KINDS,
    MULTI_INSTANCE_KINDS,
    PROCESS_START_EVENTS,
    SCOPE_KINDS,
    TASK_KINDS,
    definition_element,
)

from . import compensation, kept, layout, routing, safe_xml, vendor
from .namespaces import BPMN, BPMNDI, DC, DI, EXPORT_NSMAP, FLOWDESK, FLOWDESK_LANGUAGE, XSI, q

EXPORTER = "Flowdesk"
EXPORTER_VERSION = "1"

ELEMENT_FOR_KIND = {name: kind.element for name, kind in KINDS.items()}
#: Kinds whose BPMN element has a `default` attribute naming one outgoing flow.
_DEFAULT_CAPABLE = {
    *CONDITION_GATEWAYS,
    *TASK_KINDS,
    "subProcess",
    "callActivity",
    "transaction",
}
_STANDARD_EVENTS = {
    "boundaryEvent": BOUNDARY_EVENTS,
    "endEvent": tuple(event for event in END_EVENTS if event),
}
_NODE_KEYS = {"kind", "title", "config", "position"}
_FLOW_KEYS = {"source", "target", "title", "condition", "default", "waypoints"}
_DOC_KEYS = {"nodes", "flows", "kept"}
_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SHAPE_KEYS = {"x", "y", "width", "height"}


class BpmnExportError(ValueError):
    """The document cannot be written as BPMN (bad ids or flows pointing at missing nodes)."""


def export_bpmn(doc: Mapping[str, Any]) -> str:
    """Return `doc` as a BPMN 2.0 XML string (UTF-8 declaration, 2-space indentation)."""
    doc = normalize(doc)
    writer = _Writer(doc)
    root = writer.build()
    vendor.write_back(root, doc)
    etree.indent(root, space="  ")
    body = etree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def with_scenarios(xml: str, bodies: list[Any]) -> str:
    """`xml` with the process's test scenarios in its `<flowdesk:scenarios>` (a JSON list), on
    the process Flowdesk wrote (else the executable one); no scenarios leaves `xml` as it is."""
    if not bodies:
        return xml
    root = safe_xml.parse(xml, max_bytes=len(xml.encode("utf-8")) + 1)
    processes = root.findall(q(BPMN, "process"))
    if not processes:
        return xml
    ours = [
        p
        for p in processes
        if p.find(f"{q(BPMN, 'extensionElements')}/{q(FLOWDESK, 'document')}") is not None
    ]
    executable = [p for p in processes if p.get("isExecutable") == "true"]
    process = (ours or executable or processes)[0]
    container = process.find(q(BPMN, "extensionElements"))
    if container is None:
        container = etree.Element(q(BPMN, "extensionElements"))
        documentation = process.findall(q(BPMN, "documentation"))
        process.insert(len(documentation), container)
    for old in container.findall(q(FLOWDESK, "scenarios")):
        container.remove(old)
    etree.SubElement(container, q(FLOWDESK, "scenarios")).text = config_json(bodies)
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
        kept.prune(doc)
        self.doc = doc
        self.kept: dict[str, Any] = doc.get("kept", {})
        self.nodes: dict[str, dict[str, Any]] = doc["nodes"]
        self.flows: dict[str, dict[str, Any]] = doc["flows"]
        self._check_ids()
        self.used: set[str] = set(self.nodes) | set(self.flows)
        self.used |= kept.ids_in(
            [
                *self.kept.get("definitions", []),
                *self.kept.get("process", []),
                *(entry.get("element") for entry in self.kept.get("diagram", [])),
                *self.kept.get("diagrams", []),
                *self.kept.get("styles", []),
                *(item for node in self.nodes.values() for item in node.get("kept", [])),
                *(item for flow in self.flows.values() for item in flow.get("kept", [])),
            ]
        )
        self.messages: dict[str, str] = {}
        self.signals: dict[str, str] = {}
        self.codes: dict[str, dict[str, str]] = {"error": {}, "escalation": {}}
        # Definitions kept from the file (other pools use them): a node naming the same
        # message, signal or code refers to the kept element rather than a second one.
        self.shared: dict[tuple[str, str], str] = {}
        for data in self.kept.get("definitions", []):
            tag = data.get("tag") if isinstance(data, dict) else None
            attrs = data.get("attrs") if isinstance(data, dict) else None
            if tag not in kept.SHARED_DEFINITIONS or not isinstance(attrs, dict):
                continue
            key = attrs.get(f"{tag}Code") if tag in ("error", "escalation") else attrs.get("name")
            if tag == "signal" and key is None:
                key = attrs.get("id")  # the reader names a nameless signal by its id
            if isinstance(key, str) and isinstance(attrs.get("id"), str):
                self.shared.setdefault((tag, key), attrs["id"])
        self.collapsed = dict.fromkeys(
            node_id
            for node_id, node in self.nodes.items()
            if node["kind"] in SCOPE_KINDS and node["config"].get("collapsed") is True
        )
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
        # Compensation boundary -> handler, and the associations written for them (id, ends).
        self.handlers = compensation.handlers_of(self.nodes)
        self.associations: list[tuple[str, str, str]] = []

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
        root = etree.Element(q(BPMN, "definitions"), nsmap=self._nsmap())
        root.set("id", self.fresh("Definitions_1"))
        root.set("targetNamespace", "http://bpmn.io/schema/bpmn")
        root.set("exporter", EXPORTER)
        root.set("exporterVersion", EXPORTER_VERSION)
        process = etree.SubElement(root, q(BPMN, "process"), id=process_id, isExecutable="true")
        if xml_safe(self.doc.get("name")) and self.doc["name"]:
            process.set("name", self.doc["name"])
        kept.set_attributes(process, self.kept.get("process", []))
        document_ext = {k: v for k, v in self.doc.items() if k not in _DOC_KEYS}
        document_ext.setdefault("format_version", CURRENT_FORMAT_VERSION)
        _extensions(process, {"document": document_ext, "order": self._order()})
        tails: dict[str | None, list[Any]] = {
            None: _kept_children(process, self.kept.get("process", []), kept.SCOPE_TAIL)
        }
        elements = {node_id: self._node(node_id, node) for node_id, node in self.nodes.items()}
        for node_id, node in self.nodes.items():
            parent = node.get("parent")
            (process if parent is None else elements[parent]).append(elements[node_id])
            tails[node_id] = node.get("kept", [])
        for flow_id, flow in self.flows.items():
            parent = self.nodes[flow["source"]].get("parent")
            self._flow(process if parent is None else elements[parent], flow_id, flow)
        for scope, items in tails.items():
            container = process if scope is None else elements[scope]
            for data in items:
                if isinstance(data, dict) and data.get("tag") in kept.SCOPE_TAIL:
                    _append_kept(container, data)
        self._handler_associations(process, elements, tails)
        imports = 0
        for data in self.kept.get("definitions", []):
            tag = data.get("tag") if isinstance(data, dict) else None
            if tag == "import":
                element = kept.to_xml(data)
                if element is not None:
                    root.insert(imports, element)
                    imports += 1
            elif tag != "relationship":
                _append_kept(root, data)
        for name, message_id in self.messages.items():
            if self.shared.get(("message", name)) != message_id:
                etree.SubElement(root, q(BPMN, "message"), id=message_id, name=name)
        for name, signal_id in self.signals.items():
            if self.shared.get(("signal", name)) != signal_id:
                etree.SubElement(root, q(BPMN, "signal"), id=signal_id, name=name)
        for local, codes in self.codes.items():
            for code, code_id in codes.items():
                if self.shared.get((local, code)) == code_id:
                    continue
                element = etree.SubElement(root, q(BPMN, local), id=code_id, name=code)
                element.set(f"{local}Code", code)
        self._diagram(root, process_id, self._collaboration(root, process_id))
        main = root.find(q(BPMNDI, "BPMNDiagram"))
        for data in self.kept.get("styles", []) if main is not None else []:
            _append_kept(main, data)
        for data in self.kept.get("diagrams", []):
            _append_kept(root, _other_diagram(data, process_id))
        for data in self.kept.get("definitions", []):
            if isinstance(data, dict) and data.get("tag") == "relationship":
                _append_kept(root, data)
        return root

    def _handler_associations(
        self,
        process: etree._Element,
        elements: dict[str, etree._Element],
        tails: dict[str | None, list[Any]],
    ) -> None:
        """An association from each compensation boundary to its handler, unless the file the
        document came from had one (kept as it was)."""
        written = set()
        for items in tails.values():
            written |= compensation.kept_associations(items)
        for boundary, handler in self.handlers.items():
            if (boundary, handler) in written:
                continue
            parent = self.nodes[boundary].get("parent")
            container = process if parent is None else elements[parent]
            association_id = self.fresh(f"{boundary}_handler")
            etree.SubElement(
                container,
                q(BPMN, "association"),
                id=association_id,
                sourceRef=boundary,
                targetRef=handler,
                associationDirection="One",
            )
            self.associations.append((association_id, boundary, handler))

    def _collaboration(self, root: etree._Element, process_id: str) -> str | None:
        """Point the kept pool of the process at it; the id of the collaboration the main plane
        shows (the pool's, else the first), None without one."""
        collaborations = root.findall(q(BPMN, "collaboration"))
        pool = self.kept.get("pool")
        for collaboration in collaborations:
            for participant in collaboration.findall(q(BPMN, "participant")):
                if participant.get("id") == pool:
                    participant.set("processRef", process_id)
                    return collaboration.get("id")
        return collaborations[0].get("id") if collaborations else None

    def _nsmap(self) -> dict[str | None, str]:
        """Our prefixes, and the usual ones of the vendors whose extensions are kept."""
        nsmap: dict[str | None, str] = {prefix: uri for prefix, uri in EXPORT_NSMAP.items()}
        owners = [*self.nodes.values(), *self.flows.values()]
        text = json.dumps(self.kept) + json.dumps([owner.get("kept") for owner in owners])
        written = vendor.export_namespaces(self.nodes.values())
        for namespace, prefix in kept.VENDOR_PREFIXES.items():
            if "{" + namespace + "}" in text or namespace in written:
                nsmap[prefix] = namespace
        return nsmap

    def _order(self) -> dict[str, list[str]]:
        """Node and flow order when reading the nested XML back would not give it by itself."""
        scopes: dict[str | None, list[str]] = {}
        for node_id, node in self.nodes.items():
            scopes.setdefault(node.get("parent"), []).append(node_id)
        nodes: list[str] = []
        containers: list[str | None] = [None]
        stack: list[str] = list(reversed(scopes.get(None, [])))
        while stack:  # depth first, as the reader meets them in the nested XML
            node_id = stack.pop()
            nodes.append(node_id)
            if node_id in scopes:
                containers.append(node_id)
                stack.extend(reversed(scopes[node_id]))
        by_scope: dict[str | None, list[str]] = {}
        for flow_id, flow in self.flows.items():
            by_scope.setdefault(self.nodes[flow["source"]].get("parent"), []).append(flow_id)
        flows = [flow_id for scope in containers for flow_id in by_scope.get(scope, [])]
        order: dict[str, list[str]] = {}
        if nodes != list(self.nodes):
            order["nodes"] = list(self.nodes)
        if flows != list(self.flows):
            order["flows"] = list(self.flows)
        return order

    def _tag(self, node: dict[str, Any]) -> str:
        """The element a node is written as: its kind's, or a plain task keeping it all in our
        extension (an unknown kind, a boundary event without a host or definition to write)."""
        host, event = node["config"].get("attachedTo"), node["config"].get("event")
        known = isinstance(host, str) and host in self.nodes and event in BOUNDARY_EVENTS
        if node["kind"] == "boundaryEvent" and not known:
            return "task"
        return ELEMENT_FOR_KIND.get(node["kind"], "task")

    def _node(self, node_id: str, node: dict[str, Any]) -> etree._Element:
        tag = self._tag(node)
        element = etree.Element(q(BPMN, tag), id=node_id)
        kept.set_attributes(element, node.get("kept", []))
        extras = _node_extras(element, node, plain=tag == "task")
        config = dict(node["config"])
        children: list[etree._Element | None] = []
        if tag != "task":
            children = self._standard(element, node_id, node, config)
        if node_id in self.defaults:
            element.set("default", self.defaults[node_id])
        if node_id in self.handlers.values():
            element.set("isForCompensation", "true")
        if node_id in self.handlers:
            config.pop("handler", None)
        settings = vendor.export_settings(element, config) if tag != "task" else []
        _extensions(element, {"config": config, "node": extras}, settings)
        own = node.get("kept", [])
        _kept_children(element, own, ())
        for flow_id in self.incoming[node_id]:
            etree.SubElement(element, q(BPMN, "incoming")).text = flow_id
        for flow_id in self.outgoing[node_id]:
            etree.SubElement(element, q(BPMN, "outgoing")).text = flow_id
        _append_tagged(element, own, kept.NODE_FIELDS)
        element.extend(child for child in children if child is not None)
        if node["kind"] in ("subProcess", "transaction"):
            _append_tagged(element, own, ("laneSet",))
        return element

    def _standard(
        self, element: etree._Element, node_id: str, node: dict[str, Any], config: dict[str, Any]
    ) -> list[etree._Element | None]:
        """Write what standard BPMN says of a node (its kind's marks and attributes, the message
        it names, its loop, script and event definition), removing it from `config`; return the
        children to append last, in the schema's order."""
        kind = KINDS[node["kind"]]
        for attribute, value in kind.marks.items():
            element.set(attribute, value)
        children = _ATTRIBUTE_WRITERS.get(kind.name, _no_attributes)(self, element, node, config)
        if kind.message_ref and _plain_text(config.get("message")):
            element.set("messageRef", self._message_id(config.pop("message")))
        definition = self._event_definition(node_id, node, config)
        loop = _multi_instance(config) if kind.name in MULTI_INSTANCE_KINDS else None
        if loop is None and kind.name in MULTI_INSTANCE_KINDS:
            loop = _standard_loop(config)
        return [loop, *children, definition]

    def _in_event_subprocess(self, node: dict[str, Any]) -> bool:
        parent = node.get("parent")
        return parent is not None and self.nodes[parent]["kind"] == "eventSubProcess"

    def _event_definition(
        self, node_id: str, node: dict[str, Any], config: dict[str, Any]
    ) -> etree._Element | None:
        """Build the event definition, removing from `config` what it carries: the one the kind
        fixes, else the `event` config where the kind may carry it."""
        kind = node["kind"]
        name = KIND_EVENT.get(kind)
        if name is None:
            allowed = _STANDARD_EVENTS.get(kind, ())
            if kind == "startEvent":
                top = node.get("parent") is None
                allowed = PROCESS_START_EVENTS if top else ()
                allowed = EVENT_START_EVENTS if self._in_event_subprocess(node) else allowed
            if config.get("event") not in allowed:
                return None
            name = config.pop("event")
        definition = etree.Element(q(BPMN, definition_element(name)))
        definition.set("id", self.fresh(f"{node_id}_{name}"))
        _DEFINITION_WRITERS.get(name, _no_settings)(self, definition, name, kind, config)
        return definition

    def _timer(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        """The first timer setting the kind takes that XML keeps exactly (a duration in quotes
        stays in our config)."""
        for key, tag in _TIMER_TAGS.items():
            value = config.get(key)
            if key not in KINDS[kind].config_keys or not _plain_text(value):
                continue
            if key == "date" or str(value) == str(value).strip("\"'"):
                expression = _formal_expression(definition, tag, config.pop(key))
                if key in ("date", "cycle"):
                    expression.set("language", FLOWDESK_LANGUAGE)
                return

    def _message_ref(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        if _plain_text(config.get("message")):
            definition.set("messageRef", self._message_id(config.pop("message")))

    def _code_ref(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        """The error or escalation thrown or caught, by its code."""
        if _plain_text(config.get("code")):
            definition.set(f"{event}Ref", self._code_id(event, config.pop("code")))

    def _signal_ref(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        if _plain_text(config.get("signal")):
            definition.set("signalRef", self._signal_id(config.pop("signal")))

    def _link_name(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        """The schema requires a name; an awkward one stays in our config."""
        definition.set("name", config.pop("link") if _plain_text(config.get("link")) else "")

    def _condition(
        self, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
    ) -> None:
        """A conditional event's condition as a Flowdesk expression (one XML cannot keep exactly
        stays in our config)."""
        if _plain_text(config.get("condition")):
            expression = _formal_expression(definition, "condition", config.pop("condition"))
            expression.set("language", FLOWDESK_LANGUAGE)
        else:  # the schema wants the element, empty
            etree.SubElement(definition, q(BPMN, "condition")).set(
                q(XSI, "type"), "bpmn:tFormalExpression"
            )

    def _signal_id(self, name: str) -> str:
        if name not in self.signals and ("signal", name) in self.shared:
            self.signals[name] = self.shared[("signal", name)]
        if name not in self.signals:
            base = "Signal_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            self.signals[name] = self.fresh(base)
        return self.signals[name]

    def _code_id(self, local: str, code: str) -> str:
        codes = self.codes[local]
        if code not in codes and (local, code) in self.shared:
            codes[code] = self.shared[(local, code)]
        if code not in codes:
            base = local.capitalize() + "_" + re.sub(r"[^A-Za-z0-9_.-]", "_", code)
            codes[code] = self.fresh(base)
        return codes[code]

    def _message_id(self, name: str) -> str:
        if name not in self.messages and ("message", name) in self.shared:
            self.messages[name] = self.shared[("message", name)]
        if name not in self.messages:
            base = "Message_" + re.sub(r"[^A-Za-z0-9_.-]", "_", name)
            self.messages[name] = self.fresh(base)
        return self.messages[name]

    def _flow(self, process: etree._Element, flow_id: str, flow: dict[str, Any]) -> None:
        element = etree.SubElement(process, q(BPMN, "sequenceFlow"), id=flow_id)
        extras = {k: v for k, v in flow.items() if k not in _FLOW_KEYS and k != "kept"}
        kept.set_attributes(element, flow.get("kept", []))
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
        _kept_children(element, flow.get("kept", []), ())
        if condition is not None and "condition" not in extras:
            expression = _formal_expression(element, "conditionExpression", condition)
            expression.set("language", FLOWDESK_LANGUAGE)

    def _diagram(
        self, root: etree._Element, process_id: str, collaboration: str | None = None
    ) -> None:
        """The main plane (the process's, or the collaboration's that holds its pool), then one
        plane per collapsed sub-process (as bpmn-js draws them)."""
        planes: dict[str | None, etree._Element] = {}
        main = collaboration or process_id
        for scope, element_id in [(None, main), *((c, c) for c in self.collapsed)]:
            suffix = "1" if scope is None else element_id
            diagram = etree.SubElement(
                root, q(BPMNDI, "BPMNDiagram"), id=self.fresh(f"BPMNDiagram_{suffix}")
            )
            plane = etree.SubElement(
                diagram, q(BPMNDI, "BPMNPlane"), id=self.fresh(f"BPMNPlane_{suffix}")
            )
            plane.set("bpmnElement", element_id)
            planes[scope] = plane
        boxes: dict[str, routing.Box] = {}
        shapes: dict[str, etree._Element] = {}
        plane_of: dict[str, str | None] = {}
        depth = depths(self.doc)
        for node_id in sorted(self.nodes, key=depth.__getitem__):
            parent = self.nodes[node_id].get("parent")
            outer = plane_of.get(parent) if parent is not None else None
            plane_of[node_id] = parent if parent in self.collapsed else outer
        for node_id, node in self.nodes.items():
            scope = plane_of[node_id]
            shape = etree.SubElement(
                planes[scope], q(BPMNDI, "BPMNShape"), id=self.fresh(f"{node_id}_di")
            )
            shapes[node_id] = shape
            shape.set("bpmnElement", node_id)
            if node["kind"] == "exclusiveGateway":
                shape.set("isMarkerVisible", "true")
            if node["kind"] in SCOPE_KINDS:
                shape.set("isExpanded", "false" if node_id in self.collapsed else "true")
            box = layout.node_box(node)
            if box is None:
                box = layout.node_box(self.placed[node_id])
                shape.set(q(FLOWDESK, "generated"), "true")
            assert box is not None
            boxes[node_id] = box
            bounds = etree.SubElement(shape, q(DC, "Bounds"))
            for name, value in zip(("x", "y", "width", "height"), box, strict=True):
                bounds.set(name, _number(value))
        shapes_on: dict[str | None, dict[str, routing.Box]] = {}
        for node_id, box in boxes.items():
            shapes_on.setdefault(plane_of[node_id], {})[node_id] = box
        ends_on: dict[str | None, dict[str, tuple[str, str]]] = {}
        for flow_id, flow in self.flows.items():
            pair = (flow["source"], flow["target"])
            ends_on.setdefault(plane_of[flow["source"]], {})[flow_id] = pair
        routes: dict[str, list[dict[str, float]]] = {}
        for scope, ends in ends_on.items():
            here = shapes_on.get(scope, {})
            kinds = {node_id: self.nodes[node_id]["kind"] for node_id in here}
            hosts = layout.boundary_hosts(self.nodes, here, here)
            routes.update(routing.route_flows(here, kinds, ends, hosts=hosts))
        drawn: dict[str | None, list[list[dict[str, Any]]]] = {}
        for flow_id, flow in self.flows.items():
            scope = plane_of[flow["source"]]
            edge = etree.SubElement(
                planes[scope], q(BPMNDI, "BPMNEdge"), id=self.fresh(f"{flow_id}_di")
            )
            edge.set("bpmnElement", flow_id)
            points = flow["waypoints"]
            if len(points) < 2 or any(set(p) != {"x", "y"} for p in points):
                points = routes[flow_id]
                edge.set(q(FLOWDESK, "generated"), "true")
            drawn.setdefault(scope, []).append(points)
            for point in points:
                waypoint = etree.SubElement(edge, q(DI, "waypoint"))
                waypoint.set("x", _number(point["x"]))
                waypoint.set("y", _number(point["y"]))
            if flow["title"] and xml_safe(flow["title"]):
                _label(edge, routing.label_bounds(points, flow["title"]))
        for entry in self.kept.get("diagram", []):
            plane = planes.get(entry.get("plane")) if entry.get("plane") else None
            _append_kept(planes[None] if plane is None else plane, entry.get("element"))
        for association_id, boundary, handler in self.associations:
            edge = etree.SubElement(
                planes[plane_of[boundary]],
                q(BPMNDI, "BPMNEdge"),
                id=self.fresh(f"{association_id}_di"),
            )
            edge.set("bpmnElement", association_id)
            for x, y, width, height in (boxes[boundary], boxes[handler]):
                waypoint = etree.SubElement(edge, q(DI, "waypoint"))
                waypoint.set("x", _number(x + width / 2))
                waypoint.set("y", _number(y + height / 2))
        indexes: dict[str | None, routing.RouteIndex] = {}
        for node_id, node in self.nodes.items():
            if node["title"] and xml_safe(node["title"]):
                plane = plane_of[node_id]
                if plane not in indexes:
                    indexes[plane] = routing.RouteIndex(drawn.get(plane, []))
                spot = routing.name_bounds(
                    boxes[node_id], node["kind"], node["title"], indexes[plane]
                )
                if spot is not None:
                    _label(shapes[node_id], spot)


_TIMER_TAGS = {"duration": "timeDuration", "date": "timeDate", "cycle": "timeCycle"}

DefinitionWriter = Callable[[_Writer, etree._Element, str, str, dict[str, Any]], None]


def _no_settings(
    writer: _Writer, definition: etree._Element, event: str, kind: str, config: dict[str, Any]
) -> None:
    """A terminate end carries nothing besides its definition."""


#: What each event definition carries of the config (the reader's `standard_config` reads it).
_DEFINITION_WRITERS: dict[str, DefinitionWriter] = {
    "timer": _Writer._timer,
    "message": _Writer._message_ref,
    "error": _Writer._code_ref,
    "escalation": _Writer._code_ref,
    "signal": _Writer._signal_ref,
    "link": _Writer._link_name,
    "compensate": lambda writer, definition, event, kind, config: compensation.write_definition(
        definition, config
    ),
    "conditional": _Writer._condition,
}

AttributeWriter = Callable[
    [_Writer, etree._Element, dict[str, Any], dict[str, Any]], list[etree._Element | None]
]


def _no_attributes(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    return []


def _scope(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    """The diagram says a sub-process is collapsed: isExpanded="false" and a plane."""
    if config.get("collapsed") is True:
        del config["collapsed"]
    return []


def _call_activity(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    if is_valid_id(config.get("process")):
        element.set("calledElement", config.pop("process"))
    return []


# Attributes only for values that differ from BPMN's default: bpmn-js drops defaults when it
# saves, so a default value stays in our extension to come back unchanged.


def _boundary_event(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    element.set("attachedToRef", config.pop("attachedTo"))
    if config.get("interrupting") is False:
        element.set("cancelActivity", "false")
        del config["interrupting"]
    return []


def _start_event(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    """A non-interrupting start of an event sub-process."""
    typed = config.get("event") in EVENT_START_EVENTS
    if writer._in_event_subprocess(node) and typed and config.get("interrupting") is False:
        element.set("isInterrupting", "false")
        del config["interrupting"]
    return []


def _script_task(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    return [_script(element, config)]


def _complex_gateway(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    """The activation condition as `<activationCondition>` (when XML keeps it exactly)."""
    if not _plain_text(config.get("activation")):
        return []
    condition = etree.Element(q(BPMN, "activationCondition"))
    condition.set(q(XSI, "type"), "bpmn:tFormalExpression")
    condition.set("language", FLOWDESK_LANGUAGE)
    condition.text = config.pop("activation")
    return [condition]


def _adhoc(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    """`ordering`, `cancelRemainingInstances` and the `<completionCondition>` (what XML keeps
    exactly); the activities to activate stay in our config (standard BPMN has no place)."""
    _scope(writer, element, node, config)
    if config.get("ordering") in ("parallel", "sequential"):
        element.set("ordering", str(config.pop("ordering")).capitalize())
    if config.get("cancelRemaining") is False:
        del config["cancelRemaining"]
        element.set("cancelRemainingInstances", "false")
    if not _plain_text(config.get("completion")):
        return []
    condition = etree.Element(q(BPMN, "completionCondition"))
    condition.set(q(XSI, "type"), "bpmn:tFormalExpression")
    condition.set("language", FLOWDESK_LANGUAGE)
    condition.text = config.pop("completion")
    return [condition]


def _instantiating(
    writer: _Writer, element: etree._Element, node: dict[str, Any], config: dict[str, Any]
) -> list[etree._Element | None]:
    """`instantiate="true"` and a parallel gateway's `eventGatewayType`."""
    if config.get("instantiate") is True:
        del config["instantiate"]
        element.set("instantiate", "true")
    if config.get("gatewayType") == "parallel":
        del config["gatewayType"]
        element.set("eventGatewayType", "Parallel")
    return []


#: What each kind writes of its config as attributes and children of its element (besides the
#: marks, message, loop and event definition every kind that has them writes); the reader's
#: `_CONFIG_READERS` reads them back.
_ATTRIBUTE_WRITERS: dict[str, AttributeWriter] = {
    "subProcess": _scope,
    "eventSubProcess": _scope,
    "transaction": _scope,
    "callActivity": _call_activity,
    "boundaryEvent": _boundary_event,
    "startEvent": _start_event,
    "scriptTask": _script_task,
    "complexGateway": _complex_gateway,
    "adHocSubProcess": _adhoc,
    "receiveTask": _instantiating,
    "eventBasedGateway": _instantiating,
}


def _node_extras(element: etree._Element, node: dict[str, Any], *, plain: bool) -> dict[str, Any]:
    """Set the node's name; return what standard BPMN cannot carry of it (for `flowdesk:node`):
    its kind when written as a plain task, an awkward title or position, other keys."""
    extras = {k: v for k, v in node.items() if k not in _NODE_KEYS and k not in ("parent", "kept")}
    if node["kind"] not in ELEMENT_FOR_KIND or plain:
        extras["kind"] = node["kind"]
    if xml_safe(node["title"]):
        if node["title"]:
            element.set("name", node["title"])
    else:
        extras["title"] = node["title"]
    if "position" in node and set(node["position"]) != _SHAPE_KEYS:
        extras["position"] = node["position"]
    return extras


def _other_diagram(data: dict[str, Any], process_id: str) -> dict[str, Any]:
    """A kept diagram as written: a plane marked as drawing the process gets its id."""
    children = []
    for child in data.get("children") or []:
        attrs = child.get("attrs") if isinstance(child, dict) else None
        if isinstance(attrs, dict) and attrs.get(kept.OURS) == "true":
            attrs = {k: v for k, v in attrs.items() if k != kept.OURS}
            child = {**child, "attrs": {**attrs, "bpmnElement": process_id}}
        children.append(child)
    return {**data, "children": children}


def _append_kept(parent: etree._Element, data: Any) -> None:
    element = kept.to_xml(data)
    if element is not None:
        parent.append(element)


def _kept_children(element: etree._Element, items: list[Any], after: tuple[str, ...]) -> list[Any]:
    """Write the foreign extensions among `items` into `element`'s extensionElements and the
    head children (ioSpecification, property, laneSet) of a scope; return the rest."""
    foreign = [
        d
        for d in items
        if isinstance(d, dict) and d.get("tag") != kept.ATTRIBUTES and kept.is_foreign(d.get("tag"))
    ]
    if foreign:
        container = element.find(q(BPMN, "extensionElements"))
        if container is None:
            container = etree.SubElement(element, q(BPMN, "extensionElements"))
        for data in foreign:
            _append_kept(container, data)
    if after:  # a process: its head children follow the extensions
        for data in items:
            if isinstance(data, dict) and data.get("tag") in kept.SCOPE_HEAD:
                _append_kept(element, data)
    return items


def _label(parent: etree._Element, box: routing.Box) -> None:
    """Write where an editor draws the element's name (BPMNLabel bounds)."""
    bounds = etree.SubElement(etree.SubElement(parent, q(BPMNDI, "BPMNLabel")), q(DC, "Bounds"))
    for name, value in zip(("x", "y", "width", "height"), box, strict=True):
        bounds.set(name, _number(value))


def _multi_instance(config: dict[str, Any]) -> etree._Element | None:
    """The loop characteristics of `config["multiInstance"]`; what BPMN cannot say stays there."""
    settings = config.get("multiInstance")
    if not isinstance(settings, dict):
        return None
    rest = dict(settings)
    loop = etree.Element(q(BPMN, "multiInstanceLoopCharacteristics"))
    if rest.get("sequential") is True:
        loop.set("isSequential", "true")
        del rest["sequential"]
    for key, tag in (("cardinality", "loopCardinality"), ("completion", "completionCondition")):
        if _plain_text(rest.get(key)):
            expression = _formal_expression(loop, tag, rest.pop(key))
            expression.set("language", FLOWDESK_LANGUAGE)
    if rest or not settings:
        config["multiInstance"] = rest
    else:
        del config["multiInstance"]
    return loop


def _standard_loop(config: dict[str, Any]) -> etree._Element | None:
    """The `standardLoopCharacteristics` of `config["loop"]`; what BPMN cannot say stays there."""
    settings = config.get("loop")
    if not isinstance(settings, dict) or not settings:
        return None
    rest = dict(settings)
    loop = etree.Element(q(BPMN, "standardLoopCharacteristics"))
    if isinstance(rest.get("testBefore"), bool):
        loop.set("testBefore", "true" if rest.pop("testBefore") else "false")
    maximum = rest.get("maximum")
    if isinstance(maximum, int) and not isinstance(maximum, bool) and maximum > 0:
        loop.set("loopMaximum", str(rest.pop("maximum")))
    if _plain_text(rest.get("condition")):
        expression = _formal_expression(loop, "loopCondition", rest.pop("condition"))
        expression.set("language", FLOWDESK_LANGUAGE)
    if rest:
        config["loop"] = rest
    else:
        del config["loop"]
    return loop


def _script(element: etree._Element, config: dict[str, Any]) -> etree._Element | None:
    """`scriptFormat` and the `<script>` text (verbatim when XML keeps it exactly)."""
    language = config.get("language")
    if isinstance(language, str) and _plain_text(language) and language == language.lower():
        element.set("scriptFormat", config.pop("language"))
    text = config.get("script")
    if not (xml_safe(text) and isinstance(text, str) and text.strip() and "\r" not in text):
        return None
    script = etree.Element(q(BPMN, "script"))
    script.text = config.pop("script")
    return script


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


def _extensions(
    element: etree._Element, blobs: Mapping[str, Any], settings: list[etree._Element] | None = None
) -> None:
    """Write non-empty JSON blobs as `<flowdesk:NAME>` inside `bpmn:extensionElements`, then
    the vendor `settings` elements."""
    present = {name: value for name, value in blobs.items() if value}
    if not present and not settings:
        return
    container = etree.SubElement(element, q(BPMN, "extensionElements"))
    for name, value in present.items():
        etree.SubElement(container, q(FLOWDESK, name)).text = config_json(value)
    container.extend(settings or [])


def _append_tagged(element: etree._Element, items: list[Any], tags: Any) -> None:
    """Append the kept elements among `items` whose tag is one of `tags`."""
    for data in items:
        if isinstance(data, dict) and data.get("tag") in tags:
            _append_kept(element, data)
