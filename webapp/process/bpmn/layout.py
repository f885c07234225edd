"""Automatic layered layout (left to right) and simple edge routing.

`auto_layout` is pure: it returns a new document. Used on import when a file has no diagram
information and by the designer's "Auto layout" action.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Container, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from webapp.process.document import depths
from webapp.process.kinds import default_size

from .routing import Box, route_flows
from .routing import number as _number

COLUMN = 180
ROW = 120
MARGIN_X = 100
MARGIN_Y = 100
SCOPE_PAD_X = 40
SCOPE_PAD_Y = 40
_MIN_GAP_X = 80
_MIN_GAP_Y = 40
_SWEEPS = 4
#: Pass-through slots a scope may reserve for flows that skip layers (a base, plus some per
#: node); the shortest such flows get theirs first, the rest are routed without, so the work
#: stays near-linear in the number of flows.
_MOST_SLOTS = 2000
_MOST_SLOTS_PER_NODE = 4

#: Kinds that are not laid out in the flow, so nothing can sit on their border.
_NOT_HOSTS = ("boundaryEvent", "eventSubProcess")


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

    Each scope is laid out on its own, innermost first: an expanded sub-process is sized to fit
    its nodes and holds them, a collapsed one is task-sized and its nodes get their own plane
    (as bpmn-js draws them). Boundary events sit on their host's lower border, event
    sub-processes in a row below their scope's flow. A flow that skips layers gets a reserved
    slot in each layer it crosses (so no shape sits on it), up to a bound on slots; every flow
    is routed among the shapes of its own scope by `route_flows` (through those slots where it
    has them, and below its host when it leaves a boundary event). The work is about linear in
    the number of flows: crowded parts get simpler routes instead of a longer search.
    """
    result = copy.deepcopy(dict(doc))
    nodes: dict[str, dict[str, Any]] = result.get("nodes") or {}
    flows: dict[str, dict[str, Any]] = result.get("flows") or {}
    members = _scopes(nodes)
    sizes = {node_id: _size(node) for node_id, node in nodes.items()}
    depth = depths({"nodes": nodes})
    scope_of = {node_id: scope for scope, ids in members.items() for node_id in ids}
    edges: dict[str | None, list[tuple[str, str, str]]] = {}
    for edge in _edges(nodes, flows):
        edges.setdefault(scope_of[edge[1]], []).append(edge)
    placed: dict[str | None, _Scope] = {}
    for scope in sorted(members, key=lambda s: 0 if s is None else -1 - depth[s]):
        inner = _lay_scope(nodes, edges.get(scope, []), members[scope], sizes, scope is None)
        placed[scope] = inner
        if scope is not None:
            if _collapsed(nodes[scope]):
                sizes[scope] = default_size("userTask")
            else:
                width, height = default_size(str(nodes[scope].get("kind", "")))
                sizes[scope] = (max(width, inner.width), max(height, inner.height))
    slots: dict[str, list[tuple[float, float]]] = {}
    todo: list[tuple[str | None, float, float]] = [(None, 0, 0)]
    while todo:
        scope, dx, dy = todo.pop()
        inner = placed[scope]
        for node_id, (x, y) in inner.corners.items():
            w, h = sizes[node_id]
            nodes[node_id]["position"] = {
                "x": _number(x + dx),
                "y": _number(y + dy),
                "width": w,
                "height": h,
            }
            if node_id in placed:
                opened = not _collapsed(nodes[node_id])
                todo.append((node_id, x + dx if opened else 0, y + dy if opened else 0))
        for flow_id, points in inner.slots.items():
            slots[flow_id] = [(x + dx, y + dy) for x, y in points]
    ends_in: dict[str | None, dict[str, tuple[str, str]]] = {}
    for flow_id, flow in flows.items():
        source, target = str(flow.get("source")), str(flow.get("target"))
        if source in scope_of and target in scope_of and scope_of[source] == scope_of[target]:
            ends_in.setdefault(scope_of[source], {})[flow_id] = (source, target)
    routes: dict[str, list[dict[str, float]]] = {}
    for scope, ids in members.items():
        ends = ends_in.get(scope)
        if not ends:
            continue
        boxes = {node_id: box for node_id in ids if (box := node_box(nodes[node_id]))}
        kinds = {node_id: str(nodes[node_id].get("kind", "")) for node_id in ids}
        via = {flow_id: slots[flow_id] for flow_id in ends if flow_id in slots}
        lanes = [(x - 10, y - 1, 20, 2) for points in via.values() for x, y in points]
        hosts = boundary_hosts(nodes, ids, boxes)
        routes.update(route_flows(boxes, kinds, ends, via, lanes, hosts))
    for flow_id, flow in flows.items():
        flow["waypoints"] = routes.get(flow_id, [])
    return result


