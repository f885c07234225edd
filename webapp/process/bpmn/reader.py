"""Import BPMN 2.0 XML (ours or any modeler's) into a process document.

Elements are matched by namespace URI. One process is imported: `process_id`, else the first
executable process with flow nodes, else the first with flow nodes. Sub-processes (expanded or
collapsed, with a plane of their own as bpmn-js writes them) are read recursively: their nodes
name them in `parent`. Nothing is dropped silently: `unsupported` lists every element not imported
(other pools, message flows, transactions, compensation events, business rule tasks, complex
gateways...) or imported without part of its meaning, and every sequence flow that touches one.
Modelling-only elements (data objects and stores, lanes, annotations, groups, other vendors'
extensions...) are kept as they are (see `kept`). A file
with duplicate ids, or whose process has no flow nodes, is refused. Positions come from BPMNDI; a
file with no usable DI gets `auto_layout`, nodes missing a shape are put below the rest.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from lxml import etree

from webapp.process.document import (
    CURRENT_FORMAT_VERSION,
    VARIABLES_POOL,
    DocumentError,
    is_valid_id,
    normalize,
    upgrade,
)
from webapp.process.kinds import KINDS, MULTI_INSTANCE_KINDS, SCOPE_KINDS, element_kind
from webapp.process.naming import Namer, capitalized
from webapp.process.validation import Problem

from . import conditions, events, kept, layout, safe_xml, structure
from .compensation import compensation_handlers
from .model import BpmnImportError, ImportResult, UnsupportedElement
from .namespaces import BPMN, BPMNDI, DC, DI, FLOWDESK, FLOWDESK_LANGUAGE, ZEEBE, q, split
from .vendor import (
    WRITTEN_BACK,
    business_rule_task_config,
    script_task_config,
    service_task_config,
    start_event_config,
    user_task_config,
)
from .writer import EXPORTER

MAX_BYTES = 5_000_000

#: Elements read as another kind, with the warning that says so: a plain task is a user task.
ALIASES = {"task": ("userTask", "import.task_as_user_task")}
#: Flow nodes Flowdesk has no kind for: listed as unsupported, their flows with them.
_UNSUPPORTED_NODES = {
    "callChoreography",
    "subChoreography",
    "choreographyTask",
}
FLOW_NODES = {
    *(kind.element for kind in KINDS.values()),
    *ALIASES,
    *events.EVENTS,
    *_UNSUPPORTED_NODES,
}
_SILENT = {"documentation", "extensionElements", "auditing", "monitoring"}
#: Modelling-only children of a process or sub-process, kept as they are (see `kept`).
_KEPT_SCOPE = {*kept.SCOPE_HEAD, *kept.SCOPE_TAIL}
_NODE_CHILDREN = {
    "documentation",
    "extensionElements",
    "incoming",
    "outgoing",
    "script",
    "activationCondition",
    "completionCondition",
}
#: Elements whose flow nodes are read as the nodes of their scope.
_SCOPE_ELEMENTS = ("subProcess", "transaction", "adHocSubProcess")
#: What a sub-process element holds besides its own settings: read as nodes of its scope.
_SCOPE_CHILDREN = {*FLOW_NODES, *_SILENT, *_KEPT_SCOPE, "sequenceFlow"}


def import_bpmn(
    data: bytes | str, *, max_bytes: int = MAX_BYTES, process_id: str | None = None
) -> ImportResult:
    """Import a BPMN file; raises `BpmnImportError` only when the file cannot be read at all."""
    root = safe_xml.parse(data, max_bytes=max_bytes)
    if split(root.tag) != (BPMN, "definitions"):
        namespace, local = split(root.tag)
        raise BpmnImportError(
            f"Not a BPMN 2.0 file: the root element is '{local}' in namespace '{namespace}', "
            f"expected 'definitions' in '{BPMN}'",
            root.sourceline,
        )
    return _Reader(root).read(process_id)


def _referenced_outside(root: etree._Element, process: etree._Element) -> set[str]:
    """The ids that elements outside `process` name (other pools' events, message flows,
    correlation properties): the definitions they use must keep their ids."""
    found: set[str] = set()
    for child in root:
        if child is process or not isinstance(child.tag, str):
            continue
        for element in child.iter():
            if not isinstance(element.tag, str):
                continue
            for key, value in element.attrib.items():
                if key not in ("id", "name"):
                    found.update(part.rpartition(":")[2] for part in str(value).split())
            if element.text and element.text.strip() and split(element.tag)[1].endswith("Ref"):
                found.add(element.text.strip().rpartition(":")[2])
    return found


def _kept_definition(element: etree._Element, outside: set[str]) -> bool:
    """Whether a root element is kept as written: modelling-only ones always; a message,
    signal, error or escalation when the writer could not make it again as it is."""
    namespace, local = split(element.tag)
    if namespace != BPMN:
        return False
    if local in kept.DEFINITIONS:
        return True
    if local not in kept.SHARED_DEFINITIONS:
        return False
    nameless = local in ("message", "signal") and not element.get("name")
    return (
        nameless
        or element.get("id") in outside
        or _carries_more(element)
        or not _writer_made(local, element)
    )


def _writer_made(local: str, element: etree._Element) -> bool:
    """Whether the element is what the writer makes of a name or code (`Message_<name>`, with
    a number when taken): then the writer makes it again, and anything else keeps its id."""
    value = element.get(f"{local}Code") if local in ("error", "escalation") else element.get("name")
    if value is None:
        return False
    base = f"{local.capitalize()}_" + re.sub(r"[^A-Za-z0-9_.-]", "_", value)
    return re.fullmatch(re.escape(base) + r"(_\d+)?", element.get("id") or "") is not None


def _carries_more(element: etree._Element) -> bool:
    """Whether a message, signal, error or escalation holds more than the writer makes of it
    (an id, a name, a code): an item type, documentation, a vendor extension."""
    plain = {"id", "name", "errorCode", "escalationCode"}
    return any(str(key) not in plain for key in element.attrib) or any(
        isinstance(child.tag, str) for child in element
    )


@dataclass(frozen=True)
class ProcessChoice:
    """A process of a file that could be imported: its id, its (or its pool's) name, how many
    flow nodes it has, and whether it is executable."""

    id: str
    name: str
    nodes: int
    executable: bool
    #: The titles of its first named steps, so a person can tell the pools apart.
    titles: tuple[str, ...] = ()


#: How many step titles a process choice previews.
PREVIEW_TITLES = 4


def process_choices(data: bytes | str, *, max_bytes: int = MAX_BYTES) -> list[ProcessChoice]:
    """The processes a person may pick from: more than one means the import page asks which.
    Those with flow nodes; executable ones only when there are any; [] for one Flowdesk wrote."""
    root = safe_xml.parse(data, max_bytes=max_bytes)
    if split(root.tag) != (BPMN, "definitions"):
        return []
    pools = {
        local_ref(p.get("processRef")): p.get("name", "") for p in root.iter(q(BPMN, "participant"))
    }
    found = []
    for process in root.findall(q(BPMN, "process")):
        if _is_ours(process):
            return []
        steps = [child for child in process.iter() if split(child.tag)[1] in FLOW_NODES]
        if steps:
            process_id = process.get("id", "")
            name = process.get("name") or pools.get(process_id) or ""
            titles = [" ".join(t.split()) for s in steps if (t := s.get("name") or "").strip()]
            found.append(
                ProcessChoice(
                    process_id,
                    name,
                    len(steps),
                    process.get("isExecutable") == "true",
                    tuple(titles[:PREVIEW_TITLES]),
                )
            )
    executable = [choice for choice in found if choice.executable]
    return executable or found


def _is_ours(process: etree._Element) -> bool:
    """A process Flowdesk wrote (it carries our document extension): the one a save reads."""
    try:
        return flowdesk_blob(process, "document") is not None
    except ValueError:
        return False


def _own_pool(definitions: list[dict[str, Any]], process_id: str) -> str | None:
    """The participant (pool) of the imported process, its processRef taken out: the writer
    points it at the process under whatever id the process is written with."""
    for data in definitions:
        if data.get("tag") != "collaboration":
            continue
        for child in data.get("children") or []:
            attrs = child.get("attrs") if isinstance(child, dict) else None
            if child.get("tag") != "participant" or not isinstance(attrs, dict):
                continue
            if local_ref(attrs.get("processRef")) == process_id and attrs.get("id"):
                del attrs["processRef"]
                return str(attrs["id"])
    return None


def _plane_of(diagram: etree._Element) -> str:
    plane = diagram.find(q(BPMNDI, "BPMNPlane"))
    return local_ref(plane.get("bpmnElement")) if plane is not None else ""


def local_ref(value: str | None) -> str:
    """Strip a QName prefix from an id reference (`tns:Task_1` -> `Task_1`)."""
    return (value or "").strip().rpartition(":")[2]


def flowdesk_blob(element: etree._Element, name: str) -> dict[str, Any] | None:
    """Return the JSON object in `<extensionElements><flowdesk:NAME>`; raise ValueError if bad."""
    for container in element.findall(q(BPMN, "extensionElements")):
        for child in container.findall(q(FLOWDESK, name)):
            try:
                value = json.loads(child.text or "")
            except RecursionError:
                raise ValueError("nested too deeply") from None
            if not isinstance(value, dict):
                raise ValueError("not a JSON object")
            return value
    return None


def _scenarios(process: etree._Element) -> list[Any] | None:
    """The test scenarios in the process's `<flowdesk:scenarios>` (None without one); a file
    whose element is not a JSON list cannot be read (BpmnImportError naming its line)."""
    for container in process.findall(q(BPMN, "extensionElements")):
        for child in container.findall(q(FLOWDESK, "scenarios")):
            where = f"flowdesk:scenarios of process '{process.get('id')}'"
            try:
                value = json.loads(child.text or "")
            except json.JSONDecodeError as error:
                raise BpmnImportError(
                    f"{where} is not JSON: {error.msg}", child.sourceline
                ) from None
            except RecursionError:
                raise BpmnImportError(f"{where} is nested too deeply", child.sourceline) from None
            if not isinstance(value, list):
                raise BpmnImportError(f"{where} must be a JSON list of scenarios", child.sourceline)
            return value
    return None


class _Reader:
    def __init__(self, root: etree._Element) -> None:
        self.root = root
        self.warnings: list[Problem] = []
        self.unsupported: list[UnsupportedElement] = []
        self.ids: set[str] = set()
        standard: set[str] = set()  # ids of BPMN and DI elements, unique by the schema
        for element in root.iter():
            element_id = element.get("id") if isinstance(element.tag, str) else None
            if element_id and split(element.tag)[0] in (BPMN, BPMNDI, DC, DI):
                if element_id in standard:
                    raise BpmnImportError(
                        f"The id '{element_id}' is used by more than one element; "
                        "ids must be unique",
                        element.sourceline,
                    )
                standard.add(element_id)
            if element_id:
                self.ids.add(element_id)
        self.renamed: dict[str, str] = {}
        self.attached: list[str] = []  # boundary events whose host is a reference in the file
        self.messages = events.message_names(root)
        self.signals = events.signal_names(root)
        self.correlation = events.correlation_keys(root)
        self.by_business_key = events.correlates_on_business_key(root)
        self.refs = {local: events.codes(root, local) for local in ("error", "escalation")}
        self.planes = {
            local_ref(plane.get("bpmnElement")) for plane in root.iter(q(BPMNDI, "BPMNPlane"))
        }
        self.expanded: dict[str, str | None] = {}
        self.ours = False  # the process is one Flowdesk wrote: its configs say everything
        for shape in root.iter(q(BPMNDI, "BPMNShape")):
            self.expanded.setdefault(local_ref(shape.get("bpmnElement")), shape.get("isExpanded"))

    def warn(self, code: str, element_id: str | None, message: str) -> None:
        self.warnings.append(Problem(code, "warning", element_id, message))

    def skip(self, element: etree._Element, kind: str, detail: str = "", id_: str = "") -> None:
        parent = element.getparent()
        element_id = (
            id_ or element.get("id") or (parent.get("id", "") if parent is not None else "")
        )
        self.unsupported.append(UnsupportedElement(element_id, kind, element.sourceline, detail))

    def blob(self, element: etree._Element, name: str) -> dict[str, Any]:
        """Our extension data on `element` ({} when absent; a warning when unreadable)."""
        try:
            return flowdesk_blob(element, name) or {}
        except ValueError as exc:
            element_id = element.get("id")
            self.warn("import.extension_invalid", element_id, f"flowdesk:{name} ignored: {exc}")
            return {}

    def fresh(self, base: str) -> str:
        candidate, n = base, 1
        while candidate in self.ids:
            n += 1
            candidate = f"{base}_{n}"
        self.ids.add(candidate)
        return candidate

    def read(self, process_id: str | None) -> ImportResult:
        process = self._choose_process(process_id)
        ext = self.blob(process, "document")
        self.ours = bool(ext)
        doc: dict[str, Any] = {"format_version": CURRENT_FORMAT_VERSION}
        if not ext:
            doc["key"] = process.get("id", "")
            name = process.get("name") or self._participant_name(process.get("id"))
            if name:
                doc["name"] = name
        else:
            doc.update({k: v for k, v in ext.items() if k not in ("nodes", "flows", "kept")})
        doc.update(_foreign_settings(self.root, ext))
        nodes: dict[str, Any] = {}
        origin: dict[str, str] = {}
        containers: list[etree._Element] = []
        self._nodes(process, None, nodes, origin, containers)
        doc["kept"] = self._kept(process, nodes, origin)
        for node_id in self.attached:
            config = nodes[node_id].get("config")
            host = config.get("attachedTo") if isinstance(config, dict) else None
            if isinstance(host, str):
                config["attachedTo"] = self.renamed.get(host, host)
        compensation_handlers(self.root, nodes, self.renamed, self.warn)
        doc["nodes"] = nodes
        doc["flows"] = self._flows(containers, nodes)
        self._reorder(process, doc)
        self._positions(doc, origin)
        kept.prune(doc)
        try:
            document = normalize(upgrade(doc))
        except DocumentError as exc:
            raise BpmnImportError(f"The imported process is not a valid document: {exc}") from None
        except RecursionError:
            raise BpmnImportError(
                "The file's Flowdesk extension data is nested too deeply"
            ) from None
        scenarios = _scenarios(process)
        if scenarios is not None:
            document["scenarios"] = scenarios
        return ImportResult(document, named(document, self.warnings), self.unsupported)

    def _choose_process(self, process_id: str | None) -> etree._Element:
        def has_nodes(p: etree._Element) -> bool:
            return any(split(child.tag) in {(BPMN, t) for t in FLOW_NODES} for child in p)

        processes = self.root.findall(q(BPMN, "process"))
        if process_id is not None:
            chosen = [p for p in processes if p.get("id") == process_id]
            if not chosen:
                ids = ", ".join(str(p.get("id")) for p in processes) or "none"
                raise BpmnImportError(f"No process with id '{process_id}' (the file has: {ids})")
        else:
            chosen = [p for p in processes if has_nodes(p) and _is_ours(p)]
            chosen = chosen or [
                p for p in processes if has_nodes(p) and p.get("isExecutable") == "true"
            ]
            chosen = chosen or [p for p in processes if has_nodes(p)] or processes
        if not chosen:
            raise BpmnImportError("The file contains no BPMN process")
        if not has_nodes(chosen[0]):
            raise BpmnImportError(
                f"Process '{chosen[0].get('id')}' has no flow nodes (no events, tasks or "
                "gateways): there is nothing to import",
                chosen[0].sourceline,
            )
        return chosen[0]

    def _kept(
        self, process: etree._Element, nodes: dict[str, Any], origin: dict[str, str]
    ) -> dict[str, Any]:
        """The modelling-only parts of the file: root elements, the process's own, the diagram
        shapes and edges of all of them (on a collapsed sub-process's plane or the main), and
        the file's other diagrams whole."""
        outside = _referenced_outside(self.root, process)
        definitions = [
            kept.to_data(child)
            for child in self.root
            if child is not process and _kept_definition(child, outside)
        ]
        pool = _own_pool(definitions, process.get("id", ""))
        own = kept.foreign_extensions(process) + [
            kept.to_data(child)
            for child in process
            if split(child.tag)[0] == BPMN and split(child.tag)[1] in _KEPT_SCOPE
        ]
        in_nodes = [item for node in nodes.values() for item in node.get("kept", [])]
        wanted = kept.ids_in([*definitions, *own, *in_nodes])
        ours = self._our_diagrams(nodes, origin)
        planes = [d.find(q(BPMNDI, "BPMNPlane")) for d in ours]
        diagram = kept.diagram_elements(self.root, wanted, [p for p in planes if p is not None])
        for entry in diagram:
            owner = nodes.get(entry["plane"])
            collapsed = owner is not None and owner["config"].get("collapsed") is True
            entry["plane"] = entry["plane"] if collapsed else None
        diagrams = [
            self._other_diagram(element, process.get("id", ""))
            for element in self.root.findall(q(BPMNDI, "BPMNDiagram"))
            if element not in ours
        ]
        result = {
            "definitions": definitions,
            "process": own,
            "diagram": diagram,
            "pool": pool,
            "diagrams": diagrams,
            "styles": [
                kept.to_data(style)
                for element in ours
                for style in element.findall(q(BPMNDI, "BPMNLabelStyle"))
            ],
        }
        return {name: items for name, items in result.items() if items}

    def _our_diagrams(self, nodes: dict[str, Any], origin: dict[str, str]) -> list[Any]:
        """The diagrams the export writes anew: the first that draws a top-level node, and the
        first plane of each collapsed sub-process; the file's others are kept whole."""
        diagrams = self.root.findall(q(BPMNDI, "BPMNDiagram"))

        def draws(diagram: etree._Element, ids: set[str]) -> bool:
            return any(
                local_ref(shape.get("bpmnElement")) in ids
                for shape in diagram.iter(q(BPMNDI, "BPMNShape"))
            )

        top = {origin.get(key, key) for key, node in nodes.items() if "parent" not in node}
        ours = [next((d for d in diagrams if draws(d, top)), None)]
        for node_id, node in nodes.items():
            if node["config"].get("collapsed") is True:
                source = origin.get(node_id, node_id)
                ours.append(next((d for d in diagrams if _plane_of(d) == source), None))
        return [d for d in ours if d is not None]

    def _other_diagram(self, element: etree._Element, process_id: str) -> dict[str, Any]:
        """A diagram kept whole; a plane that draws the imported process is marked, as the
        export may write the process under another id."""
        data = kept.to_data(element)
        for child in data.get("children", []):
            attrs = child.get("attrs")
            plane = child["tag"] == kept.PLANE and isinstance(attrs, dict)
            if plane and attrs.get("bpmnElement") == process_id:
                del attrs["bpmnElement"]
                attrs[kept.OURS] = "true"
        return data

    def _participant_name(self, process_id: str | None) -> str:
        for participant in self.root.iter(q(BPMN, "participant")):
            if local_ref(participant.get("processRef")) == process_id:
                return participant.get("name", "")
        return ""

    def _nodes(
        self,
        container: etree._Element,
        parent: str | None,
        nodes: dict[str, Any],
        origin: dict[str, str],
        containers: list[etree._Element],
    ) -> None:
        """Read the flow nodes of the process or a sub-process, and those of its sub-processes."""
        containers.append(container)
        in_event_subprocess = parent is not None and nodes[parent]["kind"] == "eventSubProcess"
        for element in container:
            namespace, local = split(element.tag)
            if namespace != BPMN or local in _SILENT or local == "sequenceFlow":
                continue
            if parent is not None and local not in _SCOPE_CHILDREN:
                continue  # the sub-process's own settings, read (or listed) by `_node`
            if local in _KEPT_SCOPE:
                continue  # kept as they are by `_kept` (the process) or `_node` (a sub-process)
            if local not in FLOW_NODES:
                self.skip(element, local)
            else:
                node = self._node(element, local, in_event_subprocess, parent is None)
                if node is None:
                    continue
                node_id = self._node_id(element, local)
                if node_id in nodes:
                    self.skip(element, local, f"duplicate id '{node_id}'")
                    continue
                if parent is not None:
                    node["parent"] = parent
                nodes[node_id] = node
                origin[node_id] = element.get("id", "")
                if local == "boundaryEvent" and node["kind"] == "boundaryEvent":
                    self.attached.append(node_id)
                if local in _SCOPE_ELEMENTS:  # its nodes are read even if our extension says
                    self._nodes(element, node_id, nodes, origin, containers)  # another kind

    def _node_id(self, element: etree._Element, local: str) -> str:
        original = element.get("id", "")
        if is_valid_id(original):
            return original
        node_id = self.fresh(local[0].upper() + local[1:])
        if original:
            self.renamed[original] = node_id
            self.warn("import.id_renamed", node_id, f"Id '{original}' renamed to '{node_id}'")
        return node_id

    def _node(
        self,
        element: etree._Element,
        local: str,
        in_event_subprocess: bool = False,
        top_level: bool = False,
    ) -> dict[str, Any] | None:
        node_id = element.get("id", "")

        def warn(code: str, message: str) -> None:
            self.warn(code, node_id, message)

        refused = _refusal(element, local)
        if refused is not None:
            self.skip(element, *refused)
            return None
        read = self._kind(element, local, warn, in_event_subprocess, top_level)
        if read is None:
            return None
        kind, config = read
        config.update(_CONFIG_READERS.get(kind, _no_config)(self, element, warn, config))
        event = config.get("event")
        multi: dict[str, Any] | None = None
        loop: dict[str, Any] | None = None
        if kind in MULTI_INSTANCE_KINDS:
            multi, save_to = structure.multi_instance(element, warn)
            if save_to and "saveTo" not in config:
                config["saveTo"] = save_to
            loop = structure.standard_loop(element, warn)
            if loop is not None:
                config["loop"] = loop
        kept_here = self._children(element, local, kind, multi is not None, loop is not None)
        ours = self.blob(element, "config")
        extras = self.blob(element, "node")
        self._merge_ours(config, kind, ours, extras, multi)
        standard = events.standard_config(
            element,
            kind,
            warn,
            self.messages,
            self.refs,
            event,
            self.signals,
            ours,
            top_level,
            foreign=not self.ours,
        )
        config.update(standard)
        node: dict[str, Any] = {"kind": kind, "title": element.get("name", ""), "config": config}
        node.update(extras)
        node.pop("kept", None)
        if kept_here:
            node["kept"] = kept_here
        self._correlation(node, element, top_level, warn)
        return node

    def _kind(
        self,
        element: etree._Element,
        local: str,
        warn: events.Warn,
        in_event_subprocess: bool,
        top_level: bool,
    ) -> tuple[str, dict[str, Any]] | None:
        """The kind an element is imported as, with the `event` its definition gives; None after
        listing an element Flowdesk has no kind for."""
        if local in events.EVENTS:
            return events.read_event(
                element, local, self.skip, self.root, in_event_subprocess, top_level
            )
        if local in ALIASES:
            kind, code = ALIASES[local]
            warn(code, f"{local} imported as a {KINDS[kind].label.lower()}")
            return kind, {}
        found = element_kind(local, element.attrib)
        if found is None:
            self.skip(element, local)
            return None
        return found, {}

    def _children(
        self, element: etree._Element, local: str, kind: str, looped: bool, loops: bool = False
    ) -> list[dict[str, Any]]:
        """The element's modelling-only children and foreign extensions, kept as they are; any
        other child Flowdesk does not read is listed as unsupported."""
        node_id = element.get("id", "")
        allowed = _NODE_CHILDREN | (_SCOPE_CHILDREN if kind in SCOPE_KINDS else set())
        kept_here = kept.foreign_extensions(element)
        for child in element:
            namespace, child_local = split(child.tag)
            if namespace != BPMN:
                continue
            if child_local in kept.NODE_FIELDS or (
                local in _SCOPE_ELEMENTS and child_local in _KEPT_SCOPE
            ):
                kept_here.append(kept.to_data(child))
            elif not (
                child_local in allowed
                or (looped and child_local == "multiInstanceLoopCharacteristics")
                or (loops and child_local == "standardLoopCharacteristics")
                or child_local.endswith("EventDefinition")
                or child_local == "eventDefinitionRef"
            ):
                self.skip(child, child_local, f"on {local} '{node_id}'", child.get("id") or node_id)
        return kept_here

    def _merge_ours(
        self,
        config: dict[str, Any],
        kind: str,
        ours: dict[str, Any],
        extras: dict[str, Any],
        multi: dict[str, Any] | None,
    ) -> None:
        """Our extension's config over what the standard and vendor settings said, with the
        multi-instance loop the element has (none without its loop element)."""
        if self.ours:  # what export wrote back in the vendor's form may be stale on a canvas
            for written in WRITTEN_BACK:
                config.pop(written, None)
        if multi is not None and isinstance(ours.get("multiInstance"), dict):
            multi = {**ours["multiInstance"], **multi}
        config.update(ours)
        if multi is not None:
            config["multiInstance"] = multi
        elif (
            kind in MULTI_INSTANCE_KINDS
            and extras.get("kind", kind) in MULTI_INSTANCE_KINDS
            and isinstance(config.get("multiInstance"), dict)
        ):
            # Without the loop element (another tool took the marker off) it runs once.
            del config["multiInstance"]

    def _correlation(
        self, node: dict[str, Any], element: etree._Element, top_level: bool, warn: events.Warn
    ) -> None:
        """The correlation key of a node that waits for a message: the file's, else the business
        key in a file of a tool that correlates on it; a warning when it has none."""
        config = node["config"]
        waits = config.get("event") == "message" or node["kind"] in ("messageCatch", "receiveTask")
        waits = waits and node["kind"] != "endEvent"
        key = self.correlation.get(events.message_ref(element))
        by_hand = node["kind"] == "startEvent" and top_level  # a message start correlates nothing
        if waits and key and not by_hand and "correlationKey" not in config:
            config["correlationKey"] = key.text
            if not key.ok:
                warn("import.expression_untranslated", f"Correlation key '{key.text}' kept")
        keyless = waits and not by_hand and "correlationKey" not in config
        if keyless and config.get("message") and self.by_business_key and not self.ours:
            config["correlationKey"] = events.BUSINESS_KEY
            warn(
                "import.correlation_business_key",
                "Correlates on the instance's business key, the way to address one instance "
                "(Camunda 7's correlateMessage(name, businessKey)); change the key if your "
                "code correlated on variables",
            )
        if waits and "correlationKey" not in config and node["kind"] != "startEvent":
            warn("import.correlation_key", "Message catch has no correlation key")

    def _flows(self, containers: list[etree._Element], nodes: dict[str, Any]) -> dict[str, Any]:
        flows: dict[str, Any] = {}
        defaults = {
            (self._ref(e.get("id")), local_ref(e.get("default")))
            for container in containers
            for e in container
        }
        elements = [e for c in containers for e in c.findall(q(BPMN, "sequenceFlow"))]
        for element in elements:
            source = self._ref(element.get("sourceRef"))
            target = self._ref(element.get("targetRef"))
            flow_id = element.get("id") or self.fresh(f"Flow_{source}_{target}")
            if not is_valid_id(flow_id) or flow_id in flows or flow_id in nodes:
                flow_id = self.fresh("Flow")
            if source not in nodes or target not in nodes:
                missing = source if source not in nodes else target
                detail = f"connects '{missing}', which is not imported"
                self.skip(element, "sequenceFlow", detail, element.get("id") or flow_id)
                continue
            flow: dict[str, Any] = {
                "source": source,
                "target": target,
                "title": element.get("name", ""),
                "condition": self._condition(element, flow_id),
                "default": (source, element.get("id")) in defaults,
                "waypoints": [],
                "_di": element.get("id"),
            }
            flow.update(self.blob(element, "flow"))
            flow.pop("kept", None)
            if foreign := kept.foreign_extensions(element):
                flow["kept"] = foreign
            flows[flow_id] = flow
        return flows

    def _reorder(self, process: etree._Element, doc: dict[str, Any]) -> None:
        """Put nodes and flows back in our document order (`flowdesk:order`, written when a
        sub-process's nodes were not listed together), then whatever else the file holds."""
        order = self.blob(process, "order")
        for name in ("nodes", "flows"):
            wanted = order.get(name)
            if not isinstance(wanted, list):
                continue
            items = doc[name]
            first = {key: items[key] for key in wanted if isinstance(key, str) and key in items}
            doc[name] = {**first, **{k: v for k, v in items.items() if k not in first}}

    def _ref(self, value: str | None) -> str:
        ref = local_ref(value)
        return self.renamed.get(ref, ref)

    def _condition(self, element: etree._Element, flow_id: str) -> str | None:
        expression = element.find(q(BPMN, "conditionExpression"))
        if expression is None:
            return None
        text = "".join(expression.itertext())
        language = expression.get("language")
        if language == FLOWDESK_LANGUAGE:
            return text
        if not text.strip():
            return None
        result = conditions.translate(text.strip(), language)
        if not result.ok:
            self.warn(
                "import.condition_untranslated",
                flow_id,
                f"Condition '{text.strip()}' ({result.dialect}) kept as written; rewrite it",
            )
        return result.text

    def _positions(self, doc: dict[str, Any], origin: dict[str, str]) -> None:
        shapes, edges = _diagram(self.root)
        missing = []
        for node_id, node in doc["nodes"].items():
            source_id = origin[node_id]
            if source_id not in shapes:
                missing.append(node_id)
            elif shapes[source_id] is not None and "position" not in node:
                node["position"] = shapes[source_id]
        for flow in doc["flows"].values():
            points = edges.get(flow.pop("_di") or "")
            if points and not flow["waypoints"]:
                flow["waypoints"] = points
        if missing and len(missing) == len(doc["nodes"]):
            doc.update(layout.auto_layout(doc))
            self.warn("import.auto_layout", None, "The file has no diagram; laid out automatically")
        elif missing:
            layout.place_missing(doc, missing)
            for node_id in missing:
                self.warn("import.missing_shape", node_id, "No diagram shape; placed below")


ConfigReader = Callable[["_Reader", etree._Element, events.Warn, dict[str, Any]], dict[str, Any]]


def _no_config(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    return {}


def _element_only(read: Callable[[etree._Element, events.Warn], dict[str, Any]]) -> ConfigReader:
    """A config reader that needs only the element (most kinds' settings live on it alone)."""

    def reader(
        _reader: _Reader, element: etree._Element, warn: events.Warn, _config: dict[str, Any]
    ) -> dict[str, Any]:
        return read(element, warn)

    return reader


def _message_end(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    """An end event calls a tool only when it sends a message."""
    return service_task_config(element, warn) if config.get("event") == "message" else {}


def _start_event(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    return start_event_config(element, warn)


def _scope(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    """A sub-process drawn on a plane of its own, or marked not expanded, is collapsed."""
    ref = element.get("id", "")
    collapsed = ref in reader.planes or reader.expanded.get(ref) == "false"
    return {"collapsed": True} if collapsed else {}


def _call_activity(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    return structure.call_activity_config(element, warn)


def _complex_gateway(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    """The activation condition, translated from another engine's language when it can be."""
    condition = element.find(q(BPMN, "activationCondition"))
    text = "".join(condition.itertext()) if condition is not None else ""
    if condition is None or not text.strip():
        return {}
    if condition.get("language") == FLOWDESK_LANGUAGE:
        return {"activation": text}
    result = conditions.translate(text.strip(), condition.get("language"))
    if not result.ok:
        warn(
            "import.condition_untranslated",
            f"Activation condition '{text.strip()}' ({result.dialect}) kept as written; rewrite it",
        )
    return {"activation": result.text}


def _adhoc(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    """Ordering, cancelling what remains, the completion condition and Camunda 8's activities
    to activate (`zeebe:adHoc activeElementsCollection`)."""
    found: dict[str, Any] = dict(_scope(reader, element, warn, config))
    if element.get("ordering") == "Sequential":
        found["ordering"] = "sequential"
    if element.get("cancelRemainingInstances") == "false":
        found["cancelRemaining"] = False
    condition = element.find(q(BPMN, "completionCondition"))
    text = "".join(condition.itertext()).strip() if condition is not None else ""
    if condition is not None and text:
        if condition.get("language") == FLOWDESK_LANGUAGE:
            found["completion"] = "".join(condition.itertext())
        else:
            found["completion"] = _translated(text, condition.get("language"), "Completion", warn)
    for settings in element.findall(f"{q(BPMN, 'extensionElements')}/{q(ZEEBE, 'adHoc')}"):
        collection = (settings.get("activeElementsCollection") or "").strip()
        if collection:
            found["activate"] = _translated(collection, None, "Activities to activate", warn)
    for worker in element.findall(f"{q(BPMN, 'extensionElements')}/{q(ZEEBE, 'taskDefinition')}"):
        if (worker.get("type") or "").strip():
            found["worker"] = (worker.get("type") or "").strip()
    return found


def _translated(text: str, language: str | None, what: str, warn: events.Warn) -> str:
    result = conditions.translate(text, language)
    if not result.ok:
        warn(
            "import.condition_untranslated",
            f"{what} '{text}' ({result.dialect}) kept as written; rewrite it",
        )
    return result.text


def _instantiating(
    reader: _Reader, element: etree._Element, warn: events.Warn, config: dict[str, Any]
) -> dict[str, Any]:
    """A receive task or event-based gateway that starts the process (`instantiate`), and a
    gateway's type (its targets' events all run: Parallel)."""
    found: dict[str, Any] = {}
    if element.get("instantiate") == "true":
        found["instantiate"] = True
    if element.get("eventGatewayType") == "Parallel":
        found["gatewayType"] = "parallel"
    return found


#: What each kind reads from its element's attributes and vendor settings (besides the event
#: definitions and multi-instance loop every kind that has them reads); none for the others.
_CONFIG_READERS: dict[str, ConfigReader] = {
    "userTask": _element_only(user_task_config),
    "scriptTask": _element_only(script_task_config),
    "serviceTask": _element_only(service_task_config),
    "sendTask": _element_only(service_task_config),
    "messageThrow": _element_only(service_task_config),
    "endEvent": _message_end,
    "startEvent": _start_event,
    "subProcess": _scope,
    "eventSubProcess": _scope,
    "transaction": _scope,
    "callActivity": _call_activity,
    "businessRuleTask": _element_only(business_rule_task_config),
    "complexGateway": _complex_gateway,
    "adHocSubProcess": _adhoc,
    "receiveTask": _instantiating,
    "eventBasedGateway": _instantiating,
}


def _foreign_settings(root: etree._Element, ext: dict[str, Any]) -> dict[str, Any]:
    """Document settings for a file another tool wrote: its engine reads one pool of process
    variables (start data, form results, payloads and tool results alike)."""
    if ext or root.get("exporter") == EXPORTER:
        return {}
    return {"variables": VARIABLES_POOL}


def _refusal(element: etree._Element, local: str) -> tuple[str, str] | None:
    """(type, detail) of a flow node imported nowhere because Flowdesk cannot run it as written."""
    gateway_type = element.get("eventGatewayType", "Exclusive")
    starts = element.get("instantiate") == "true"
    if local == "eventBasedGateway" and gateway_type not in ("Exclusive", "Parallel"):
        return f"{local}[{gateway_type}]", "an event-based gateway is Exclusive or Parallel"
    if local == "eventBasedGateway" and gateway_type == "Parallel" and not starts:
        detail = 'a parallel event-based gateway must start the process (instantiate="true")'
        return f"{local}[Parallel]", detail
    return None


def _diagram(root: etree._Element) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """Bounds by element id (None for shapes we generated) and edge waypoints by flow id."""
    shapes: dict[str, Any] = {}
    edges: dict[str, list[dict[str, Any]]] = {}
    generated = q(FLOWDESK, "generated")
    for shape in root.iter(q(BPMNDI, "BPMNShape")):
        ref = local_ref(shape.get("bpmnElement"))
        bounds = next((c for c in shape if split(c.tag)[1] == "Bounds"), None)
        if ref in shapes or (bounds is None and shape.get(generated) != "true"):
            continue
        if shape.get(generated) == "true":
            shapes[ref] = None
            continue
        box = _numbers(bounds, "x", "y", "width", "height")
        if box is not None and box["width"] > 0 and box["height"] > 0:
            shapes[ref] = box
    for edge in root.iter(q(BPMNDI, "BPMNEdge")):
        ref = local_ref(edge.get("bpmnElement"))
        if ref in edges or edge.get(generated) == "true":
            continue
        points = [_numbers(p, "x", "y") for p in edge if split(p.tag)[1] == "waypoint"]
        if len(points) >= 2 and all(points):
            edges[ref] = [point for point in points if point]
    return shapes, edges


def _numbers(element: etree._Element | None, *names: str) -> dict[str, Any] | None:
    if element is None:
        return None
    result: dict[str, Any] = {}
    for name in names:
        try:
            value = float(element.get(name, ""))
        except ValueError:
            return None
        if value != value or value in (float("inf"), float("-inf")):
            return None
        result[name] = int(value) if value.is_integer() else value
    return result


def named(document: dict[str, Any], warnings: list[Problem]) -> list[Problem]:
    """The warnings, each beginning with the element it is about as people see it ("The timer
    boundary event on 'Review': Timer has no duration or date")."""
    namer = Namer(document["nodes"], document["flows"])
    elements = document["nodes"].keys() | document["flows"].keys()
    return [
        replace(w, message=f"{capitalized(namer.element(w.element_id))}: {w.message}")
        if w.element_id is not None and w.element_id in elements
        else w
        for w in warnings
    ]
