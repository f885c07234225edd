"""Automatic layered layout: pure, left to right, start first, no overlapping shapes."""

from __future__ import annotations

import copy
import subprocess
import sys
from itertools import combinations, pairwise
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from webapp.process.bpmn import auto_layout
from webapp.process.bpmn.layout import COLUMN, node_box, route

ROOT = Path(__file__).resolve().parents[2]


def graph(edges: list[tuple[str, str]], kinds: dict[str, str] | None = None) -> dict[str, Any]:
    names = list(dict.fromkeys([n for edge in edges for n in edge]))
    kinds = kinds or {}
    return {
        "format_version": 1,
        "nodes": {n: {"kind": kinds.get(n, "userTask"), "title": n, "config": {}} for n in names},
        "flows": {
            f"f{i}": {"source": s, "target": t, "waypoints": [{"x": 0, "y": 0}, {"x": 1, "y": 1}]}
            for i, (s, t) in enumerate(edges)
        },
    }


def assert_no_overlap(doc: dict[str, Any]) -> None:
    boxes = {node_id: node_box(node) for node_id, node in doc["nodes"].items()}
    assert all(boxes.values())
    for (a, box_a), (b, box_b) in combinations(boxes.items(), 2):
        ax, ay, aw, ah = box_a  # type: ignore[misc]
        bx, by, bw, bh = box_b  # type: ignore[misc]
        apart = ax + aw <= bx or bx + bw <= ax or ay + ah <= by or by + bh <= ay
        assert apart, f"{a} overlaps {b}"


PROCESS = graph(
    [("start", "check"), ("check", "gw"), ("gw", "a"), ("gw", "b"), ("a", "join"),
     ("b", "join"), ("join", "end"), ("b", "check")],
    {"start": "startEvent", "gw": "exclusiveGateway", "join": "exclusiveGateway",
     "end": "endEvent"},
)  # fmt: skip


def test_layout_is_pure_and_deterministic() -> None:
    before = copy.deepcopy(PROCESS)
    first = auto_layout(PROCESS)
    assert before == PROCESS
    assert auto_layout(PROCESS) == first


def test_layers_run_left_to_right_from_the_start() -> None:
    doc = auto_layout(PROCESS)
    x = {node_id: node["position"]["x"] for node_id, node in doc["nodes"].items()}
    assert x["start"] < min(v for k, v in x.items() if k != "start")
    assert x["start"] < x["check"] < x["gw"] < x["a"] == x["b"] < x["join"] < x["end"]
    centre = {k: n["position"]["x"] + n["position"]["width"] / 2 for k, n in doc["nodes"].items()}
    assert centre["check"] - centre["start"] == COLUMN
    assert_no_overlap(doc)


def test_layout_sets_sizes_and_clears_waypoints() -> None:
    doc = auto_layout(PROCESS)
    assert doc["nodes"]["start"]["position"]["width"] == 36
    assert doc["nodes"]["gw"]["position"]["width"] == 50
    assert doc["nodes"]["a"]["position"]["height"] == 80
    assert all(flow["waypoints"] == [] for flow in doc["flows"].values())


def test_barycenter_keeps_branches_apart() -> None:
    doc = auto_layout(
        graph([("s", "g"), ("g", "a"), ("g", "b"), ("b", "d"), ("a", "c"), ("c", "e"), ("d", "e")])
    )
    y = {node_id: node["position"]["y"] for node_id, node in doc["nodes"].items()}
    assert (y["a"] < y["b"]) == (y["c"] < y["d"])


def test_big_shapes_do_not_overlap() -> None:
    doc = graph([("s", "a"), ("s", "b"), ("a", "e"), ("b", "e")])
    doc["nodes"]["a"]["position"] = {"x": 0, "y": 0, "width": 400, "height": 300}
    assert_no_overlap(auto_layout(doc))


