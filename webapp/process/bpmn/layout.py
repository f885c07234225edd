"""Automatic layered layout (left to right) and orthogonal edge routing with a port per flow.

`auto_layout` is pure: it returns a new document. Used on import when a file has no diagram
information and by the designer's "Auto layout" action.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import Any

from webapp.process.kinds import default_size

COLUMN = 180
ROW = 120
MARGIN_X = 100
MARGIN_Y = 100
_MIN_GAP_X = 80
_MIN_GAP_Y = 40
_SWEEPS = 4

Box = tuple[float, float, float, float]


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


def route(source: Box, target: Box, others: Sequence[Box] = ()) -> list[dict[str, float]]:
    """Orthogonal waypoints of one flow from the source shape's border to the target shape's.

    A flow going back (right to left) runs below the two shapes and below every box of `others`
    that stands between them, so a loop does not cross the shapes it spans.
    """
    boxes = {f" other {i}": box for i, box in enumerate(others)}
    boxes.update({" source": source, " target": target})
    return route_flows(boxes, {}, {"flow": (" source", " target")})["flow"]


def _size(node: Mapping[str, Any]) -> tuple[float, float]:
    width, height = default_size(str(node.get("kind", "")))
    raw = node.get("position")
    position: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return position.get("width") or width, position.get("height") or height


def _number(value: float) -> float:
    return int(value) if float(value).is_integer() else round(value, 2)


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


# --- routing: every flow leaves and enters on its own port ------------------------------------

Point = tuple[float, float]

_PORT_GAP = 8
_LOOP_STEP = 12
_CLEAR = 4


@dataclass
class _Plan:
    """How one flow leaves its source and enters its target, decided before it is drawn."""

    source: str
    target: str
    via: list[Point]
    back: bool
    exit: Point = (0.0, 0.0)
    entry: Point = (0.0, 0.0)
    exit_vertical: bool = False
    entry_vertical: bool = False
    exit_bend: float | None = None
    entry_bend: float | None = None
    depth: float = 0.0
    shift: float = 0.0
    middle: dict[int, float] = field(default_factory=dict)


def route_flows(
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    flows: Mapping[str, tuple[str, str]],
    via: Mapping[str, list[Point]] | None = None,
    obstacles: Sequence[Box] = (),
) -> dict[str, list[dict[str, float]]]:
    """Orthogonal waypoints for every flow (id -> (source, target)) whose two ends have a box.

    Where several flows leave one node (a gateway's exits) or enter one node (a merge), each gets
    its own port: the one nearest in height runs straight, the farthest above or below leaves from
    the top or bottom corner and bends once toward its target, the others leave from their own
    point on the side and bend in their own column, so no two share a segment. A flow going back
    runs below the shapes from its own point on the bottom. `via` gives points a long flow passes;
    a corner route also keeps clear of `obstacles` (the lanes of long flows).
    """
    via = via or {}
    plans = {
        flow_id: _Plan(source, target, list(via.get(flow_id, [])), False)
        for flow_id, (source, target) in flows.items()
        if source in boxes and target in boxes
    }
    for plan in plans.values():
        sx, _, sw, _ = boxes[plan.source]
        plan.back = not plan.via and boxes[plan.target][0] < sx + sw
        shape_s, shape_t = _shape(kinds, plan.source), _shape(kinds, plan.target)
        plan.exit = _side(boxes[plan.source], shape_s, +1, 0.0)
        plan.entry = _side(boxes[plan.target], shape_t, -1, 0.0)
    taken: set[tuple[str, str]] = set()
    _plan_loops(plans, boxes, kinds, taken)
    for outgoing in (True, False):
        for node_id in boxes:
            _plan_fan(node_id, plans, boxes, kinds, taken, obstacles, outgoing=outgoing)
    _assign_tracks(plans)
    routes = {flow_id: _draw(plan) for flow_id, plan in plans.items()}
    _separate(plans, routes, boxes, kinds)
    return {
        flow_id: [{"x": _number(x), "y": _number(y)} for x, y in points]
        for flow_id, points in routes.items()
    }


def label_bounds(points: Sequence[Mapping[str, float]], text: str) -> Box:
    """Bounds for a flow's name next to its own segment: above (or beside) the longest segment
    after the first, which starts at the source where sibling flows start too."""
    width, height = _text_size(text)
    segments = [((a["x"], a["y"]), (b["x"], b["y"])) for a, b in pairwise(points)]
    segments = [s for s in segments if s[0] != s[1]] or segments
    if not segments:
        return (0.0, 0.0, width, height)
    candidates = segments[1:] if len(segments) > 1 else segments
    horizontal = [s for s in candidates if abs(s[0][1] - s[1][1]) < 1]
    pool = horizontal or candidates
    (ax, ay), (bx, by) = max(pool, key=lambda s: abs(s[1][0] - s[0][0]) + abs(s[1][1] - s[0][1]))
    if abs(ay - by) < 1:
        lowest = max(p["y"] for p in points)
        below = ax > bx and ay >= lowest - 1
        top = ay + 4 if below else ay - 4 - height
        return (_number((ax + bx) / 2 - width / 2), _number(top), width, height)
    return (_number(ax + 6), _number((ay + by) / 2 - height / 2), width, height)


def name_bounds(
    box: Box, kind: str, text: str, routes: Sequence[Sequence[Mapping[str, float]]]
) -> Box | None:
    """Where to put the name of an event or gateway that a route would run through where editors
    put it (centred below the shape): beside that route, or above. None when nothing is in the way
    (editors place it themselves) or the node's name is drawn inside it (tasks)."""
    if _shape({"node": kind}, "node") == "box":
        return None
    x, y, w, h = box
    width, height = _text_size(text)
    cx = x + w / 2
    below, above = y + h + 4, y - 4 - height
    spots = [
        (cx - width / 2, below),
        (cx - 6 - width, below),
        (cx + 6, below),
        (cx - width / 2, above),
        (cx - 6 - width, above),
        (cx + 6, above),
    ]
    lines = [[(p["x"], p["y"]) for p in route] for route in routes]
    for number, (left, top) in enumerate(spots):
        spot = (left, top, width, height)
        if not any(_hits(a, b, spot) for line in lines for a, b in pairwise(line)):
            return None if number == 0 else (_number(left), _number(top), width, height)
    return None


def _text_size(text: str) -> tuple[float, float]:
    """Rough size of a name as editors draw it: 11 px text wrapped at 90 px."""
    width = max(20.0, min(90.0, 6.5 * len(text)))
    return width, 14.0 * max(1, -(-int(6.5 * len(text)) // 90))


def _shape(kinds: Mapping[str, str], node_id: str) -> str:
    kind = kinds.get(node_id, "")
    if kind.endswith("Gateway"):
        return "diamond"
    if default_size(kind) == (36, 36):
        return "circle"
    return "box"


def _reach(shape: str, offset: float, half: float) -> float:
    """How far the outline reaches out at `offset` from the centre line (as a share of the half)."""
    ratio = min(1.0, abs(offset) / half) if half else 0.0
    if shape == "diamond":
        return 1.0 - ratio
    if shape == "circle":
        return math.sqrt(max(0.0, 1.0 - ratio * ratio))
    return 1.0


def _side(box: Box, shape: str, direction: int, dy: float) -> Point:
    """The point on the right (direction +1) or left (-1) outline, `dy` below the middle."""
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    return (cx + direction * w / 2 * _reach(shape, dy, h / 2), cy + dy)


def _end(box: Box, shape: str, direction: int, dx: float) -> Point:
    """The point on the bottom (direction +1) or top (-1) outline, `dx` right of the middle."""
    x, y, w, h = box
    cx, cy = x + w / 2, y + h / 2
    return (cx + dx, cy + direction * h / 2 * _reach(shape, dx, w / 2))


def _offsets(count: int, room: float) -> list[float]:
    """`count` distinct offsets inside (-room, room), _PORT_GAP apart where there is room."""
    if count <= 1:
        return [0.0] * count
    step = min(_PORT_GAP, 2 * room / (count + 1))
    return [(i - (count - 1) / 2) * step for i in range(count)]


def _plan_loops(
    plans: dict[str, _Plan],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    taken: set[tuple[str, str]],
) -> None:
    """Flows going back leave and enter on the bottom, each at its own point and depth."""
    ends: dict[str, list[tuple[str, str]]] = {}
    for flow_id, plan in plans.items():
        if plan.back:
            ends.setdefault(plan.source, []).append((flow_id, "exit"))
            ends.setdefault(plan.target, []).append((flow_id, "entry"))
    for node_id, attached in ends.items():
        taken.add((node_id, "bottom"))
        box = boxes[node_id]
        offsets = _offsets(len(attached), box[2] / 2 - 2)
        for (flow_id, end), dx in zip(attached, reversed(offsets), strict=True):
            point = _end(box, _shape(kinds, node_id), +1, dx)
            setattr(plans[flow_id], end, point)
    placed: list[tuple[float, float, float]] = []
    for plan in plans.values():
        if not plan.back:
            continue
        left, right = sorted((plan.exit[0], plan.entry[0]))
        low = max(plan.exit[1], plan.entry[1])
        spanned = [y + h for x, y, w, h in boxes.values() if x < right + 1 and x + w > left - 1]
        depth = max([low, *spanned]) + _MIN_GAP_Y
        while any(a < right and b > left and abs(depth - d) < _LOOP_STEP / 2 for a, b, d in placed):
            depth += _LOOP_STEP
        placed.append((left, right, depth))
        plan.depth = depth


def _plan_fan(
    node_id: str,
    plans: dict[str, _Plan],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    taken: set[tuple[str, str]],
    obstacles: Sequence[Box],
    *,
    outgoing: bool,
) -> None:
    """Give each forward flow leaving (or entering) `node_id` its own port and bend column."""
    box = boxes[node_id]
    x, y, w, h = box
    cy = y + h / 2
    shape = _shape(kinds, node_id)
    group = [
        (flow_id, plan)
        for flow_id, plan in plans.items()
        if not plan.back and (plan.source if outgoing else plan.target) == node_id
    ]
    if len(group) < 2:
        return
    index = {flow_id: i for i, flow_id in enumerate(plans)}

    def far_y(plan: _Plan) -> float:
        """Height of the other end, as seen from this node."""
        if outgoing:
            if plan.via:
                return plan.via[0][1]
            _, ty, _, th = boxes[plan.target]
            return ty + th / 2
        if plan.via:
            return plan.via[-1][1]
        return cy if plan.exit_vertical else plan.exit[1]

    straight_id, straight = min(group, key=lambda g: (abs(far_y(g[1]) - cy), index[g[0]]))
    above = sorted(
        [g for g in group if g[0] != straight_id and far_y(g[1]) < cy],
        key=lambda g: (far_y(g[1]), index[g[0]]),
    )
    below = sorted(
        [g for g in group if g[0] != straight_id and far_y(g[1]) >= cy],
        key=lambda g: (-far_y(g[1]), index[g[0]]),
    )
    others = [b for other, b in boxes.items() if other != node_id] + list(obstacles)
    if outgoing:
        x0 = x + w
        x1 = min(plan.via[0][0] if plan.via else boxes[plan.target][0] for _, plan in group)
    else:
        x0 = max(plan.via[-1][0] if plan.via else plan.exit[0] for _, plan in group)
        x1 = x
    for side, members, sign in (("top", above, -1), ("bottom", below, +1)):
        if members and (node_id, side) not in taken:
            plan = members[0][1]
            if _corner_ok(plan, box, shape, sign, far_y(plan), others, boxes, outgoing):
                taken.add((node_id, side))
                members = members[1:]
        nearest = [(straight_id, straight)] if (far_y(straight) - cy) * sign > 0 else []
        count = len(members)
        room = h / 2 * 0.7
        for rank, (_, plan) in enumerate(members):
            dy = sign * room * (count - rank) / (count + 1)
            point = _side(box, shape, +1 if outgoing else -1, dy)
            if outgoing:
                plan.exit = point
            else:
                plan.entry = point
        bending = [*members, *nearest]
        for rank, (_, plan) in enumerate(bending):
            share = 0.5 * (rank + 1) / (len(bending) + 1)
            if outgoing:
                if plan.exit_bend is None:
                    plan.exit_bend = x0 + (x1 - x0) * share
            elif plan.entry_bend is None and (plan.exit_bend is None or plan.via):
                plan.entry_bend = x1 - (x1 - x0) * share


def _corner_ok(
    plan: _Plan,
    box: Box,
    shape: str,
    sign: int,
    far: float,
    others: list[Box],
    boxes: Mapping[str, Box],
    outgoing: bool,
) -> bool:
    """Tell whether the flow may use the top/bottom corner: one bend, clear of other shapes."""
    x, y, w, h = box
    cx = x + w / 2
    if (far - (y + h / 2)) * sign <= h / 2 + _MIN_GAP_Y / 2:
        return False
    if outgoing:
        corner = _end(box, shape, sign, 0.0)
        turn = (corner[0], far)
        goal = plan.via[0] if plan.via else (boxes[plan.target][0], far)
        path = [corner, turn, goal]
    else:
        if plan.exit_vertical:
            return False
        corner = _end(box, shape, sign, 0.0)
        start = plan.via[-1] if plan.via else plan.exit
        path = [start, (cx, start[1]), corner]
    ends = {boxes[plan.source], boxes[plan.target]}
    for a, b in pairwise(path):
        for other in others:
            if other in ends:
                continue
            if _hits(a, b, other):
                return False
    if outgoing:
        plan.exit, plan.exit_vertical = path[0], True
    else:
        plan.entry, plan.entry_vertical = path[-1], True
    return True


def _hits(a: Point, b: Point, box: Box) -> bool:
    x, y, w, h = box
    left, right = sorted((a[0], b[0]))
    low, high = sorted((a[1], b[1]))
    return (
        left < x + w + _CLEAR and right > x - _CLEAR and low < y + h + _CLEAR and high > y - _CLEAR
    )


def _draw(plan: _Plan) -> list[Point]:
    """The plan's polyline, on a 0.01 grid so that what is level stays level once written."""

    def at(point: Point) -> Point:
        return (round(point[0], 2), round(point[1], 2))

    if plan.back:
        depth = round(plan.depth, 2)
        exit, entry = at(plan.exit), at(plan.entry)
        return _simplify([exit, (exit[0], depth), (entry[0], depth), entry])
    anchors = [at(plan.exit), *map(at, plan.via), at(plan.entry)]
    path = [anchors[0]]
    last = len(anchors) - 2
    for hop, (a, b) in enumerate(pairwise(anchors)):
        if hop == 0 and plan.exit_vertical:
            path.append((a[0], b[1]))
        elif hop == last and plan.entry_vertical:
            path.append((b[0], a[1]))
        elif a[1] != b[1]:
            bend = _bend(plan, hop, last, a, b)
            low, high = sorted((a[0], b[0]))
            if high - low > 2:
                bend = min(max(bend, low + 1), high - 1)
            bend = round(bend, 2)
            path += [(bend, a[1]), (bend, b[1])]
        path.append(b)
    return _simplify(path)


def _bend(plan: _Plan, hop: int, last: int, a: Point, b: Point) -> float:
    """Where hop number `hop` (of `last` + 1) turns from a's height to b's."""
    if hop == 0 and plan.exit_bend is not None:
        return plan.exit_bend
    if hop == last and plan.entry_bend is not None:
        return plan.entry_bend
    if hop in plan.middle:
        return plan.middle[hop]
    return a[0] + (b[0] - a[0]) * (0.5 + plan.shift)


def _assign_tracks(plans: Mapping[str, _Plan]) -> None:
    """Give every turn between two columns of shapes its own column, so no two flows run
    along one upright stretch, and a flow that leaves a height turns before a flow that arrives
    at that height turns (else the two would share a level stretch). Otherwise the planned order
    of turns is kept."""
    hops: list[tuple[str, int, int, Point, Point, float]] = []
    for flow_id, plan in plans.items():
        if plan.back:
            continue
        anchors = [plan.exit, *plan.via, plan.entry]
        last = len(anchors) - 2
        for hop, (a, b) in enumerate(pairwise(anchors)):
            vertical = (hop == 0 and plan.exit_vertical) or (hop == last and plan.entry_vertical)
            if not vertical and abs(a[1] - b[1]) >= 0.01 and b[0] - a[0] > 4:
                hops.append((flow_id, hop, last, a, b, _bend(plan, hop, last, a, b)))
    hops.sort(key=lambda h: (h[3][0], h[4][0]))
    clusters: list[list[tuple[str, int, int, Point, Point, float]]] = []
    reach = float("-inf")
    for item in hops:
        if clusters and item[3][0] < reach:
            clusters[-1].append(item)
            reach = min(reach, item[4][0])
        else:
            clusters.append([item])
            reach = item[4][0]
    for cluster in clusters:
        low = max(item[3][0] for item in cluster)
        high = min(item[4][0] for item in cluster)
        if len(cluster) < 2 or high - low < 4:
            continue
        order = _turn_order(cluster)
        for rank, index in enumerate(order):
            flow_id, hop, last, _, _, _ = cluster[index]
            x = low + (high - low) * (rank + 1) / (len(cluster) + 1)
            plan = plans[flow_id]
            if hop == 0:
                plan.exit_bend = x
            elif hop == last:
                plan.entry_bend = x
            else:
                plan.middle[hop] = x


def _turn_order(cluster: Sequence[tuple[str, int, int, Point, Point, float]]) -> list[int]:
    """Indices of `cluster` left to right: leavers of a height before its arrivers, then by
    the planned turn (a cycle is broken at the leftmost planned turn)."""
    before: dict[int, set[int]] = {i: set() for i in range(len(cluster))}
    for i, (_, _, _, _, arrive, _) in enumerate(cluster):
        for j, (_, _, _, leave, _, _) in enumerate(cluster):
            if i != j and abs(arrive[1] - leave[1]) < 0.01:
                before[i].add(j)
    order: list[int] = []
    left = set(before)
    while left:
        ready = [i for i in left if not before[i] & left] or list(left)
        pick = min(ready, key=lambda i: (cluster[i][5], i))
        order.append(pick)
        left.remove(pick)
    return order


def _simplify(path: list[Point]) -> list[Point]:
    """Drop repeated points and points in the middle of a straight run."""
    points = [path[0]]
    for point in path[1:]:
        if abs(point[0] - points[-1][0]) >= 0.01 or abs(point[1] - points[-1][1]) >= 0.01:
            points.append(point)
    kept = [points[0]]
    for point, after in pairwise(points[1:]):
        before = kept[-1]
        upright = abs(before[0] - point[0]) < 0.01 and abs(point[0] - after[0]) < 0.01
        level = abs(before[1] - point[1]) < 0.01 and abs(point[1] - after[1]) < 0.01
        if not (upright or level):
            kept.append(point)
    if len(points) > 1:
        kept.append(points[-1])
    return kept


def shared_segment(first: Sequence[Point], second: Sequence[Point]) -> bool:
    """Tell whether two polylines run along a common stretch (collinear and overlapping)."""
    for a, b in pairwise(first):
        for c, d in pairwise(second):
            if _overlap(a, b, c, d):
                return True
    return False


def _overlap(a: Point, b: Point, c: Point, d: Point) -> bool:
    for axis in (0, 1):
        other = 1 - axis
        if (
            abs(a[other] - b[other]) < 0.5
            and abs(c[other] - d[other]) < 0.5
            and abs(a[other] - c[other]) < 0.5
        ):
            low = max(min(a[axis], b[axis]), min(c[axis], d[axis]))
            high = min(max(a[axis], b[axis]), max(c[axis], d[axis]))
            if high - low > 0.5:
                return True
    return False


def _separate(
    plans: dict[str, _Plan],
    routes: dict[str, list[Point]],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
) -> None:
    """Last resort for odd geometry: a flow that still runs along a flow of the same source or
    target tries other bends, depths and side points until it shares no stretch with them."""
    ids = list(plans)

    def mates(flow_id: str, among: Sequence[str]) -> list[str]:
        ends = {plans[flow_id].source, plans[flow_id].target}
        return [o for o in among if o != flow_id and {plans[o].source, plans[o].target} & ends]

    def clashes(flow_id: str, line: list[Point], among: Sequence[str]) -> list[str]:
        return [o for o in mates(flow_id, among) if shared_segment(line, routes[o])]

    def redraw(flow_id: str, among: Sequence[str]) -> bool:
        def score(variant: _Plan) -> int:
            return len(clashes(flow_id, _draw(variant), among))

        near = sorted({x + d for o in mates(flow_id, among) for x, _ in routes[o] for d in (-3, 3)})
        found = _search(plans[flow_id], score, boxes, kinds, near)
        if found is not None:
            plans[flow_id], routes[flow_id] = found, _draw(found)
        return found is not None

    for i, flow_id in enumerate(ids):
        earlier = ids[:i]
        blocking = clashes(flow_id, routes[flow_id], earlier)
        if blocking and not redraw(flow_id, earlier):
            for other in blocking:
                redraw(other, ids[: i + 1])
            if clashes(flow_id, routes[flow_id], earlier):
                redraw(flow_id, earlier)


_SHARES = [k / 12 for k in (6, 4, 8, 2, 10, 3, 9, 5, 7, 1, 11)]


def _search(
    plan: _Plan,
    score: Callable[[_Plan], int],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    near: Sequence[float] = (),
) -> _Plan | None:
    """A variant of `plan` that scores 0 (clashes with nothing): from the plan and from other
    side points, move one bend (or the depth, or a bottom point) at a time while that helps;
    bends are tried at even shares of their stretch and just beside the `near` x positions."""
    for start in _starts(plan, boxes, kinds):
        current, worst = start, score(start)
        for _ in range(3):
            improved = False
            for variant in _knobs(current, boxes, kinds, near):
                value = score(variant)
                if value < worst:
                    current, worst, improved = variant, value, True
                if worst == 0:
                    return current
            if not improved:
                break
    return None


def _starts(plan: _Plan, boxes: Mapping[str, Box], kinds: Mapping[str, str]) -> Iterator[_Plan]:
    yield plan
    if plan.back:
        return
    source, target = boxes[plan.source], boxes[plan.target]
    steps = [k * sign * _PORT_GAP / 2 for k in range(1, 4) for sign in (1, -1)]
    for exit_dy in [0.0, *steps]:
        for entry_dy in [0.0, *steps]:
            yield replace(
                plan,
                exit=_side(source, _shape(kinds, plan.source), +1, _clip(exit_dy, source[3])),
                entry=_side(target, _shape(kinds, plan.target), -1, _clip(entry_dy, target[3])),
                exit_vertical=False,
                entry_vertical=False,
            )


def _knobs(
    plan: _Plan, boxes: Mapping[str, Box], kinds: Mapping[str, str], near: Sequence[float]
) -> Iterator[_Plan]:
    """Variants of `plan` that each change one thing: a bend, the depth of a loop, a point."""
    source, target = boxes[plan.source], boxes[plan.target]
    if plan.back:
        for k in range(1, 9):
            yield replace(plan, depth=plan.depth + k * _LOOP_STEP / 2)
        for k in range(-4, 5):
            dx = k * _PORT_GAP / 2
            shape_s, shape_t = _shape(kinds, plan.source), _shape(kinds, plan.target)
            yield replace(plan, exit=_end(source, shape_s, +1, _clip(dx, source[2])))
            yield replace(plan, entry=_end(target, shape_t, +1, _clip(dx, target[2])))
        return
    first = plan.via[0] if plan.via else plan.entry
    before = plan.via[-1] if plan.via else plan.exit
    stretches = [(plan.exit[0], first[0], True)]
    if plan.via:
        stretches.append((before[0], plan.entry[0], False))
    for low, high, leaving in stretches:
        spots = [low + (high - low) * share for share in _SHARES]
        for x in [*spots, *(x for x in near if low < x < high)]:
            yield replace(plan, exit_bend=x) if leaving else replace(plan, entry_bend=x)
    if len(plan.via) > 1:
        for share in _SHARES:
            yield replace(plan, shift=share - 0.5, middle={})
        for x in near:
            for a, b in pairwise(plan.via):
                if min(a[0], b[0]) < x < max(a[0], b[0]):
                    yield replace(plan, shift=(x - a[0]) / (b[0] - a[0]) - 0.5, middle={})


def _clip(offset: float, size: float) -> float:
    """Keep an offset from a side's middle inside the shape's outline."""
    room = size / 2 * 0.8
    return max(-room, min(room, offset))
