"""Modelling-only BPMN elements, kept in the document as plain data and written back unchanged.

Data objects and stores, data associations, `ioSpecification`, `property`, lanes, text
annotations, associations, groups, categories and other vendors' extension elements carry no
behaviour in Flowdesk: the engine never sees them. Each is stored as a JSON tree (`tag`, `attrs`,
`text`, `children`; BPMN names bare, other namespaces in `{uri}name` form) so that import, export
and import again give the same document whatever prefixes the source file used.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from lxml import etree

from webapp.process.kinds import SCOPE_KINDS

from .namespaces import (
    BPMN,
    BPMNDI,
    DC,
    DI,
    EXPORT_NSMAP,
    FLOWDESK,
    JUEL_VENDORS,
    SPIFF,
    XSI,
    ZEEBE,
    q,
    split,
)

#: Children of a process or sub-process kept as they are; the first group precedes flow elements.
SCOPE_HEAD = ("ioSpecification", "ioBinding", "property", "laneSet")
SCOPE_TAIL = (
    "dataObject",
    "dataObjectReference",
    "dataStoreReference",
    "textAnnotation",
    "association",
    "group",
)
#: Children of an activity or event kept as they are (after incoming/outgoing, in schema order).
NODE_FIELDS = (
    "ioSpecification",
    "property",
    "dataInput",
    "dataInputAssociation",
    "dataOutput",
    "dataOutputAssociation",
    "inputSet",
    "outputSet",
    "resourceRole",
    "performer",
    "humanPerformer",
    "potentialOwner",
    "rendering",  # a user task's rendering hints for a modeller's tool; nothing runs them
)
#: Root elements of `definitions` that only modelling-only elements refer to.
DEFINITIONS = (
    "dataStore",
    "category",
    "itemDefinition",
    "resource",
    "collaboration",  # pools (participants) and message flows: the diagram's frame
    "process",  # the other pools' processes, which Flowdesk does not run
    "correlationProperty",
    "globalTask",
    "globalUserTask",
    "globalManualTask",
    "globalScriptTask",
    "globalBusinessRuleTask",
    "interface",
    "partnerEntity",
    "partnerRole",
    "endPoint",
    "import",  # written first, as the schema orders them
    "relationship",  # written last, after the diagrams
)
#: Root elements the writer makes from the nodes' names and codes; kept as well (with their ids)
#: when something besides the process refers to them or they carry more than a name and a code.
SHARED_DEFINITIONS = ("message", "signal", "error", "escalation")
#: Marks a kept diagram's plane that draws the imported process (written with its id).
OURS = "@ours"
#: Attributes whose value names another element (a QName: the prefix is dropped on import).
_REFERENCES = {
    "sourceRef",
    "targetRef",
    "dataObjectRef",
    "dataStoreRef",
    "itemSubjectRef",
    "categoryValueRef",
    "bpmnElement",
    "structureRef",
    "processRef",
    "attachedToRef",
    "messageRef",
    "signalRef",
    "errorRef",
    "escalationRef",
    "itemRef",
}
#: Child elements whose text names another element.
_REFERENCE_TEXT = {
    "flowNodeRef",
    "sourceRef",
    "targetRef",
    "dataInputRefs",
    "dataOutputRefs",
    "optionalInputRefs",
    "optionalOutputRefs",
    "whileExecutingInputRefs",
    "whileExecutingOutputRefs",
    "inputSetRefs",
    "outputSetRefs",
    "correlationPropertyRef",
}
#: Namespaces whose prefixes are written at the root on export (bpmn.io conventions).
VENDOR_PREFIXES = {
    "http://camunda.org/schema/1.0/bpmn": "camunda",
    "http://camunda.org/schema/zeebe/1.0": "zeebe",
    "http://camunda.org/schema/modeler/1.0": "modeler",
    "http://flowable.org/bpmn": "flowable",
    "http://activiti.org/bpmn": "activiti",
    "http://spiffworkflow.org/bpmn/schema/1.0/core": "spiffworkflow",
    "http://bpmn.io/schema/bpmn/biocolor/1.0": "bioc",
    "http://www.omg.org/spec/BPMN/non-normative/color/1.0": "color",
}


_TYPE_PREFIXES = {BPMN: "bpmn", BPMNDI: "bpmndi", DC: "dc", DI: "di"}


def _name(tag: str) -> str:
    namespace, local = split(tag)
    return local if namespace in (BPMN, "") else tag


def _tag(name: str) -> str:
    return name if name.startswith("{") else q(BPMN, name)


def _local(value: str) -> str:
    return value.strip().rpartition(":")[2]


def to_data(element: etree._Element) -> dict[str, Any]:
    """The JSON tree of `element` (comments and whitespace-only text dropped)."""
    namespace, local = split(element.tag)
    attrs: dict[str, str] = {}
    for key, value in element.attrib.items():
        name = _name(str(key))
        value = str(value)
        if name in _REFERENCES:
            value = " ".join(_local(part) for part in value.split())
        elif key == q(XSI, "type"):  # a QName: written with the prefix the export declares
            prefix, _, rest = value.rpartition(":")
            ours = _TYPE_PREFIXES.get(element.nsmap.get(prefix or None) or "")
            if ours is None:
                continue
            value = f"{ours}:{rest}"
        attrs[name] = value
    data: dict[str, Any] = {"tag": _name(str(element.tag))}
    if attrs:
        data["attrs"] = attrs
    text = element.text or ""
    if text.strip():
        reference = local in _REFERENCE_TEXT or local.endswith("Ref")
        data["text"] = _local(text) if namespace == BPMN and reference else text
    children = [to_data(child) for child in element if isinstance(child.tag, str)]
    if children:
        data["children"] = children
    return data


def to_xml(data: Any) -> etree._Element | None:
    """The element of a JSON tree written by `to_data`; None when `data` is not one. Every
    namespace of the tree is declared on its top element, with one prefix each."""
    if not isinstance(data, dict) or not isinstance(data.get("tag"), str):
        return None
    nsmap: dict[str | None, str] = {}
    for namespace in sorted(_namespaces(data)):
        prefix = VENDOR_PREFIXES.get(namespace) or f"ns{len(nsmap) + 1}"
        nsmap[prefix] = namespace
    try:
        element = etree.Element(_tag(data["tag"]), nsmap=nsmap)
        _fill(element, data)
    except ValueError:  # a name or text XML cannot hold: not something we wrote
        return None
    return element


def _fill(element: etree._Element, data: dict[str, Any]) -> None:
    attrs = data.get("attrs") or {}
    for key, value in attrs.items() if isinstance(attrs, dict) else []:
        if isinstance(key, str) and isinstance(value, str):
            element.set(key, value)
    if isinstance(data.get("text"), str):
        element.text = data["text"]
    children = data.get("children")
    for child in children if isinstance(children, list) else []:
        if isinstance(child, dict) and isinstance(child.get("tag"), str):
            _fill(etree.SubElement(element, _tag(child["tag"])), child)


def _namespaces(data: dict[str, Any]) -> set[str]:
    """The namespaces of a JSON tree's names other than BPMN's (declared on the root)."""
    found: set[str] = set()
    stack = [data]
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        names = [item.get("tag")]
        if isinstance(item.get("attrs"), dict):
            names += list(item["attrs"])
        for name in names:
            if isinstance(name, str) and name.startswith("{"):
                namespace = split(name)[0]
                if namespace not in (BPMN, *EXPORT_NSMAP.values()):
                    found.add(namespace)
        if isinstance(item.get("children"), list):
            stack.extend(item["children"])
    return found


def ids_in(items: Iterable[Any]) -> set[str]:
    """Every `id` in a list of JSON trees."""
    found: set[str] = set()
    stack = list(items)
    while stack:
        data = stack.pop()
        if not isinstance(data, dict):
            continue
        attrs = data.get("attrs")
        if isinstance(attrs, dict) and isinstance(attrs.get("id"), str):
            found.add(attrs["id"])
        children = data.get("children")
        if isinstance(children, list):
            stack.extend(children)
    return found


#: Vendor settings import maps to Flowdesk's own (`vendor`, `structure`): not kept, since they
#: come back from the node's config; keeping them would bring back a value deleted in Flowdesk.
MAPPED_ATTRIBUTES = {
    "assignee",
    "candidateUsers",
    "candidateGroups",
    "dueDate",
    "type",
    "topic",
    "resultVariable",
    "resultVariableName",
    "collection",
    "elementVariable",
    "calledElementBinding",
    "calledElementVersion",
}
MAPPED_ELEMENTS = {
    "assignmentDefinition",
    "taskDefinition",
    "script",
    "loopCharacteristics",
    "calledElement",
    "ioMapping",
    "formData",
    "formProperty",
    "inputOutput",
    "in",
    "serviceTaskOperator",
    "formDefinition",
    "taskSchedule",
}
#: Elements none of whose vendor settings import maps: all are kept (an ad-hoc sub-process's
#: job worker, its input and output mappings).
UNMAPPED_ELEMENTS = ("adHocSubProcess",)
#: Settings mapped only where import reads them: the form reference on starts and user tasks,
#: the Java implementation and retry cycle on the elements that call a tool.
_TOOL_ELEMENTS = ("serviceTask", "sendTask", "intermediateThrowEvent", "endEvent")
MAPPED_ON: dict[str, tuple[set[str], set[str]]] = {
    "startEvent": ({"formKey", "formRef", "formRefBinding", "formRefVersion"}, set()),
    "userTask": ({"formKey", "formRef", "formRefBinding", "formRefVersion", "followUpDate"}, set()),
    **{
        local: ({"class", "delegateExpression", "expression"}, {"failedJobRetryTimeCycle"})
        for local in _TOOL_ELEMENTS
    },
    "businessRuleTask": (
        {"class", "delegateExpression", "expression", "decisionRef", "decisionRefBinding"}
        | {"decisionRefVersion"},
        {"calledDecision", "calledDecisionId"},
    ),
}
_MAPPING_VENDORS = (*JUEL_VENDORS, ZEEBE, SPIFF)


def _mapped(name: str, mapped: set[str]) -> bool:
    namespace, local = split(name)
    return namespace in _MAPPING_VENDORS and local in mapped


def foreign_extensions(element: etree._Element) -> list[dict[str, Any]]:
    """Other vendors' attributes of `element` (one `@attributes` item) and the children of its
    extensionElements that Flowdesk does not map (ours are read elsewhere)."""
    local = split(element.tag)[1]
    calls_tool = local not in ("endEvent", "intermediateThrowEvent") or any(
        child.tag == q(BPMN, "messageEventDefinition") for child in element
    )
    here = MAPPED_ON.get(local, (set(), set())) if calls_tool else (set(), set())
    attributes, elements = MAPPED_ATTRIBUTES | here[0], MAPPED_ELEMENTS | here[1]
    if local in UNMAPPED_ELEMENTS:
        attributes, elements = set(), set()
    attrs = {
        str(key): str(value)
        for key, value in element.attrib.items()
        if str(key).startswith("{") and is_foreign(str(key)) and not _mapped(str(key), attributes)
    }
    found = [{"tag": ATTRIBUTES, "attrs": attrs}] if attrs else []
    return found + [
        to_data(child)
        for container in element.findall(q(BPMN, "extensionElements"))
        for child in container
        if isinstance(child.tag, str)
        and is_foreign(str(child.tag))
        and not _mapped(str(child.tag), elements)
    ]


def set_attributes(element: etree._Element, items: list[Any]) -> None:
    """Put back the other vendors' attributes kept by `foreign_extensions`."""
    for data in items:
        if isinstance(data, dict) and data.get("tag") == ATTRIBUTES:
            for key, value in data["attrs"].items():
                try:
                    element.set(key, value)
                except ValueError:
                    continue