def test_empty_and_disconnected_documents() -> None:
    assert auto_layout({"nodes": {}, "flows": {}}) == {"nodes": {}, "flows": {}}
    doc = {"nodes": {"a": {"kind": "endEvent"}, "b": {"kind": "startEvent"}}, "flows": {}}
    assert_no_overlap(auto_layout(doc))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=30))
def test_random_graphs_never_overlap_and_start_is_leftmost(pairs: list[tuple[int, int]]) -> None:
    edges = [("start", "n0")] + [(f"n{a}", f"n{b}") for a, b in pairs]
    doc = auto_layout(graph(edges, {"start": "startEvent"}))
    assert_no_overlap(doc)
    xs = [n["position"]["x"] for k, n in doc["nodes"].items() if k != "start"]
    assert doc["nodes"]["start"]["position"]["x"] < min(xs)


def test_routes_start_and_end_on_shape_borders() -> None:
    forward = route((0, 0, 100, 80), (200, 100, 36, 36))
    assert forward[0] == {"x": 100, "y": 40} and forward[-1] == {"x": 200, "y": 118}
    assert all(a["x"] == b["x"] or a["y"] == b["y"] for a, b in pairwise(forward))
    straight = route((0, 0, 100, 80), (200, 15, 50, 50))
    assert straight == [{"x": 100, "y": 40}, {"x": 200, "y": 40}]
    back = route((200, 0, 100, 80), (0, 0, 100, 80))
    assert back[0] == {"x": 250, "y": 80} and back[-1] == {"x": 50, "y": 80}


def test_a_flow_that_skips_layers_gets_its_own_lane() -> None:
    """The onboarding shape: a task in parallel with a longer branch, joined later."""
    doc = auto_layout(
        graph(
            [("start", "split"), ("split", "call"), ("split", "wait"), ("wait", "account"),
             ("call", "join"), ("account", "join"), ("join", "end")],
            {"start": "startEvent", "split": "parallelGateway", "join": "parallelGateway",
             "wait": "timerCatch", "end": "endEvent"},
        )
    )  # fmt: skip
    assert_no_overlap(doc)
    long_flow = next(f for f in doc["flows"].values() if f["source"] == "call")
    points = long_flow["waypoints"]
    assert len(points) >= 2
    assert all(a["x"] == b["x"] or a["y"] == b["y"] for a, b in pairwise(points)), "orthogonal"
    call, join = node_box(doc["nodes"]["call"]), node_box(doc["nodes"]["join"])
    assert points[0]["x"] == call[0] + call[2] and points[-1]["x"] == join[0]
    for node_id, node in doc["nodes"].items():
        if node_id in ("call", "join"):
            continue
        x, y, w, h = node_box(node)
        for a, b in pairwise(points):
            left, right = sorted((a["x"], b["x"]))
            low, high = sorted((a["y"], b["y"]))
            crosses = left < x + w and right > x and low < y + h and high > y
            assert not crosses, f"the call's flow runs through {node_id}"
    short = [f for f in doc["flows"].values() if f["source"] != "call"]
    assert all(f["waypoints"] == [] for f in short), "neighbouring layers: the writer routes them"


def test_the_layout_does_not_depend_on_string_hashing() -> None:
    script = (
        "import json; from webapp.process.bpmn import auto_layout; "
        "from tests.process.test_bpmn_layout import PROCESS, graph; "
        "doc = graph([('s','g'),('g','a'),('g','b'),('g','c'),('a','j'),('c','j'),('b','x'),"
        "('x','j'),('j','e')], {'s': 'startEvent'}); "
        "print(json.dumps(auto_layout(doc), sort_keys=True))"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            cwd=ROOT,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(runs) == 1


def test_a_flow_going_back_runs_below_the_shapes_it_spans() -> None:
    source, target = (400, 0, 100, 80), (0, 0, 100, 80)
    between = (200, 60, 100, 80)  # lower than both ends
    points = route(source, target, [source, target, between])
    assert points[1]["y"] > between[1] + between[3], "below the shape in between"
    assert route(source, target)[1]["y"] == 80 + 40, "without others: just below the two ends"
