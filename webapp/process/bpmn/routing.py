"""Orthogonal routes for sequence flows, each leaving and entering its shapes at its own port.

Pure geometry on boxes (x, y, width, height): used by `layout.auto_layout` and by the BPMN writer
for flows that have no waypoints, and to place flow and node names beside the routes.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from webapp.process.kinds import default_size

Box = tuple[float, float, float, float]
Point = tuple[float, float]

#: How far below the shapes a loop runs, and how far beyond a shape a corner exit must reach.
_CLEAR_Y = 40
_PORT_GAP = 8
_LOOP_STEP = 12
_CLEAR = 4
#: Points (and flows) compared, at most, while `_separate` looks for routes that share no stretch.
_SEPARATE_WORK = 200_000
#: Of that, at most this much for one flow's search, so that a search that finds nothing
#: leaves the rest for moving the flows it runs along instead.
_SEARCH_WORK = 40_000
#: A node with more flows leaving (or entering) than this draws them as one bus.
_BUS_FROM = 24
_CELL = 200
#: Comparisons of loops with loops already placed, at most, when choosing loop depths.
_LOOP_WORK = 500_000
#: Route segments compared, at most, while placing the names of one plane's events and gateways.
_NAME_WORK = 200_000
_MOST_CELLS = 64
#: The biggest cluster of turns ordered by which heights they leave and reach.
_MOST_TURNS = 400


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
    exit_bus: bool = False
    entry_bus: bool = False
    dropped: bool = False


def _bussed(plan: _Plan) -> bool:
    """Tell whether the flow runs in a bus (a crowded fan's shared trunk) at either end."""
    return plan.exit_bus or plan.entry_bus


def route(source: Box, target: Box, others: Sequence[Box] = ()) -> list[dict[str, float]]:
    """Orthogonal waypoints of one flow from the source shape's border to the target shape's.

    A flow going back (right to left) runs below the two shapes and below every box of `others`
    that stands between them, so a loop does not cross the shapes it spans.
    """
    boxes = {f" other {i}": box for i, box in enumerate(others)}
    boxes.update({" source": source, " target": target})
    return route_flows(boxes, {}, {"flow": (" source", " target")})["flow"]


def route_flows(
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    flows: Mapping[str, tuple[str, str]],
    via: Mapping[str, list[Point]] | None = None,
    obstacles: Sequence[Box] = (),
    hosts: Mapping[str, str] | None = None,
) -> dict[str, list[dict[str, float]]]:
    """Orthogonal waypoints for every flow (id -> (source, target)) whose two ends have a box.

    Where several flows leave one node (a gateway's exits) or enter one node (a merge), each gets
    its own port: the one nearest in height runs straight, the farthest above or below leaves from
    the top or bottom corner and bends once toward its target, the others leave from their own
    point on the side and bend in their own column, so no two share a segment (more than
    `_BUS_FROM` run as one bus from the middle of the side instead). A flow going back
    runs below the shapes from its own point on the bottom. `via` gives points a long flow passes;
    a corner route also keeps clear of `obstacles` (the lanes of long flows). A flow from a
    boundary event (`hosts`: event id -> the shape it sits on) leaves from the event's bottom and
    runs below its host before it turns, so it does not read as the host's normal exit. Every
    step is about linear in the number of flows or has a work budget.
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
    leaving: dict[str, list[tuple[str, _Plan]]] = {}
    entering: dict[str, list[tuple[str, _Plan]]] = {}
    for flow_id, plan in plans.items():
        if not plan.back:
            leaving.setdefault(plan.source, []).append((flow_id, plan))
            entering.setdefault(plan.target, []).append((flow_id, plan))
    index = {flow_id: i for i, flow_id in enumerate(plans)}
    shelf = _Shelf([*boxes.values(), *obstacles])
    for outgoing, groups in ((True, leaving), (False, entering)):
        for node_id in boxes:
            group = groups.get(node_id, [])
            _plan_fan(node_id, group, index, boxes, kinds, taken, shelf, outgoing=outgoing)
    _plan_drops(plans, boxes, hosts or {})
    _assign_tracks(plans)
    routes = {flow_id: _draw(plan) for flow_id, plan in plans.items()}
    _separate(plans, routes, boxes, kinds)
    return {
        flow_id: [{"x": number(x), "y": number(y)} for x, y in points]
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
        return (number((ax + bx) / 2 - width / 2), number(top), width, height)
    return (number(ax + 6), number((ay + by) / 2 - height / 2), width, height)


class RouteIndex:
    """The segments of drawn routes, filed by grid cell, to tell quickly whether any comes near
    a box (as `_hits` tells for one segment). It compares at most `_NAME_WORK` segments in all:
    past that, where names go is left to the editor (crowded diagrams stay fast)."""

    def __init__(self, routes: Sequence[Sequence[Mapping[str, float]]]) -> None:
        spans = []
        for points in routes:
            for a, b in pairwise(points):
                left, right = sorted((a["x"], b["x"]))
                low, high = sorted((a["y"], b["y"]))
                spans.append((left, low, right - left, high - low))
        self.shelf = _Shelf(spans)
        self.left = _NAME_WORK

    def meets(self, box: Box) -> bool | None:
        """Whether a segment comes near `box`; None once the work budget is spent."""
        x, y, w, h = box
        near = self.shelf.near((x, y), (x + w, y + h))
        self.left -= len(near)
        if self.left < 0:
            return None
        return any(
            _hits((left, low), (left + width, low + height), box)
            for left, low, width, height in near
        )


def name_bounds(
    box: Box, kind: str, text: str, routes: Sequence[Sequence[Mapping[str, float]]] | RouteIndex
) -> Box | None:
    """Where to put the name of an event or gateway that a route would run through where editors
    put it (centred below the shape): beside that route, or above. None when nothing is in the way
    (editors place it themselves) or the node's name is drawn inside it (tasks). Pass a
    `RouteIndex` when placing many names among the same routes."""
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
    index = routes if isinstance(routes, RouteIndex) else RouteIndex(routes)
    for rank, (left, top) in enumerate(spots):
        spot = (left, top, width, height)
        meets = index.meets(spot)
        if meets is None:
            return None
        if not meets:
            return None if rank == 0 else (number(left), number(top), width, height)
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
    """Flows going back leave and enter on the bottom, each at its own point and depth: the
    shallowest free one below what they span, or (after `_LOOP_WORK` comparisons) below all."""
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
    checks, deepest = 0, -math.inf
    floor = _Floor(list(boxes.values())) if ends else None
    for plan in plans.values():
        if not plan.back or floor is None:
            continue
        left, right = sorted((plan.exit[0], plan.entry[0]))
        low = max(plan.exit[1], plan.entry[1])
        base = max(low, floor.lowest(left - 1, right + 1)) + _CLEAR_Y
        checks += len(placed)
        if checks > _LOOP_WORK:
            depth = max(base, deepest + _LOOP_STEP)
        else:
            blocked = {
                steps
                for a, b, d in placed
                if a < right and b > left
                for steps in (round((d - base) / _LOOP_STEP),)
                if steps >= 0 and abs(base + steps * _LOOP_STEP - d) < _LOOP_STEP / 2
            }
            depth = base + next(k for k in itertools.count() if k not in blocked) * _LOOP_STEP
        deepest = max(deepest, depth)
        placed.append((left, right, depth))
        plan.depth = depth


def _plan_drops(
    plans: Mapping[str, _Plan], boxes: Mapping[str, Box], hosts: Mapping[str, str]
) -> None:
    """Forward flows of a boundary event leave from its bottom, drop below the event and its
    host and, where they must climb to their target, turn only once past the host's right side.
    The events of one host drop to their own depths, the rightmost least deep, so they neither
    share a stretch nor cross."""
    leaving: dict[str, list[_Plan]] = {}
    for plan in plans.values():
        if not plan.back and hosts.get(plan.source) in boxes:
            leaving.setdefault(plan.source, []).append(plan)
    ranks: dict[str, int] = {}
    seen: dict[str, int] = {}
    for event_id in sorted(leaving, key=lambda e: (hosts[e], -boxes[e][0], e)):
        ranks[event_id] = seen.get(hosts[event_id], 0)
        seen[hosts[event_id]] = ranks[event_id] + 1
    for event_id, group in leaving.items():
        box = boxes[event_id]
        hx, hy, hw, hh = boxes[hosts[event_id]]
        floor = max(box[1] + box[3], hy + hh) + _CLEAR_Y / 2 + ranks[event_id] * _LOOP_STEP
        for plan, dx in zip(group, _offsets(len(group), box[2] / 2 - 2), strict=True):
            plan.exit = _end(box, "circle", +1, dx)
            plan.exit_vertical, plan.exit_bend, plan.exit_bus = True, None, False
            plan.dropped = True
            drop = [(plan.exit[0], floor)]
            ahead = plan.via[0] if plan.via else plan.entry
            clear = hx + hw + _CLEAR_Y / 2
            if ahead[1] < floor and plan.exit[0] < clear < ahead[0]:
                drop.append((clear, floor))
            plan.via = [*drop, *plan.via]


class _Floor:
    """The lowest bottom among boxes that reach into a range of x, in logarithmic time: boxes
    sorted by their left side, with a sparse table of running maxima of their bottoms."""

    def __init__(self, boxes: Sequence[Box]) -> None:
        ordered = sorted(boxes)
        self.lefts = [box[0] for box in ordered]
        self.boxes = ordered
        self.widest = max((box[2] for box in ordered), default=0.0)
        self.table = [[box[1] + box[3] for box in ordered]]
        span = 1
        while 2 * span <= len(ordered):
            row = self.table[-1]
            self.table.append([max(row[i], row[i + span]) for i in range(len(row) - span)])
            span *= 2

    def lowest(self, left: float, right: float) -> float:
        """The largest bottom of the boxes with x < right and x + width > left (-inf if none)."""
        found = -math.inf
        start = bisect.bisect_left(self.lefts, left - self.widest)
        inside = bisect.bisect_right(self.lefts, left)
        for x, y, w, h in self.boxes[start:inside]:
            if x < right and x + w > left:
                found = max(found, y + h)
        end = bisect.bisect_left(self.lefts, right)
        if end > inside:
            level = (end - inside).bit_length() - 1
            row = self.table[level]
            found = max(found, row[inside], row[end - (1 << level)])
        return found


def _plan_fan(
    node_id: str,
    group: list[tuple[str, _Plan]],
    index: Mapping[str, int],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    taken: set[tuple[str, str]],
    shelf: _Shelf,
    *,
    outgoing: bool,
) -> None:
    """Give each forward flow leaving (or entering) `node_id` its own port and bend column; a
    group too big for ports that stay apart runs as one bus from the middle of the side."""
    box = boxes[node_id]
    x, y, w, h = box
    cy = y + h / 2
    shape = _shape(kinds, node_id)
    if len(group) < 2:
        return
    if outgoing:
        x0 = x + w
        x1 = min(plan.via[0][0] if plan.via else boxes[plan.target][0] for _, plan in group)
    else:
        x0 = max(plan.via[-1][0] if plan.via else plan.exit[0] for _, plan in group)
        x1 = x
    if len(group) > _BUS_FROM:
        _plan_bus(group, _side(box, shape, +1 if outgoing else -1, 0.0), (x0 + x1) / 2, outgoing)
        return

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
    for side, members, sign in (("top", above, -1), ("bottom", below, +1)):
        if members and (node_id, side) not in taken:
            plan = members[0][1]
            if _corner_ok(plan, box, shape, sign, far_y(plan), shelf, boxes, outgoing):
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
    shelf: _Shelf,
    boxes: Mapping[str, Box],
    outgoing: bool,
) -> bool:
    """Tell whether the flow may use the top/bottom corner: one bend, clear of other shapes."""
    x, y, w, h = box
    cx = x + w / 2
    if (far - (y + h / 2)) * sign <= h / 2 + _CLEAR_Y / 2:
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
    ends = {boxes[plan.source], boxes[plan.target], box}
    for a, b in pairwise(path):
        for other in shelf.near(a, b):
            if other in ends:
                continue
            if _hits(a, b, other):
                return False
    if outgoing:
        plan.exit, plan.exit_vertical = path[0], True
    else:
        plan.entry, plan.entry_vertical = path[-1], True
    return True


def _plan_bus(group: list[tuple[str, _Plan]], port: Point, bend: float, outgoing: bool) -> None:
    """All flows of a crowded fan leave (or enter) at `port` and turn at `bend`: one trunk."""
    for _, plan in group:
        if outgoing:
            plan.exit, plan.exit_bend, plan.exit_bus = port, bend, True
            plan.exit_vertical = False
        else:
            plan.entry, plan.entry_bus = port, True
            plan.entry_vertical = False
            if plan.exit_bend is None or plan.via:
                plan.entry_bend = bend


class _Shelf:
    """Boxes filed by the grid cells they cover, to find those near a segment quickly (a box or
    segment over too many cells, or off the finite plane, is treated as near everything)."""

    def __init__(self, boxes: Sequence[Box]) -> None:
        self.boxes = list(dict.fromkeys(boxes))
        self.cells: dict[tuple[int, int], list[Box]] | None = None
        self.wide: list[Box] = []

    def _file(self) -> dict[tuple[int, int], list[Box]]:
        """File the boxes on first use (many calls never ask)."""
        if self.cells is None:
            self.cells = {}
            for box in self.boxes:
                cells = _cells(box[0], box[1], box[0] + box[2], box[1] + box[3])
                if cells is None:
                    self.wide.append(box)
                for cell in cells or ():
                    self.cells.setdefault(cell, []).append(box)
        return self.cells

    def near(self, a: Point, b: Point) -> list[Box]:
        """Boxes that may come within `_CLEAR` of the segment a-b, each once."""
        filed = self._file()
        cells = _cells(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
        if cells is None:
            return self.boxes
        found = dict.fromkeys(self.wide)
        for cell in cells:
            found.update(dict.fromkeys(filed.get(cell, ())))
        return list(found)


def _cells(left: float, top: float, right: float, bottom: float) -> list[tuple[int, int]] | None:
    """The grid cells within reach of a rectangle, or None when they are too many to list."""
    reach = _CLEAR + 1
    edges = (left - reach, top - reach, right + reach, bottom + reach)
    if not all(math.isfinite(edge) for edge in edges):
        return None
    i0, j0, i1, j1 = (math.floor(edge / _CELL) for edge in edges)
    if (i1 - i0 + 1) * (j1 - j0 + 1) > _MOST_CELLS:
        return None
    return [(i, j) for i in range(i0, i1 + 1) for j in range(j0, j1 + 1)]


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
            bus = (hop == 0 and plan.exit_bus) or (hop == last and plan.entry_bus)
            if not vertical and not bus and abs(a[1] - b[1]) >= 0.01 and b[0] - a[0] > 4:
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
    the planned turn (a cycle is broken at the leftmost planned turn). A cluster too big for
    that goes by the planned turn alone."""
    if len(cluster) > _MOST_TURNS:
        return sorted(range(len(cluster)), key=lambda i: (cluster[i][5], i))
    leavers = sorted((leave[1], j) for j, (_, _, _, leave, _, _) in enumerate(cluster))
    heights = [height for height, _ in leavers]
    waits = [0] * len(cluster)
    frees: dict[int, list[int]] = {j: [] for j in range(len(cluster))}
    for i, (_, _, _, _, arrive, _) in enumerate(cluster):
        low = bisect.bisect_right(heights, arrive[1] - 0.01)
        high = bisect.bisect_left(heights, arrive[1] + 0.01)
        for _, j in leavers[low:high]:
            if j != i:
                waits[i] += 1
                frees[j].append(i)
    ready = [(cluster[i][5], i) for i in range(len(cluster)) if not waits[i]]
    heapq.heapify(ready)
    by_turn = sorted(range(len(cluster)), key=lambda i: (cluster[i][5], i))
    done = [False] * len(cluster)
    order: list[int] = []
    while len(order) < len(cluster):
        if ready:
            _, pick = heapq.heappop(ready)
        else:
            pick = next(i for i in by_turn if not done[i])
        if done[pick]:
            continue
        done[pick] = True
        order.append(pick)
        for i in frees[pick]:
            waits[i] -= 1
            if not waits[i] and not done[i]:
                heapq.heappush(ready, (cluster[i][5], i))
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
    """Tell whether two polylines run along a common stretch (collinear and overlapping).

    Segments of `second` are filed by the whole part of their level (or upright) coordinate, so
    each segment of `first` is compared only with the few that could lie on its line."""
    filed: dict[tuple[int, int], list[tuple[Point, Point]]] = {}
    for c, d in pairwise(second):
        for axis in (0, 1):
            if abs(c[1 - axis] - d[1 - axis]) < 0.5:
                filed.setdefault((axis, math.floor(c[1 - axis])), []).append((c, d))
    if not filed:
        return False
    for a, b in pairwise(first):
        for axis in (0, 1):
            if abs(a[1 - axis] - b[1 - axis]) >= 0.5:
                continue
            level = math.floor(a[1 - axis])
            for key in ((axis, level - 1), (axis, level), (axis, level + 1)):
                for c, d in filed.get(key, ()):
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
    target tries other bends, depths and side points until it shares no stretch with them.

    The search spends at most `_SEPARATE_WORK` (points compared); after that the remaining flows
    keep their planned routes, so a huge or crowded diagram costs bounded time. One flow's search
    spends at most `_SEARCH_WORK` of it, so a search that finds nothing cannot use up what moving
    the flows it runs along (the next step) needs."""
    ids = list(plans)
    order = {flow_id: i for i, flow_id in enumerate(ids)}
    at: dict[str, list[str]] = {}
    for flow_id, plan in plans.items():
        for node_id in dict.fromkeys((plan.source, plan.target)):
            at.setdefault(node_id, []).append(flow_id)
    left = [_SEPARATE_WORK]

    def mates(flow_id: str, before: int) -> list[str]:
        """Flows listed before position `before` that share an end with `flow_id`."""
        plan = plans[flow_id]
        near = dict.fromkeys([*at[plan.source], *at[plan.target]])
        left[0] -= len(near)
        found = [o for o in near if o != flow_id and order[o] < before and not _bussed(plans[o])]
        return sorted(found, key=order.__getitem__)

    def clashes(flow_id: str, line: list[Point], before: int) -> list[str]:
        found = []
        for other in mates(flow_id, before):
            left[0] -= len(line) + len(routes[other])
            if shared_segment(line, routes[other]):
                found.append(other)
        return found

    def redraw(flow_id: str, before: int) -> bool:
        stop = left[0] - _SEARCH_WORK

        def score(variant: _Plan) -> int | None:
            if left[0] <= max(stop, 0):
                return None
            return len(clashes(flow_id, _draw(variant), before))

        near = sorted(
            {x + d for o in mates(flow_id, before) for x, _ in routes[o] for d in (-3, 3)}
        )
        found = _search(plans[flow_id], score, boxes, kinds, near)
        if found is not None:
            plans[flow_id], routes[flow_id] = found, _draw(found)
        return found is not None

    for i, flow_id in enumerate(ids):
        if left[0] <= 0:
            return
        if _bussed(plans[flow_id]):
            continue
        blocking = clashes(flow_id, routes[flow_id], i)
        if blocking and not redraw(flow_id, i):
            for other in blocking:
                redraw(other, i + 1)
            if clashes(flow_id, routes[flow_id], i):
                redraw(flow_id, i)


_SHARES = [k / 12 for k in (6, 4, 8, 2, 10, 3, 9, 5, 7, 1, 11)]


def _search(
    plan: _Plan,
    score: Callable[[_Plan], int | None],
    boxes: Mapping[str, Box],
    kinds: Mapping[str, str],
    near: Sequence[float] = (),
) -> _Plan | None:
    """A variant of `plan` that scores 0 (clashes with nothing): from the plan and from other
    side points, move one bend (or the depth, or a bottom point) at a time while that helps;
    bends are tried at even shares of their stretch and just beside the `near` x positions.
    A score of None (the work budget is spent) ends the search."""
    for start in _starts(plan, boxes, kinds):
        current, worst = start, score(start)
        if worst is None:
            return None
        for _ in range(3):
            improved = False
            for variant in _knobs(current, boxes, kinds, near):
                value = score(variant)
                if value is None:
                    return None
                if value < worst:
                    current, worst, improved = variant, value, True
                if worst == 0:
                    return current
            if not improved:
                break
    return None


def _starts(plan: _Plan, boxes: Mapping[str, Box], kinds: Mapping[str, str]) -> Iterator[_Plan]:
    yield plan
    if plan.back or plan.dropped:
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


def number(value: float) -> float:
    """A coordinate as written: an int when whole, else rounded to 2 places."""
    return int(value) if float(value).is_integer() else round(value, 2)