def diagram_elements(
    root: etree._Element, wanted: set[str], planes: list[etree._Element] | None = None
) -> list[dict[str, Any]]:
    """Shapes and edges of kept elements, each with the plane (`null`: the main one) it is on;
    only those on `planes` when given. An edge's optional shape ends are left out: the shapes
    of the nodes are written anew, under other ids."""
    result: list[dict[str, Any]] = []
    for plane in root.iter(q(BPMNDI, "BPMNPlane")) if planes is None else planes:
        owner = _local(plane.get("bpmnElement", ""))
        for child in plane:
            if split(child.tag) not in ((BPMNDI, "BPMNShape"), (BPMNDI, "BPMNEdge")):
                continue
            if _local(child.get("bpmnElement", "")) in wanted:
                data = to_data(child)
                attrs = data.get("attrs") or {}
                for end in ("sourceElement", "targetElement"):  # shapes the export writes anew
                    attrs.pop(end, None)
                result.append({"plane": owner, "element": data})
    return result


_ASSOCIATIONS = {"association", "dataInputAssociation", "dataOutputAssociation", "messageFlow"}


def _refs(data: dict[str, Any]) -> list[str]:
    attrs: dict[str, Any] = data["attrs"] if isinstance(data.get("attrs"), dict) else {}
    found = [attrs[name] for name in ("sourceRef", "targetRef") if isinstance(attrs.get(name), str)]
    for child in data.get("children") or []:
        if isinstance(child, dict) and child.get("tag") in ("sourceRef", "targetRef"):
            found.append(str(child.get("text", "")))
    return found


