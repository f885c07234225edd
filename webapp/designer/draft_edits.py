"""Edits of a draft document made without the canvas (the outline view): pure functions.

Each takes a document and returns it changed (the caller passes a copy), raising ProcessError
with a message for the modeller when the edit makes no sense.
"""

from __future__ import annotations

from typing import Any

from webapp.process.bpmn.layout import COLUMN, ROW, node_box
from webapp.process.document import VARIABLES_POOL, ancestors, next_id
from webapp.process.kinds import KINDS, SCOPE_KINDS, default_size
from webapp.services.processes import ProcessError

_GAP = COLUMN - 100


def _node(doc: dict[str, Any], node_id: str) -> dict[str, Any]:
    node = doc["nodes"].get(node_id)
    if node is None:
        raise ProcessError("outline.unknown_node", f"The draft has no node '{node_id}'.")
    return node


def _flow(doc: dict[str, Any], flow_id: str) -> dict[str, Any]:
    flow = doc["flows"].get(flow_id)
    if flow is None:
        raise ProcessError("outline.unknown_flow", f"The draft has no flow '{flow_id}'.")
    return flow


def _overlaps(
    doc: dict[str, Any], box: tuple[float, float, float, float], parent: str | None = None
) -> bool:
    """Whether `box` overlaps a shape of the scope `parent` (not the sub-processes around it)."""
    x, y, w, h = box
    around = set(ancestors(doc, parent)) | {parent} if parent else set()
    for node_id, node in doc["nodes"].items():
        if node_id in around:
            continue
        o = node_box(node)
        if o and x < o[0] + o[2] and o[0] < x + w and y < o[1] + o[3] and o[1] < y + h:
            return True
    return False


def _place(
    doc: dict[str, Any], kind: str, after: str | None, parent: str | None = None
) -> dict[str, Any]:
    """A free spot: right of `after` (moving down past other shapes), else below everything of
    its scope (inside the sub-process `parent`, from its top left corner)."""
    width, height = default_size(kind)
    anchor = node_box(doc["nodes"][after]) if after else None
    container = node_box(doc["nodes"][parent]) if parent else None
    siblings = [n for n in doc["nodes"].values() if n.get("parent") == parent]
    if anchor is not None:
        x = anchor[0] + anchor[2] + _GAP
        y = anchor[1] + anchor[3] / 2 - height / 2
    elif container is not None and not any(node_box(n) for n in siblings):
        x, y = container[0] + 50, container[1] + 50
    else:
        boxes = [b for n in siblings if (b := node_box(n))]
        x = min((b[0] for b in boxes), default=100)
        y = max((b[1] + b[3] for b in boxes), default=0) + ROW / 2
    while _overlaps(doc, (x, y, width, height), parent):
        y += ROW
    return {"x": round(x), "y": round(y), "width": width, "height": height}


def add_node(
    doc: dict[str, Any],
    kind: str,
    title: str,
    after: str | None = None,
    parent: str | None = None,
) -> str:
    """Add a node (connected from `after` when given, in its scope) inside the sub-process
    `parent` (None: the process level); returns its id."""
    if kind not in KINDS:
        raise ProcessError("outline.unknown_kind", f"'{kind}' is not a node kind Flowdesk knows.")
    if kind == "boundaryEvent":
        raise ProcessError(
            "outline.boundary",
            "A boundary event sits on an activity's border: draw it on the diagram.",
        )
    if after:
        after_parent = _node(doc, after).get("parent")
        if parent and parent != after_parent:
            raise ProcessError(
                "outline.scope",
                f"'{after}' is not inside '{parent}': flows only join nodes of the same scope.",
            )
        parent = after_parent
    if parent and _node(doc, parent)["kind"] not in SCOPE_KINDS:
        raise ProcessError("outline.scope", f"'{parent}' is not a sub-process.")
    node_id = next_id(doc, kind)
    node: dict[str, Any] = {
        "kind": kind,
        "title": title.strip(),
        "config": {},
        "position": _place(doc, kind, after or None, parent),
    }
    if parent:
        node["parent"] = parent
    doc["nodes"][node_id] = node
    if after:
        connect(doc, after, node_id)
    return node_id


def rename(doc: dict[str, Any], element_id: str, title: str) -> None:
    record = doc["nodes"].get(element_id) or doc["flows"].get(element_id)
    if record is None:
        raise ProcessError("outline.unknown_node", f"The draft has no node or flow '{element_id}'.")
    record["title"] = title.strip()


def connect(doc: dict[str, Any], source: str, target: str) -> str:
    """Add a flow from `source` to `target`; returns its id."""
    _node(doc, source)
    _node(doc, target)
    if source == target:
        raise ProcessError("outline.self_loop", "A flow cannot lead from a node back to itself.")
    for flow in doc["flows"].values():
        if flow["source"] == source and flow["target"] == target:
            raise ProcessError(
                "outline.duplicate_flow", f"'{source}' is already connected to '{target}'."
            )
    flow_id = next_id(doc, "flow")
    doc["flows"][flow_id] = {
        "source": source,
        "target": target,
        "title": "",
        "condition": None,
        "default": False,
        "waypoints": [],
    }
    return flow_id


def delete_node(doc: dict[str, Any], node_id: str) -> list[str]:
    """Remove a node, what is inside it (a sub-process's nodes), the boundary events attached to
    any of them and every flow touching one; returns the removed node ids."""
    _node(doc, node_id)
    gone = {node_id}
    changed = True
    while changed:
        changed = False
        for other_id, other in doc["nodes"].items():
            config = other.get("config") or {}
            inside = other.get("parent") in gone or config.get("attachedTo") in gone
            if other_id not in gone and inside:
                gone.add(other_id)
                changed = True
    removed = [n for n in doc["nodes"] if n in gone]
    doc["nodes"] = {nid: node for nid, node in doc["nodes"].items() if nid not in gone}
    doc["flows"] = {
        fid: flow
        for fid, flow in doc["flows"].items()
        if flow["source"] not in gone and flow["target"] not in gone
    }
    return removed


def delete_flow(doc: dict[str, Any], flow_id: str) -> None:
    _flow(doc, flow_id)
    del doc["flows"][flow_id]


def set_variables_pool(doc: dict[str, Any], pool: bool) -> None:
    """Turn the process variables pool on (`"variables": "pool"`) or off (the key is removed)."""
    if pool:
        doc["variables"] = VARIABLES_POOL
    else:
        doc.pop("variables", None)


def update_node(doc: dict[str, Any], node_id: str, title: str, config: dict[str, Any]) -> None:
    node = _node(doc, node_id)
    node["title"] = title
    node["config"] = config


def update_flow(
    doc: dict[str, Any], flow_id: str, title: str, condition: str | None, default: bool
) -> None:
    """Set a flow's title, condition and default mark (one default per source, as in BPMN)."""
    flow = _flow(doc, flow_id)
    if default:
        for other in doc["flows"].values():
            if other["source"] == flow["source"]:
                other["default"] = False
    flow.update(title=title, condition=condition, default=default)