@dataclass
class _Scope:
    """One scope laid out from its own origin: top-left corners, long-flow slots, extent."""

    corners: dict[str, tuple[float, float]]
    slots: dict[str, list[tuple[float, float]]]
    width: float
    height: float


def _scopes(nodes: Mapping[str, Any]) -> dict[str | None, list[str]]:
    """Node ids per scope (None: the process); a parent that is no node counts as the process."""
    members: dict[str | None, list[str]] = {None: []}
    for node_id, node in nodes.items():
        parent = node.get("parent")
        scope = parent if isinstance(parent, str) and parent in nodes else None
        members.setdefault(scope, []).append(node_id)
    return members


def boundary_host(nodes: Mapping[str, Any], node_id: str) -> str | None:
    """The node a boundary event sits on, if it is one and names a node that can hold it."""
    node = nodes[node_id]
    config = node.get("config")
    host = config.get("attachedTo") if isinstance(config, Mapping) else None
    if node.get("kind") != "boundaryEvent" or not isinstance(host, str) or host not in nodes:
        return None
    return None if nodes[host].get("kind") in _NOT_HOSTS else host


def boundary_hosts(
    nodes: Mapping[str, Any], ids: Iterable[str], within: Container[str]
) -> dict[str, str]:
    """The boundary events among `ids` whose host is also `within`, each with its host."""
    hosts = {n: boundary_host(nodes, n) for n in ids}
    return {n: host for n, host in hosts.items() if host is not None and host in within}


def _collapsed(node: Mapping[str, Any]) -> bool:
    config = node.get("config")
    return isinstance(config, Mapping) and config.get("collapsed") is True