def _pruned(items: list[Any], ids: set[str]) -> list[Any]:
    """`items` without associations whose ends are gone and lane references to missing nodes."""
    result: list[Any] = []
    for data in items:
        if not isinstance(data, dict):
            continue
        if data.get("tag") in _ASSOCIATIONS and any(ref not in ids for ref in _refs(data)):
            continue
        if data.get("tag") == "flowNodeRef" and data.get("text") not in ids:
            continue
        children = data.get("children")
        if isinstance(children, list):
            data = {**data, "children": _pruned(children, ids)}
            if not data["children"]:
                del data["children"]
        result.append(data)
    return result


#: The item holding an element's attributes in other vendors' namespaces.
ATTRIBUTES = "@attributes"
#: The parts of the document's `kept` section (`pool`: the participant that holds the process;
#: `diagrams`: the file's other diagrams, kept whole; `styles`: the label styles of the diagrams
#: the export writes anew, which kept shapes' labels refer to).
PARTS = ("definitions", "process", "diagram", "pool", "diagrams", "styles")
#: The BPMN elements each place may hold (another vendor's elements go in extensionElements).
ALLOWED = {
    "definitions": {*DEFINITIONS, *SHARED_DEFINITIONS},
    "process": {*SCOPE_HEAD, *SCOPE_TAIL, ATTRIBUTES},
    "node": {*NODE_FIELDS, *SCOPE_HEAD, *SCOPE_TAIL, ATTRIBUTES},
}
_STANDARD = (BPMN, BPMNDI, DC, DI)


