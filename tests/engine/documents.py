"""Process documents for engine tests and the throughput benchmark (no pytest needed here)."""

from __future__ import annotations

import itertools
from typing import Any


def node(kind: str, title: str = "", **config: Any) -> dict[str, Any]:
    return {"kind": kind, "title": title, "config": config}


def flow(source: str, target: str, condition: str | None = None, default: bool = False) -> dict:
    return {"source": source, "target": target, "condition": condition, "default": default}


def document(nodes: dict[str, dict], flows: dict[str, dict], key: str = "") -> dict[str, Any]:
    """A process document with nodes laid out left to right in the given order."""
    placed = {
        node_id: {**spec, "position": {"x": 100 + 150 * index, "y": 100}}
        for index, (node_id, spec) in enumerate(nodes.items())
    }
    return {"format_version": 1, "key": key, "name": key, "nodes": placed, "flows": flows}


def chain(*ids_and_nodes: tuple[str, dict]) -> dict[str, Any]:
    """start -> the given nodes in order -> end."""
    nodes = {"start": node("startEvent"), **dict(ids_and_nodes), "end": node("endEvent")}
    order = list(nodes)
    flows = {f"f{i}": flow(a, b) for i, (a, b) in enumerate(itertools.pairwise(order), start=1)}
    return document(nodes, flows)


def sample_document() -> dict[str, Any]:
    """The benchmark's shape: tool -> exclusive gateway -> parallel split into two tools -> join."""
    nodes = {
        "start": node("startEvent", "Start"),
        "check": node(
            "serviceTask", "Check", tool="noop", inputs={"amount": "$input.amount"}, saveTo="check"
        ),
        "route": node("exclusiveGateway", "Route"),
        "split": node("parallelGateway", "Split"),
        "left": node("serviceTask", "Left", tool="noop", inputs={"side": "'left'"}),
        "right": node("serviceTask", "Right", tool="noop", inputs={"side": "'right'"}),
        "join": node("parallelGateway", "Join"),
        "end": node("endEvent", "Done"),
        "small": node("endEvent", "Small"),
    }
    flows = {
        "f1": flow("start", "check"),
        "f2": flow("check", "route"),
        "big": flow("route", "split", "$vars.check.amount > 100"),
        "other": flow("route", "small", default=True),
        "f3": flow("split", "left"),
        "f4": flow("split", "right"),
        "f5": flow("left", "join"),
        "f6": flow("right", "join"),
        "f7": flow("join", "end"),
    }
    return document(nodes, flows)


def parallel_join(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """start -> split -> the service tasks `a` and `b` in parallel -> join -> noop -> end."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "a": a,
        "b": b,
        "join": node("parallelGateway"),
        "after": node("serviceTask", tool="noop"),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "a"),
        "f3": flow("split", "b"),
        "f4": flow("a", "join"),
        "f5": flow("b", "join"),
        "f6": flow("join", "after"),
        "f7": flow("after", "end"),
    }
    return document(nodes, flows)
