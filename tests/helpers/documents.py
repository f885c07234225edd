"""Process documents the engine, page and browser tests run: structured, gateway, signal and
error-reporting examples, and the builders they share."""

from __future__ import annotations

import copy
import itertools
from typing import Any

from tests.helpers.bpmn import structured_document
from webapp.process.bpmn import export_bpmn


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


CLERK = {"type": "role", "value": "approver"}


def inside(parent: str, kind: str, title: str = "", **config) -> dict:
    return {**node(kind, title, **config), "parent": parent}


def wire(*ids: str) -> dict[str, dict]:
    return {f"w_{a}_{b}": flow(a, b) for a, b in itertools.pairwise(ids)}


def catcher(name: str = "go") -> dict:
    return chain(("wait", node("signalCatch", signal=name, saveTo="got")))


NOOP = {"tool": "noop", "inputs": {}}


def task(title: str, **config: Any) -> dict[str, Any]:
    return node("userTask", title, assignee=CLERK, **config)


def diamond(
    branches: dict[str, dict], *, default: bool = False, conditions: bool = True
) -> dict[str, Any]:
    """start -> inclusive split -> one branch per entry (flow `to_<b>`, condition `$input.<b>`)
    -> inclusive join (flow `from_<b>`) -> end; `default` adds a default branch `d`."""
    nodes = {"start": node("startEvent"), "split": node("inclusiveGateway", "Split")}
    flows = {"f0": flow("start", "split")}
    for name, spec in branches.items():
        nodes[name] = spec
        flows[f"to_{name}"] = flow("split", name, f"$input.{name}" if conditions else None)
        flows[f"from_{name}"] = flow(name, "join")
    if default:
        nodes["d"] = node("serviceTask", **NOOP)
        flows["to_d"] = flow("split", "d", default=True)
        flows["from_d"] = flow("d", "join")
    nodes["join"] = node("inclusiveGateway", "Join")
    nodes["end"] = node("endEvent")
    flows["f9"] = flow("join", "end")
    return document(nodes, flows)


PAID = {"message": "paid", "correlationKey": "$input.order", "saveTo": "payment"}


def gateway_nodes(prefix: str = "", parent: str | None = None, paid_kind: str = "messageCatch"):
    """gw -> paid (a message catch or receive task) -> paid_end; gw -> late (timer) -> late_end."""
    where = {"parent": parent} if parent else {}
    nodes = {
        f"{prefix}gw": {**node("eventBasedGateway", "Wait"), **where},
        f"{prefix}paid": {**node(paid_kind, "Paid", **PAID), **where},
        f"{prefix}late": {**node("timerCatch", "Late", duration="PT2H"), **where},
        f"{prefix}paid_end": {**node("endEvent"), **where},
        f"{prefix}late_end": {**node("endEvent"), **where},
    }
    flows = {
        f"{prefix}g_paid": flow(f"{prefix}gw", f"{prefix}paid"),
        f"{prefix}g_late": flow(f"{prefix}gw", f"{prefix}late"),
        f"{prefix}p_end": flow(f"{prefix}paid", f"{prefix}paid_end"),
        f"{prefix}l_end": flow(f"{prefix}late", f"{prefix}late_end"),
    }
    return nodes, flows


def simple(paid_kind: str = "messageCatch") -> dict[str, Any]:
    nodes, flows = gateway_nodes(paid_kind=paid_kind)
    return document({"start": node("startEvent"), **nodes}, {"f0": flow("start", "gw"), **flows})


def placed(kind: str, x: float, y: float, **extra) -> dict:
    """A node of `kind` at (x, y), as the designer stores one."""
    return {"kind": kind, "position": {"x": x, "y": y}, **extra}


def gateway_document() -> dict:
    """start -> gateway -> an end event right after it, as bpmn-js's own append leaves it."""
    return {
        "format_version": 1,
        "nodes": {
            "start": placed("startEvent", 100, 122),
            "ok": placed("exclusiveGateway", 180, 115, title="OK?"),
            "done": placed("endEvent", 280, 122),
        },
        "flows": {
            "f1": {"source": "start", "target": "ok"},
            "f2": {"source": "ok", "target": "done"},
        },
    }