def is_foreign(tag: object) -> bool:
    """Tell whether `tag` names another vendor's element (not BPMN's, not ours, not the DI's)."""
    return isinstance(tag, str) and split(_tag(tag))[0] not in (*_STANDARD, FLOWDESK, XSI)


def _unique(
    items: Any, seen: set[str], allowed: set[str], diagram: bool = False, mapped: bool = True
) -> list[Any]:
    """The JSON trees of `items` that may stand here and reuse no id seen before (`mapped`:
    without the vendor settings import maps)."""
    result = []
    attributes, elements = (MAPPED_ATTRIBUTES, MAPPED_ELEMENTS) if mapped else (set(), set())
    for data in items if isinstance(items, list) else []:
        tag = data.get("tag") if isinstance(data, dict) else None
        if not isinstance(tag, str):
            continue
        if tag == ATTRIBUTES:
            attrs = data.get("attrs")
            if ATTRIBUTES in allowed and isinstance(attrs, dict):
                attrs = {
                    k: v
                    for k, v in attrs.items()
                    if isinstance(v, str)
                    and k.startswith("{")
                    and is_foreign(k)
                    and not _mapped(k, attributes)
                }
                if attrs:
                    result.append({"tag": ATTRIBUTES, "attrs": attrs})
            continue
        namespace, local = split(_tag(tag))
        if diagram:
            fits = namespace == BPMNDI and local in ("BPMNShape", "BPMNEdge")
        else:
            fits = (namespace == BPMN and local in allowed) or (
                is_foreign(tag) and not _mapped(_tag(tag), elements)
            )
        ids = _standard_ids(data)
        if not fits or len(ids) != len(set(ids)) or seen & set(ids) or _too_deep(data):
            continue
        seen.update(ids)
        result.append(data)
    return result


