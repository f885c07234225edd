"""Automatic layered layout (left to right); the routes themselves come from `routing`.

`auto_layout` is pure: it returns a new document. Used on import when a file has no diagram
information and by the designer's "Auto layout" action.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from webapp.process.kinds import default_size

from .routing import Box, route_flows
from .routing import number as _number

COLUMN = 180
ROW = 120
MARGIN_X = 100
MARGIN_Y = 100
_MIN_GAP_X = 80
_MIN_GAP_Y = 40
_SWEEPS = 4


def node_box(node: Mapping[str, Any]) -> Box | None:
    """Return (x, y, width, height) of a node, or None when it has no position."""
    position = node.get("position")
    if not isinstance(position, Mapping) or "x" not in position or "y" not in position:
        return None
    width, height = default_size(str(node.get("kind", "")))
    return (
        position["x"],
        position["y"],
        position.get("width") or width,
        position.get("height") or height,
    )


def auto_layout(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of `doc` with every node placed on a layered grid.

    A flow that skips layers gets a reserved slot in each layer it crosses (so no shape sits on
    it); every flow is routed by `route_flows` (through those slots where it has them).
    """
    result = copy.deepcopy(dict(doc))
    nodes: dict[str, dict[str, Any]] = result.get("nodes") or {}
    flows: dict[str, dict[str, Any]] = result.get("flows") or {}
    layers, passes = _order_layers(nodes, _edges(nodes, flows))
    sizes = {node_id: _size(node) for node_id, node in nodes.items()}
    widest_layer = max((len(layer) for layer in layers), default=0)
    row = max([ROW, *(h + _MIN_GAP_Y for _, h in sizes.values())])
    centres: dict[str, tuple[float, float]] = {}
    centre_x: float = MARGIN_X
    previous_width = 0.0
    for number, layer in enumerate(layers):
        width = max((sizes[node_id][0] for node_id in layer if node_id in sizes), default=0)
        if number == 0:
            centre_x += width / 2
        else:
            centre_x += max(COLUMN, (previous_width + width) / 2 + _MIN_GAP_X)
        previous_width = width
        top = MARGIN_Y + (widest_layer - len(layer)) * row / 2
        for index, node_id in enumerate(layer):
            centres[node_id] = (centre_x, top + index * row + row / 2)
    for node_id, (x, y) in centres.items():
        if node_id in nodes:
            w, h = sizes[node_id]
            nodes[node_id]["position"] = {
                "x": _number(x - w / 2),
                "y": _number(y - h / 2),
                "width": w,
                "height": h,
            }
    boxes = {node_id: box for node_id, node in nodes.items() if (box := node_box(node))}
    kinds = {node_id: str(node.get("kind", "")) for node_id, node in nodes.items()}
    ends = {flow_id: (flow.get("source"), flow.get("target")) for flow_id, flow in flows.items()}
    via = {flow_id: [centres[slot] for slot in slots] for flow_id, slots in passes.items()}
    lanes = [(x - 10, y - 1, 20, 2) for points in via.values() for x, y in points]
    routes = route_flows(boxes, kinds, ends, via, lanes)  # type: ignore[arg-type]
    for flow_id, flow in flows.items():
        flow["waypoints"] = routes.get(flow_id, [])
    return result


def place_missing(doc: dict[str, Any], missing: Sequence[str]) -> None:
    """Put the nodes in `missing` in a row below the already placed ones (in place)."""
    placed = [node for node_id, node in doc["nodes"].items() if node_id not in missing]
    boxes = [box for node in placed if (box := node_box(node))]
    left = min((b[0] for b in boxes), default=MARGIN_X)
    top = max((b[1] + b[3] for b in boxes), default=0) + ROW / 2
    for index, node_id in enumerate(missing):
        node = doc["nodes"][node_id]
        w, h = _size(node)
        x = _number(left + index * COLUMN)
        node["position"] = {"x": x, "y": _number(top), "width": w, "height": h}