def payable_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "pay": node("userTask", "Pay invoice", assignee=CLERK),
        "done": node("endEvent"),
        "unpaid": {
            **node("boundaryEvent", "Amount unclear", attachedTo="pay", event="error"),
            "config": {"attachedTo": "pay", "event": "error", "code": "unclear"},
        },
        "refused": node("endEvent"),
        "ask": {
            **node("boundaryEvent", "Ask the sender"),
            "config": {
                "attachedTo": "pay",
                "event": "escalation",
                "code": "sender",
                "interrupting": False,
            },
        },
        "clarify": node("userTask", "Clarify", assignee=CLERK),
        "clarified": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "pay"),
        "f2": flow("pay", "done"),
        "f3": flow("unpaid", "refused"),
        "f4": flow("ask", "clarify"),
        "f5": flow("clarify", "clarified"),
    }
    return document(nodes, flows)


def nested_document() -> dict:
    """ "Check offer" inside the sub-process "Review": the task itself catches escalation
    "ask"; the sub-process's boundary catches error "invalid" and every other error (a
    catch-all), and an event sub-process of the process catches escalation "late". The
    sub-process's own "ask" catcher is never reached: the task's catches it first."""

    def inner(spec: dict) -> dict:
        return {**spec, "parent": "review"}

    nodes = {
        "start": node("startEvent"),
        "review": node("subProcess", "Review"),
        "r_start": inner(node("startEvent")),
        "check": inner(node("userTask", "Check offer", assignee=CLERK)),
        "r_end": inner(node("endEvent")),
        "asked": inner(
            {
                **node("boundaryEvent", "Ask the vendor"),
                "config": {
                    "attachedTo": "check",
                    "event": "escalation",
                    "code": "ask",
                    "interrupting": False,
                },
            }
        ),
        "asked_end": inner(node("endEvent")),
        "done": node("endEvent"),
        "invalid": {
            **node("boundaryEvent", "Offer invalid"),
            "config": {"attachedTo": "review", "event": "error", "code": "invalid"},
        },
        "anything": {
            **node("boundaryEvent", "Review failed"),
            "config": {"attachedTo": "review", "event": "error"},
        },
        "shadowed": {
            **node("boundaryEvent", "Never reached"),
            "config": {"attachedTo": "review", "event": "escalation", "code": "ask"},
        },
        "invalid_end": node("endEvent"),
        "anything_end": node("endEvent"),
        "shadowed_end": node("endEvent"),
        "late": node("eventSubProcess", "Chase the offer"),
        "late_start": {
            **node("startEvent", "Offer late"),
            "parent": "late",
            "config": {"event": "escalation", "code": "late", "interrupting": False},
        },
        "late_end": {**node("endEvent"), "parent": "late"},
    }
    flows = {
        "f1": flow("start", "review"),
        "f2": flow("review", "done"),
        "f3": flow("r_start", "check"),
        "f4": flow("check", "r_end"),
        "f5": flow("asked", "asked_end"),
        "f6": flow("invalid", "invalid_end"),
        "f7": flow("anything", "anything_end"),
        "f8": flow("shadowed", "shadowed_end"),
        "f9": flow("late_start", "late_end"),
    }
    return document(nodes, flows)


def doc_without_calls() -> dict:
    doc = structured_document()
    doc["nodes"]["ot_end"]["config"]["code"] = "LATE"
    doc["nodes"]["p_task"]["config"].update(tool="noop", inputs={})
    doc["nodes"]["call"] = {"kind": "userTask", "title": "Ship",
                            "config": {"assignee": {"type": "role", "value": "clerk"}}}  # fmt: skip
    doc["nodes"]["cancelled"]["config"]["attachedTo"] = "call"
    return doc


def wire_pairs(*ids: str) -> dict[str, dict]:
    return {f"{a}__{b}": flow(a, b) for a, b in itertools.pairwise(ids)}


ALICE = {"type": "user", "value": "alice"}


def caller_doc() -> dict:
    nodes = {
        "start": node("startEvent"),
        "call": node("callActivity", "Check supplier", process="child", saveTo="result"),
        "end": node("endEvent"),
    }
    return document(nodes, wire_pairs("start", "call", "end"))