#: Deepest kept tree (the XML parser refuses deeper files; writing one back recurses).
MAX_DEPTH = 256


def _too_deep(data: Any) -> bool:
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(item, dict) and isinstance(item.get("children"), list):
            stack.extend((child, depth + 1) for child in item["children"])
    return False


def _standard_ids(data: Any) -> list[str]:
    """Ids of the BPMN and DI elements in a JSON tree (the schema wants them unique)."""
    found: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if not isinstance(item, dict) or not isinstance(item.get("tag"), str):
            continue
        attrs = item.get("attrs")
        standard = split(_tag(item["tag"]))[0] in _STANDARD
        if standard and isinstance(attrs, dict) and isinstance(attrs.get("id"), str):
            found.append(attrs["id"])
        if isinstance(item.get("children"), list):
            stack.extend(item["children"])
    return found


def prune(doc: dict[str, Any]) -> None:
    """Drop kept parts that point at elements no longer in `doc` (a deleted task, a renamed id),
    so the export stays valid; import applies the same rule, keeping the round trip identical."""
    nodes = doc.get("nodes", {})
    given = doc["kept"] if isinstance(doc.get("kept"), dict) else {}
    kept: dict[str, Any] = {name: given[name] for name in PARTS if name in given}
    for node in [*nodes.values(), *doc.get("flows", {}).values()]:
        if "kept" in node and not isinstance(node["kept"], list):
            del node["kept"]
    owners = [node for node in nodes.values() if "kept" in node]
    flows = [flow for flow in doc.get("flows", {}).values() if "kept" in flow]
    base = set(nodes) | set(doc.get("flows", {}))
    seen = set(base)  # an id used twice (by a node, or by two kept elements) keeps its first use
    if isinstance(kept.get("definitions"), list):  # other pools never carry our markers
        kept["definitions"] = [without_ours(data) for data in kept["definitions"]]
    for name in ("definitions", "process"):
        kept[name] = _unique(kept.get(name), seen, ALLOWED[name])
    for node in owners:
        mapped = node.get("kind") not in UNMAPPED_ELEMENTS
        node["kept"] = _unique(node["kept"], seen, ALLOWED["node"], mapped=mapped)
    for flow in flows:
        flow["kept"] = _unique(flow["kept"], seen, {ATTRIBUTES})
        if not flow["kept"]:
            del flow["kept"]
    entries: list[Any] = kept["diagram"] if isinstance(kept.get("diagram"), list) else []
    collapsed = {
        node_id
        for node_id, node in nodes.items()
        if node.get("kind") in SCOPE_KINDS
        and isinstance(node.get("config"), dict)
        and node["config"].get("collapsed") is True
    }
    kept["diagram"] = [
        {
            "plane": entry.get("plane") if entry.get("plane") in collapsed else None,
            "element": without_ours(entry["element"]),
        }
        for entry in entries
        if isinstance(entry, dict) and _unique([entry.get("element")], seen, set(), diagram=True)
    ]
    styles = []
    for data in kept["styles"] if isinstance(kept.get("styles"), list) else []:
        di_ids = _standard_ids(data)
        style = isinstance(data, dict) and data.get("tag") == LABEL_STYLE
        if style and len(di_ids) == 1 and not seen & set(di_ids) and not _too_deep(data):
            seen.update(di_ids)
            styles.append(without_ours(data))
    kept["styles"] = styles
    diagrams = []
    for data in kept["diagrams"] if isinstance(kept.get("diagrams"), list) else []:
        di_ids = _standard_ids(data)
        whole = isinstance(data, dict) and data.get("tag") == DIAGRAM
        fresh = len(di_ids) == len(set(di_ids)) and not seen & set(di_ids)
        if whole and fresh and not _too_deep(data):
            seen.update(di_ids)
            diagrams.append(without_ours(data))

    def semantic_ids() -> set[str]:
        lists = [kept.get("definitions"), kept.get("process"), *(n["kept"] for n in owners)]
        return base | ids_in(item for items in lists if isinstance(items, list) for item in items)

    while True:
        ids = semantic_ids()
        before = json.dumps([kept, [n["kept"] for n in owners]], sort_keys=True)
        for name in ("definitions", "process"):
            if isinstance(kept.get(name), list):
                kept[name] = _pruned(kept[name], ids)
        for node in owners:
            node["kept"] = _pruned(node["kept"], ids)
        if json.dumps([kept, [n["kept"] for n in owners]], sort_keys=True) == before:
            break
    if isinstance(kept.get("diagram"), list):
        kept["diagram"] = [
            entry
            for entry in kept["diagram"]
            if isinstance(entry, dict)
            and isinstance(entry.get("element"), dict)
            and isinstance(entry["element"].get("attrs"), dict)
            and entry["element"]["attrs"].get("bpmnElement") in ids
        ]
    kept["diagrams"] = [drawn for data in diagrams if (drawn := _drawn(data, ids)) is not None]
    for node in owners:
        if not node["kept"]:
            del node["kept"]
    for name in [key for key, value in kept.items() if not value]:
        del kept[name]
    pool = kept.get("pool")
    if not isinstance(pool, str) or pool not in ids_in(kept.get("definitions") or []):
        kept.pop("pool", None)
    if kept:
        doc["kept"] = kept
    else:
        doc.pop("kept", None)