def _lay_scope(
    nodes: Mapping[str, Any],
    scope_edges: list[tuple[str, str, str]],
    ids: list[str],
    sizes: Mapping[str, tuple[float, float]],
    top: bool,
) -> _Scope:
    """Lay out the nodes of one scope: the layered flow, boundary events, event sub-processes."""
    here = set(ids)
    apart = [n for n in ids if nodes[n].get("kind") == "eventSubProcess"]
    hosts = boundary_hosts(nodes, ids, here)
    flowing = {n: nodes[n] for n in ids if n not in hosts and n not in apart}
    edges = [
        (flow_id, hosts.get(source, source), target)
        for flow_id, source, target in scope_edges
        if source in here and target in flowing and hosts.get(source, source) in flowing
    ]
    margin_x, margin_y = (MARGIN_X, MARGIN_Y) if top else (SCOPE_PAD_X, SCOPE_PAD_Y)
    dropping = {flow_id for flow_id, source, _ in scope_edges if source in hosts}
    layers, passes = _order_layers(flowing, edges, dropping)
    widest_layer = max((len(layer) for layer in layers), default=0)
    row = max([ROW, *(sizes[n][1] + _MIN_GAP_Y for n in flowing)])
    centres: dict[str, tuple[float, float]] = {}
    centre_x: float = margin_x
    previous_width = 0.0
    for number, layer in enumerate(layers):
        width = max((sizes[node_id][0] for node_id in layer if node_id in sizes), default=0)
        if number == 0:
            centre_x += width / 2
        else:
            centre_x += max(COLUMN, (previous_width + width) / 2 + _MIN_GAP_X)
        previous_width = width
        top_y = margin_y + (widest_layer - len(layer)) * row / 2
        for index, node_id in enumerate(layer):
            centres[node_id] = (centre_x, top_y + index * row + row / 2)
    corners = {
        n: (c[0] - sizes[n][0] / 2, c[1] - sizes[n][1] / 2)
        for n, c in centres.items()
        if n in flowing
    }
    on_host: dict[str, int] = {}
    for host in hosts.values():
        on_host[host] = on_host.get(host, 0) + 1
    seen: dict[str, int] = {}
    for node_id, host in hosts.items():
        hx, hy = corners[host]
        hw, hh = sizes[host]
        seen[host] = seen.get(host, 0) + 1
        w, h = sizes[node_id]
        x = hx + hw * seen[host] / (on_host[host] + 1) - w / 2
        corners[node_id] = (x, hy + hh - h / 2)
    bottom = max((y + sizes[n][1] for n, (x, y) in corners.items()), default=margin_y)
    right = max((x + sizes[n][0] for n, (x, y) in corners.items()), default=margin_x)
    x = float(margin_x)
    for node_id in apart:
        corners[node_id] = (x, bottom + _MIN_GAP_Y)
        x += sizes[node_id][0] + _MIN_GAP_X
    if apart:
        right = max(right, x - _MIN_GAP_X)
        bottom += _MIN_GAP_Y + max(sizes[n][1] for n in apart)
    slots = {flow_id: [centres[slot] for slot in chain] for flow_id, chain in passes.items()}
    return _Scope(corners, slots, right + margin_x, bottom + margin_y)


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
    nodes: Mapping[str, Any],
    edges: list[tuple[str, str, str]],
    dropping: AbstractSet[str] = frozenset(),
) -> tuple[list[list[str]], dict[str, list[str]]]:
    """Longest-path layering (start events alone in the first layer), a pass-through slot per
    skipped layer for long flows, then barycenter ordering, in which the next shape of a flow in
    `dropping` (from a boundary event on its source's lower border) leans below its source.
    Returns the layers and, per long flow id, its slots in layer order (slot ids start with a
    space, which no BPMN id can)."""
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
    ready = deque(node_id for node_id in nodes if remaining[node_id] == 0)
    while ready:
        current = ready.popleft()
        floor = 0 if current in starts else first
        layer[current] = max((layer[p] + 1 for p in predecessors[current]), default=floor)
        for child in successors[current]:
            remaining[child] -= 1
            if remaining[child] == 0:
                ready.append(child)
    passes: dict[str, list[str]] = {}
    long = [edge for edge in edges if edge[1:] in dag and layer[edge[2]] - layer[edge[1]] >= 2]
    room = _MOST_SLOTS + _MOST_SLOTS_PER_NODE * len(nodes)
    kept: set[str] = set()
    for flow_id, source, target in sorted(long, key=lambda e: layer[e[2]] - layer[e[1]]):
        room -= layer[target] - layer[source] - 1
        if room < 0:
            break
        kept.add(flow_id)
    for flow_id, source, target in long:
        if flow_id not in kept:
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
    lean = {
        (source, passes[flow_id][0] if flow_id in passes else target)
        for flow_id, source, target in edges
        if flow_id in dropping
    }
    layers: list[list[str]] = [[] for _ in range(max(layer.values(), default=-1) + 1)]
    for item in [*nodes, *(slot for chain in passes.values() for slot in chain)]:
        layers[layer[item]].append(item)
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        indices = range(1, len(layers)) if downward else range(len(layers) - 2, -1, -1)
        for i in indices:
            neighbours = predecessors if downward else successors
            reference = {n: pos for pos, n in enumerate(layers[i - 1 if downward else i + 1])}
            layers[i] = _by_barycenter(layers[i], neighbours, reference, lean, downward)
    return layers, passes


def _by_barycenter(
    layer: list[str],
    neighbours: Mapping[str, list[str]],
    reference: Mapping[str, int],
    lean: set[tuple[str, str]],
    downward: bool,
) -> list[str]:
    def offset(node_id: str, other: str) -> float:
        if downward:
            return 0.5 if (other, node_id) in lean else 0.0
        return -0.5 if (node_id, other) in lean else 0.0

    def key(item: tuple[int, str]) -> tuple[float, int]:
        index, node_id = item
        positions = [
            reference[n] + offset(node_id, n) for n in neighbours[node_id] if n in reference
        ]
        return (sum(positions) / len(positions) if positions else index, index)

    return [node_id for _, node_id in sorted(enumerate(layer), key=key)]