def child_doc(work: dict | None = None) -> dict:
    work = work or node("userTask", "Confirm", assignee=ALICE)
    nodes = {"start": node("startEvent"), "work": work, "end": node("endEvent")}
    return document(nodes, wire_pairs("start", "work", "end"))


FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True, "min": 1},
        {
            "key": "kind",
            "label": "Kind",
            "type": "select",
            "options": [{"value": "travel", "label": "Travel"}, {"value": "food", "label": "Food"}],
        },
        {"key": "venue", "label": "Venue", "type": "text", "visibleIf": "$form.kind == 'food'"},
    ]
}


def waiting_doc(assignee: str = "alice") -> dict[str, Any]:
    """start -> a user task for `assignee` -> end: instances wait with an open task."""
    return chain(
        ("review", node("userTask", "Review", assignee={"type": "user", "value": assignee}))
    )


def failing_doc() -> dict[str, Any]:
    """start -> the built-in `fail` tool without retries -> end: instances fail at `charge`."""
    return chain(("charge", node("serviceTask", "Charge", tool="fail", retries=0,
                                 inputs={"message": "'card declined'"})))  # fmt: skip


def flaky_doc(name: str, fail_times: int) -> dict[str, Any]:
    """A tool that fails its first `fail_times` calls (across instances), then succeeds."""
    inputs = {"name": repr(name), "fail_times": str(fail_times)}
    return chain(("call", node("serviceTask", "Call", tool="test.flaky", retries=0, inputs=inputs)))


def gate_doc() -> dict[str, Any]:
    """Saves `$vars.check` = {ok: $input.ok}, then a gateway fails (no branch) unless check.ok:
    fixed by setting the variable `check` and retrying. Run its jobs with `drain`."""
    nodes = {
        "start": node("startEvent", "Start"),
        "set": node("serviceTask", "Check", tool="vars.set", retries=0, saveTo="check",
                    inputs={"ok": "$input.ok == true"}),
        "gate": node("exclusiveGateway", "Fixed?"),
        "end": node("endEvent", "Done"),
    }  # fmt: skip
    flows = {
        "f1": flow("start", "set"),
        "f2": flow("set", "gate"),
        "ok": flow("gate", "end", "$vars.check.ok == true"),
    }
    return document(nodes, flows)


USER_TASK = {
    "assignee": {"type": "user", "value": "alice"},
    "form": {"fields": [{"key": "approved", "label": "Approve?", "type": "boolean"}]},
    "saveTo": "review",
}


def approval_document(**changes: Any) -> dict[str, Any]:
    """start -> review (user task) -> gateway -> ok / rejected, with a condition and a default."""
    doc = {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent", "title": "Start", "position": {"x": 100, "y": 100}},
            "review": {
                "kind": "userTask",
                "title": "Review",
                "config": USER_TASK,
                "position": {"x": 200, "y": 78},
            },
            "ok": {"kind": "exclusiveGateway", "title": "OK?", "position": {"x": 360, "y": 93}},
            "done": {"kind": "endEvent", "title": "Done", "position": {"x": 480, "y": 100}},
            "rejected": {"kind": "endEvent", "title": "Rejected", "position": {"x": 480, "y": 200}},
        },
        "flows": {
            "f1": {"source": "start", "target": "review"},
            "f2": {"source": "review", "target": "ok"},
            "f3": {"source": "ok", "target": "done", "condition": "$vars.review.approved == true"},
            "f4": {"source": "ok", "target": "rejected", "default": True},
        },
    }
    doc.update(changes)
    return copy.deepcopy(doc)


def xml_of(doc: dict[str, Any]) -> str:
    return export_bpmn(doc)


def sub_chain(sub: str, *inner: tuple[str, dict]) -> dict[str, dict]:
    """The nodes of a sub-process `sub`: its start, the given nodes, its end (flows by `wire`)."""
    nodes = {f"{sub}_start": inside(sub, "startEvent")}
    for node_id, spec in inner:
        nodes[node_id] = {**spec, "parent": sub}
    nodes[f"{sub}_end"] = inside(sub, "endEvent")
    return nodes