def without_ours(data: Any) -> Any:
    """A kept tree without Flowdesk's markers (our elements and attributes): only the imported
    process carries them, so the process a later import takes is the one we wrote."""
    if not isinstance(data, dict):
        return data
    result = dict(data)
    if isinstance(data.get("attrs"), dict):
        attrs = {k: v for k, v in data["attrs"].items() if not _is_flowdesk(k)}
        result["attrs"] = attrs
        if not attrs:
            del result["attrs"]
    if isinstance(data.get("children"), list):
        children = []
        for child in data["children"]:
            if isinstance(child, dict) and _is_flowdesk(child.get("tag")):
                continue
            child = without_ours(child)
            empty = isinstance(child, dict) and not child.get("children") and not child.get("attrs")
            if empty and child.get("tag") == "extensionElements":
                continue
            children.append(child)
        result["children"] = children
        if not children:
            del result["children"]
    return result


def _is_flowdesk(name: object) -> bool:
    return isinstance(name, str) and name.startswith("{") and split(name)[0] == FLOWDESK


#: The tags of a whole kept diagram (another pool's, a second view of the process...) and of
#: its plane.
DIAGRAM = f"{{{BPMNDI}}}BPMNDiagram"
PLANE = f"{{{BPMNDI}}}BPMNPlane"
LABEL_STYLE = f"{{{BPMNDI}}}BPMNLabelStyle"


def _drawn(diagram: Any, ids: set[str]) -> dict[str, Any] | None:
    """A kept diagram without shapes and edges of elements not in `ids`; None when it is not a
    diagram with one plane, or its plane draws an element that is gone."""
    if not isinstance(diagram, dict) or diagram.get("tag") != DIAGRAM:
        return None
    children = [c for c in diagram.get("children") or [] if isinstance(c, dict)]
    planes = [c for c in children if c.get("tag") == PLANE]
    if len(planes) != 1 or not isinstance(planes[0].get("attrs"), dict):
        return None
    plane = planes[0]
    attrs = plane["attrs"]
    if attrs.get(OURS) != "true" and attrs.get("bpmnElement") not in ids:
        return None
    drawn = [
        child
        for child in plane.get("children") or []
        if isinstance(child, dict)
        and (
            not isinstance(child.get("attrs"), dict)
            or "bpmnElement" not in child["attrs"]
            or child["attrs"]["bpmnElement"] in ids
        )
    ]
    plane = {**plane, "children": drawn}
    if not drawn:
        del plane["children"]
    return {**diagram, "children": [plane if c is planes[0] else c for c in children]}
