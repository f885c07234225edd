"""Writing the vendor settings back on export, each family in the dialect its node came with,
and making the vendor's copy on a canvas current after panel edits."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lxml import etree

from .. import kept, safe_xml
from ..namespaces import BPMN, CAMUNDA, JUEL_VENDORS, ZEEBE, q, split
from .assignment import ASSIGNMENT_ATTRIBUTES, PERFORMER_TAGS, write_assignment
from .common import NAMESPACES, ORIGIN, VENDOR_NAMES, as_mapping, extensions
from .dates import due_date_settings
from .decisions import decision_settings
from .form_links import form_link_settings
from .forms import FORM_ELEMENTS, write_form
from .mappings import IO_ELEMENTS, write_inputs
from .tools import implementation_settings

#: Config keys export writes back in the vendor's form: in a file Flowdesk wrote they are read
#: from `<flowdesk:config>` only (the vendor's copy on a canvas is stale after a panel edit).
WRITTEN_BACK = ("assignee", "candidates", "form", "inputs", ORIGIN)
#: Node kinds whose element may hold a vendor form or a tool's input mapping.
_FORM_KINDS = ("userTask", "startEvent")
_TOOL_KINDS = ("serviceTask", "sendTask", "messageThrow", "endEvent")
#: Config values whose `vendor` says a node's dialect when it kept no `origin`.
_VENDOR_KEYS = ("formRef", "implementation", "dueDate", "followUpDate")


def export_settings(element: etree._Element, config: dict[str, Any]) -> list[etree._Element]:
    """Write the vendor settings import mapped back in their vendor's own form (attributes set
    on `element`; the extension elements are returned), so the source modeler finds them. The
    config keeps them too: `<flowdesk:config>` stays what a re-import reads."""
    return [
        *form_link_settings(element, config),
        *due_date_settings(element, config),
        *implementation_settings(element, config),
        *decision_settings(element, config),
    ]


def export_namespaces(nodes: Any) -> set[str]:
    """The vendor namespaces `export_settings` writes for `nodes` (declared on the root)."""
    found: set[str] = set()
    for node in nodes:
        config = node.get("config") if isinstance(node, dict) else None
        for key in ("formRef", "dueDate", "followUpDate", "implementation", ORIGIN):
            value = config.get(key) if isinstance(config, dict) else None
            if isinstance(value, dict) and value.get("vendor") in NAMESPACES:
                found.add(NAMESPACES[value["vendor"]])
    return found


def write_back(root: etree._Element, doc: Mapping[str, Any]) -> None:
    """Write each node's current assignment, form fields and tool inputs in the dialect its
    file came with (`origin`, the node's other vendor settings, else the one vendor the document
    uses): what the source wrote, verbatim, while Flowdesk's values still read the same from
    it; otherwise the current values, when the vendor's form says them exactly; otherwise
    nothing (they stay in `<flowdesk:config>` only). Runs on the built tree, whose resources
    `potentialOwner` references name."""
    fallback = _document_vendor(doc)
    elements = {element.get("id"): element for element in root.iter(q(BPMN, "*"))}
    for node_id, node in doc.get("nodes", {}).items():
        element = elements.get(node_id)
        config = node.get("config")
        if element is None or not isinstance(config, dict):
            continue
        origin = as_mapping(config.get(ORIGIN))
        dialect = _node_vendor(config, origin) or fallback
        local = split(element.tag)[1]
        if node["kind"] == "userTask" and local == "userTask":
            write_assignment(element, config, origin, dialect)
        if node["kind"] in _FORM_KINDS and local == node["kind"]:
            write_form(element, config, origin, dialect)
        if node["kind"] in _TOOL_KINDS and local != "task":
            write_inputs(element, config, origin, dialect)
        if dialect == VENDOR_NAMES[CAMUNDA] and isinstance(config.get("watch"), str):
            _write_variable_name(element, config["watch"])


def _write_variable_name(element: etree._Element, watch: str) -> None:
    """Camunda 7's `variableName` on a conditional event definition: the variables whose change
    alone re-evaluates its condition (our `watch`)."""
    definition = element.find(q(BPMN, "conditionalEventDefinition"))
    if definition is not None and watch.strip():
        definition.set(q(CAMUNDA, "variableName"), watch)


def _node_vendor(config: dict[str, Any], origin: dict[str, Any]) -> str | None:
    for value in (origin, *(config.get(key) for key in _VENDOR_KEYS)):
        if isinstance(value, dict) and value.get("vendor") in NAMESPACES:
            return str(value["vendor"])
    return None


def _document_vendor(doc: Mapping[str, Any]) -> str | None:
    """The one vendor whose settings or kept extensions the document holds (None for none or
    several): the dialect of a node that has none of its own."""
    found: set[str] = set()
    for node in doc.get("nodes", {}).values():
        config = node.get("config") if isinstance(node, dict) else None
        if isinstance(config, dict):
            origin = as_mapping(config.get(ORIGIN))
            vendor = _node_vendor(config, origin)
            if vendor:
                found.add(vendor)
    text = json.dumps([doc.get("kept"), [n.get("kept") for n in doc.get("nodes", {}).values()]])
    found |= {name for uri, name in VENDOR_NAMES.items() if "{" + uri + "}" in text}
    return found.pop() if len(found) == 1 else None


def _written_back(element: etree._Element, kind: str) -> tuple[list[Any], list[etree._Element]]:
    """The vendor's copy of the written-back settings on a node element: its assignment
    attributes (namespace, name) and performers, and the extension elements that hold them."""
    attributes: list[Any] = []
    if kind == "userTask":
        for namespace in JUEL_VENDORS:
            for name in ASSIGNMENT_ATTRIBUTES:
                if element.get(q(namespace, name)) is not None:
                    attributes.append((namespace, name))
    wanted = {"assignmentDefinition"} if kind == "userTask" else set()
    wanted |= set(FORM_ELEMENTS) if kind in _FORM_KINDS else set()
    wanted |= set(IO_ELEMENTS) if kind in _TOOL_KINDS else set()
    children = [
        child
        for child in extensions(element)
        if split(child.tag)[0] in (*JUEL_VENDORS, ZEEBE) and split(child.tag)[1] in wanted
    ]
    if kind == "userTask":
        children += [child for child in element if child.tag in PERFORMER_TAGS]
    return attributes, children


def _copy_of(element: etree._Element, kind: str) -> list[str]:
    attributes, children = _written_back(element, kind)
    values = [repr((*item, element.get(q(*item)))) for item in attributes]
    return sorted(values + [json.dumps(kept.to_data(child), sort_keys=True) for child in children])


def refresh_written_back(root: etree._Element, doc: Mapping[str, Any]) -> bool:
    """Make the vendor's copy of assignment, forms and inputs in a tree Flowdesk once exported
    (a canvas posts it back after panel edits that changed only `<flowdesk:config>`) say the
    document's current values, as export would; tell whether anything changed."""
    elements = {element.get("id"): element for element in root.iter(q(BPMN, "*"))}
    before: dict[str, list[str]] = {}
    for node_id, node in doc.get("nodes", {}).items():
        element = elements.get(node_id)
        if element is None or split(element.tag)[1] == "task":
            continue
        before[node_id] = _copy_of(element, node["kind"])
        attributes, children = _written_back(element, node["kind"])
        for namespace, name in attributes:
            del element.attrib[q(namespace, name)]
        for child in children:
            parent = child.getparent()
            if child.tag not in PERFORMER_TAGS and parent is not None:
                parent.remove(child)  # performers stay: write_back keeps or rewrites them
    write_back(root, doc)
    kinds = {node_id: node["kind"] for node_id, node in doc.get("nodes", {}).items()}
    return any(_copy_of(elements[i], kinds[i]) != old for i, old in before.items())


def refreshed_xml(xml: str, doc: Mapping[str, Any]) -> str | None:
    """`xml` (which imports to `doc`) with the vendor's copy of the written-back settings made
    current, or None when it already is; a designer save stores this, so a download of the
    draft never gives Camunda Modeler a value edited away in Flowdesk."""
    markers = (*VENDOR_NAMES, "Performer", "potentialOwner")
    if not any(marker in xml for marker in markers):
        return None  # no vendor's copy to make current (a save of a Flowdesk process: no parse)
    root = safe_xml.parse(xml, max_bytes=len(xml.encode("utf-8", "surrogatepass")) + 1)
    if not refresh_written_back(root, doc):
        return None
    body = etree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
