"""Process shapes that stress the auto layout (wide fan-outs, long and crossing flows, loops,
deep nesting, many boundary events), as documents and as BPMN files without diagram data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import quoteattr

MODEL = "http://www.omg.org/spec/BPMN/20100524/MODEL"


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.flows: dict[str, dict[str, Any]] = {}

    def node(self, node_id: str, kind: str, parent: str | None = None, **config: Any) -> str:
        node: dict[str, Any] = {"kind": kind, "title": node_id, "config": config}
        if parent is not None:
            node["parent"] = parent
        self.nodes[node_id] = node
        return node_id

    def flow(self, source: str, target: str) -> None:
        self.flows[f"f{len(self.flows)}"] = {"source": source, "target": target}

    def document(self) -> dict[str, Any]:
        return {"format_version": 1, "nodes": self.nodes, "flows": self.flows}


def fan(n: int, gateway: str = "parallelGateway") -> dict[str, Any]:
    """start -> split -> n user tasks -> join -> end."""
    b = _Builder()
    b.node("start", "startEvent")
    b.node("split", gateway)
    b.node("join", gateway)
    b.node("end", "endEvent")
    b.flow("start", "split")
    for i in range(n):
        b.flow("split", b.node(f"t{i}", "userTask"))
        b.flow(f"t{i}", "join")
    b.flow("join", "end")
    return b.document()


def chain_with_skips(n: int) -> dict[str, Any]:
    """A chain of n tasks; a gateway after the start also has a flow to every one of them, so
    the flows skip ever more layers and cross each other."""
    b = _Builder()
    b.node("start", "startEvent")
    b.node("split", "inclusiveGateway")
    b.flow("start", "split")
    previous = "split"
    for i in range(n):
        b.node(f"t{i}", "userTask")
        b.flow(previous, f"t{i}")
        if i:
            b.flow("split", f"t{i}")
        previous = f"t{i}"
    b.flow(previous, b.node("end", "endEvent"))
    return b.document()


def crossing(n: int) -> dict[str, Any]:
    """Two columns of n/2 tasks wired in reverse order behind a split: every flow crosses."""
    b = _Builder()
    b.node("start", "startEvent")
    b.node("split", "parallelGateway")
    b.flow("start", "split")
    half = max(1, n // 2)
    for i in range(half):
        b.flow("split", b.node(f"a{i}", "userTask"))
    for i in range(half):
        b.flow(f"a{i}", b.node(f"b{half - 1 - i}", "userTask"))
    b.node("join", "parallelGateway")
    for i in range(half):
        b.flow(f"b{i}", "join")
    b.flow("join", b.node("end", "endEvent"))
    return b.document()


def loops(n: int) -> dict[str, Any]:
    """A chain of n tasks, each with a gateway whose second exit goes back to the first task."""
    b = _Builder()
    b.node("start", "startEvent")
    b.flow("start", b.node("t0", "userTask"))
    previous = "t0"
    for i in range(1, n):
        gateway = b.node(f"g{i}", "exclusiveGateway")
        b.flow(previous, gateway)
        b.flow(gateway, "t0")
        previous = b.node(f"t{i}", "userTask")
        b.flow(gateway, previous)
    b.flow(previous, b.node("end", "endEvent"))
    return b.document()


def nested(n: int) -> dict[str, Any]:
    """n sub-processes, each inside the one before: start -> sub-process -> end at every level."""
    b = _Builder()
    parent: str | None = None
    for level in range(n):
        start = b.node(f"s{level}", "startEvent", parent)
        sub = b.node(f"sub{level}", "subProcess", parent)
        end = b.node(f"e{level}", "endEvent", parent)
        b.flow(start, sub)
        b.flow(sub, end)
        parent = sub
    b.flow(b.node("s_in", "startEvent", parent), b.node("e_in", "endEvent", parent))
    return b.document()


def boundaries(n: int) -> dict[str, Any]:
    """One sub-process with n/2 timer boundary events and n/2 tasks, each event to its own end."""
    b = _Builder()
    b.node("start", "startEvent")
    b.node("sub", "subProcess")
    b.node("end", "endEvent")
    b.flow("start", "sub")
    b.flow("sub", "end")
    b.flow(b.node("in_s", "startEvent", "sub"), b.node("in_e", "endEvent", "sub"))
    for i in range(max(1, n // 2)):
        b.node(f"timer{i}", "boundaryEvent", attachedTo="sub", cancel=False, timer="PT1H")
        b.flow(f"timer{i}", b.node(f"late{i}", "userTask"))
        b.flow(f"late{i}", "end")
    return b.document()


SHAPES: dict[str, Callable[[int], dict[str, Any]]] = {
    "parallel fan-out": fan,
    "exclusive fan-out": lambda n: fan(n, "exclusiveGateway"),
    "inclusive fan-out": lambda n: fan(n, "inclusiveGateway"),
    "flows skipping layers": chain_with_skips,
    "crossing flows": crossing,
    "loops back": loops,
    "nested sub-processes": nested,
    "boundary events": boundaries,
}


def bpmn_file(doc: dict[str, Any]) -> str:
    """The document as a BPMN file with no diagram data (sub-processes nested as elements)."""
    kids: dict[str | None, list[str]] = {}
    for node_id, node in doc["nodes"].items():
        kids.setdefault(node.get("parent"), []).append(node_id)
    scope_of = {node_id: node.get("parent") for node_id, node in doc["nodes"].items()}
    flows_in: dict[str | None, list[str]] = {}
    for flow_id, flow in doc["flows"].items():
        flows_in.setdefault(scope_of[flow["source"]], []).append(flow_id)

    depth: dict[str | None, int] = {None: 0}
    for node_id in doc["nodes"]:
        path = [node_id]
        while path[-1] not in depth:
            path.append(scope_of[path[-1]])
        for item in reversed(path[:-1]):
            depth[item] = depth[scope_of[item]] + 1
    body: dict[str | None, str] = {}
    for parent in sorted(kids, key=lambda scope: -depth[scope]):
        parts = []
        for node_id in kids[parent]:
            node = doc["nodes"][node_id]
            kind, config = node["kind"], node["config"]
            attrs = f"id={quoteattr(node_id)} name={quoteattr(node['title'])}"
            inner = body.get(node_id, "")
            if kind == "boundaryEvent":
                attrs += f' attachedToRef="{config["attachedTo"]}" cancelActivity="false"'
                inner = (
                    "<bpmn:timerEventDefinition><bpmn:timeDuration>"
                    f"{config['timer']}</bpmn:timeDuration></bpmn:timerEventDefinition>"
                )
            parts.append(f"<bpmn:{kind} {attrs}>{inner}</bpmn:{kind}>")
        for flow_id in flows_in.get(parent, []):
            flow = doc["flows"][flow_id]
            parts.append(
                f'<bpmn:sequenceFlow id="{flow_id}" sourceRef="{flow["source"]}" '
                f'targetRef="{flow["target"]}"/>'
            )
        body[parent] = "".join(parts)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<bpmn:definitions xmlns:bpmn="{MODEL}" '
        'id="d" targetNamespace="http://example.com">'
        f'<bpmn:process id="p" isExecutable="true">{body.get(None, "")}</bpmn:process>'
        "</bpmn:definitions>"
    )