def _size(node: Mapping[str, Any]) -> tuple[float, float]:
    width, height = default_size(str(node.get("kind", "")))
    raw = node.get("position")
    position: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return position.get("width") or width, position.get("height") or height


def _edges(nodes: Mapping[str, Any], flows: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(flow id, source, target) of each flow between two existing nodes."""
    return [
        (flow_id, flow.get("source"), flow.get("target"))
        for flow_id, flow in flows.items()
        if flow.get("source") in nodes and flow.get("target") in nodes
    ]


def _acyclic(nodes: Mapping[str, Any], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Drop back edges found by a depth-first search that starts from the start events."""
    successors: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    has_incoming = {target for _, target in edges}
    for source, target in edges:
        successors[source].append(target)
    roots = [n for n, node in nodes.items() if node.get("kind") == "startEvent"]
    roots += [n for n in nodes if n not in has_incoming and n not in roots]
    roots += [n for n in nodes if n not in roots]
    state: dict[str, int] = {}
    back: set[tuple[str, str]] = set()
    for root in roots:
        if root in state:
            continue
        stack = [(root, iter(successors[root]))]
        state[root] = 1
        while stack:
            current, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[current] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((current, child))
            elif child not in state:
                state[child] = 1
                stack.append((child, iter(successors[child])))
    return [edge for edge in edges if edge not in back]


def _order_layers(
    nodes: Mapping[str, Any], edges: list[tuple[str, str, str]]
) -> tuple[list[list[str]], dict[str, list[str]]]:
    """Longest-path layering (start events alone in the first layer), a pass-through slot per
    skipped layer for long flows, then barycenter ordering. Returns the layers and, per long
    flow id, its slots in layer order (slot ids start with a space, which no BPMN id can)."""
    # dict, not set: iteration keeps document order, so the layout is the same in every process.
    dag = dict.fromkeys(_acyclic(nodes, [(source, target) for _, source, target in edges]))
    predecessors: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    successors: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    for source, target in dag:
        predecessors[target].append(source)
        successors[source].append(target)
    starts = {n for n, node in nodes.items() if node.get("kind") == "startEvent"}
    first = 1 if starts else 0
    layer: dict[str, int] = {}
    remaining = {node_id: len(predecessors[node_id]) for node_id in nodes}
    ready = [node_id for node_id in nodes if remaining[node_id] == 0]
    while ready:
        current = ready.pop(0)
        floor = 0 if current in starts else first
        layer[current] = max((layer[p] + 1 for p in predecessors[current]), default=floor)
        for child in successors[current]:
            remaining[child] -= 1
            if remaining[child] == 0:
                ready.append(child)
    passes: dict[str, list[str]] = {}
    for flow_id, source, target in edges:
        if (source, target) not in dag or layer[target] - layer[source] < 2:
            continue
        chain = [f" {flow_id} {k}" for k in range(layer[source] + 1, layer[target])]
        for slot, number in zip(chain, range(layer[source] + 1, layer[target]), strict=True):
            layer[slot] = number
        passes[flow_id] = chain
        hops = [source, *chain, target]
        if source in predecessors[target]:
            predecessors[target].remove(source)
            successors[source].remove(target)
        for a, b in pairwise(hops):
            successors.setdefault(a, []).append(b)
            predecessors.setdefault(b, []).append(a)
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for item in [*nodes, *(slot for chain in passes.values() for slot in chain)]:
        layers[layer[item]].append(item)
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for i in indices:
            neighbours = predecessors if downward else successors
            reference = {n: pos for pos, n in enumerate(layers[i - 1 if downward else i + 1])}
            layers[i] = _by_barycenter(layers[i], neighbours, reference)
    return layers, passes


def _by_barycenter(
    layer: list[str], neighbours: Mapping[str, list[str]], reference: Mapping[str, int]
) -> list[str]:
    def key(item: tuple[int, str]) -> tuple[float, int]:
        index, node_id = item
        positions = [reference[n] for n in neighbours[node_id] if n in reference]
        return (sum(positions) / len(positions) if positions else index, index)

    return [node_id for _, node_id in sorted(enumerate(layer), key=key)]
