"""Test scenarios: a start input, ordered actions and expected results a draft is played against.

Pure: reading the JSON form (`parse`) names the step of every problem ("actions[3].node: ..."),
and `problems_against` checks that a scenario still fits a document (its nodes exist and are
of the right kind), so a runner fails a stale scenario by name instead of crashing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.process.adhoc import startable
from webapp.process.expressions import check as check_expression

# The end states a scenario may expect; "waiting" and "running" both mean not finished.
STATUSES = ("completed", "failed", "cancelled", "waiting", "running")
ACTIONS = ("complete", "tool", "message", "signal", "timer", "error", "activate")
NAME_LIMIT = 200
ACTION_LIMIT = 500
TOOL_KINDS = ("serviceTask", "sendTask", "messageThrow", "messageEnd")


class ScenarioError(ValueError):
    """A scenario that cannot be read: every problem, each naming its step."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Action:
    """One thing a scenario does: `do` is one of ACTIONS; the other fields as that kind needs."""

    do: str
    node: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    output: Any = None
    error: dict[str, Any] | None = None
    name: str = ""
    key: str = ""
    payload: Any = None
    code: str = ""

    def as_dict(self) -> dict[str, Any]:
        shapes: dict[str, dict[str, Any]] = {
            "complete": {"node": self.node, "data": self.data},
            "tool": {"node": self.node, **({"error": self.error} if self.error else {})},
            "message": {"name": self.name, "key": self.key, "payload": self.payload},
            "signal": {"name": self.name, "payload": self.payload},
            "timer": {"node": self.node},
            "error": {"node": self.node, "code": self.code},
            "activate": {"node": self.node},
        }
        shape = shapes[self.do]
        if self.do == "tool" and not self.error:
            shape["output"] = self.output
        return {"do": self.do, **shape}


@dataclass(frozen=True)
class Expect:
    """What must hold once every action ran."""

    status: str | None = None
    reached: tuple[str, ...] = ()
    not_reached: tuple[str, ...] = ()
    values: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.status:
            out["status"] = self.status
        if self.reached:
            out["reached"] = list(self.reached)
        if self.not_reached:
            out["not_reached"] = list(self.not_reached)
        if self.values:
            out["values"] = dict(self.values)
        return out


@dataclass(frozen=True)
class Scenario:
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    actions: tuple[Action, ...] = ()
    expect: Expect = field(default_factory=Expect)

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "actions": [action.as_dict() for action in self.actions],
            "expect": self.expect.as_dict(),
        }


def _text(data: Mapping[str, Any], key: str, where: str, problems: list[str]) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}.{key}: a non-empty text is required")
        return ""
    return value.strip()


def _object(value: Any, where: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{where}: an object is required, not {type(value).__name__}")
        return {}
    return value


def _node_list(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(f"{where}: a list of node ids is required")
        return ()
    return tuple(value)


def _action(raw: Any, where: str, problems: list[str]) -> Action | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: an object is required")
        return None
    do = raw.get("do")
    if do not in ACTIONS:
        problems.append(f"{where}.do: must be one of {', '.join(ACTIONS)}, not {do!r}")
        return None
    allowed = {
        "complete": {"node", "data"},
        "tool": {"node", "output", "error"},
        "message": {"name", "key", "payload"},
        "signal": {"name", "payload"},
        "timer": {"node"},
        "error": {"node", "code"},
        "activate": {"node"},
    }[do]
    unknown = sorted(set(raw) - allowed - {"do"})
    if unknown:
        problems.append(f"{where}: '{do}' takes no {', '.join(unknown)}")
    if do == "complete":
        node = _text(raw, "node", where, problems)
        return Action(do, node=node, data=_object(raw.get("data"), f"{where}.data", problems))
    if do == "tool":
        node = _text(raw, "node", where, problems)
        error = raw.get("error")
        if error is not None:
            error = _object(error, f"{where}.error", problems)
            _text(error, "code", f"{where}.error", problems)
            if "business" in error and not isinstance(error["business"], bool):
                problems.append(f"{where}.error.business: true or false is required")
            if "output" in raw:
                problems.append(f"{where}: give an output or an error, not both")
        return Action(do, node=node, output=raw.get("output"), error=error or None)
    if do == "message":
        name = _text(raw, "name", where, problems)
        key = raw.get("key", "")
        if not isinstance(key, str | int):
            problems.append(f"{where}.key: a text is required")
            key = ""
        return Action(do, name=name, key=str(key), payload=raw.get("payload"))
    if do == "signal":
        return Action(do, name=_text(raw, "name", where, problems), payload=raw.get("payload"))
    if do in ("timer", "activate"):
        return Action(do, node=_text(raw, "node", where, problems))
    node = _text(raw, "node", where, problems)
    return Action(do, node=node, code=_text(raw, "code", where, problems))


def _expect(raw: Any, problems: list[str]) -> Expect:
    data = _object(raw, "expect", problems)
    unknown = sorted(set(data) - {"status", "reached", "not_reached", "values"})
    if unknown:
        problems.append(f"expect: unknown {', '.join(unknown)}")
    status = data.get("status")
    if status is not None and status not in STATUSES:
        problems.append(f"expect.status: must be one of {', '.join(STATUSES)}, not {status!r}")
        status = None
    values = _object(data.get("values"), "expect.values", problems)
    for expression in values:
        error = check_expression(expression)
        if error is not None:
            problems.append(f"expect.values[{expression!r}]: {error}")
    return Expect(
        status=status,
        reached=_node_list(data.get("reached"), "expect.reached", problems),
        not_reached=_node_list(data.get("not_reached"), "expect.not_reached", problems),
        values=values,
    )


def parse(raw: Any) -> Scenario:
    """Read a scenario from its JSON form; ScenarioError lists every problem with its step."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        raise ScenarioError(["scenario: a JSON object is required"])
    unknown = sorted(set(raw) - {"name", "input", "actions", "expect"})
    if unknown:
        problems.append(f"scenario: unknown {', '.join(unknown)}")
    name = _text(raw, "name", "scenario", problems)
    if len(name) > NAME_LIMIT:
        problems.append(f"scenario.name: at most {NAME_LIMIT} characters")
    data = _object(raw.get("input"), "input", problems)
    raw_actions = raw.get("actions", [])
    actions: list[Action] = []
    if not isinstance(raw_actions, list):
        problems.append("actions: a list is required")
    elif len(raw_actions) > ACTION_LIMIT:
        problems.append(f"actions: at most {ACTION_LIMIT} actions")
    else:
        for index, item in enumerate(raw_actions):
            action = _action(item, f"actions[{index}]", problems)
            if action is not None:
                actions.append(action)
    expect = _expect(raw.get("expect"), problems)
    if problems:
        raise ScenarioError(problems)
    return Scenario(name, data, tuple(actions), expect)


def _has_timer(node: Mapping[str, Any]) -> bool:
    config = node.get("config") or {}
    return node.get("kind") == "timerCatch" or config.get("event") == "timer"


def _node_problem(action: Action, nodes: Mapping[str, Any], startables: list[str]) -> str | None:
    node = nodes.get(action.node)
    kind = node.get("kind") if isinstance(node, dict) else None
    if action.do in ("complete", "error") and kind != "userTask":
        return f"no user task '{action.node}' in this draft"
    if action.do == "tool" and (kind not in TOOL_KINDS or not (node or {}).get("config")):
        return f"no service task '{action.node}' in this draft"
    if action.do == "timer" and (node is None or not _has_timer(node)):
        return f"no timer '{action.node}' in this draft"
    if action.do == "activate" and action.node not in startables:
        return f"no activity '{action.node}' an ad-hoc sub-process of this draft starts"
    return None


def adhoc_activities(document: Mapping[str, Any]) -> list[str]:
    """The activities the draft's ad-hoc sub-processes may start (those without incoming
    flows inside them)."""
    nodes = document.get("nodes") or {}
    flows = document.get("flows") or {}
    targets = frozenset(str(f.get("target")) for f in flows.values() if isinstance(f, dict))
    return [
        node_id
        for scope_id, scope in nodes.items()
        if isinstance(scope, dict) and scope.get("kind") == "adHocSubProcess"
        for node_id in startable(nodes, targets, scope_id)
    ]


def problems_against(scenario: Scenario, document: Mapping[str, Any]) -> list[str]:
    """What no longer fits `document`: actions on nodes it lacks or of another kind, and
    expected nodes it does not have; each names its step. With a call activity, an action on a
    node the draft lacks may answer the called process's wait (the run says when none does)."""
    nodes = document.get("nodes") or {}
    calls = any(isinstance(n, dict) and n.get("kind") == "callActivity" for n in nodes.values())
    startables = adhoc_activities(document)
    problems = []
    for index, action in enumerate(scenario.actions):
        if action.do in ("message", "signal") or (calls and action.node not in nodes):
            continue
        problem = _node_problem(action, nodes, startables)
        if problem:
            problems.append(f"actions[{index}].node: {problem}")
    for where, ids in (
        ("expect.reached", scenario.expect.reached),
        ("expect.not_reached", scenario.expect.not_reached),
    ):
        for node_id in ids:
            if node_id not in nodes:
                problems.append(f"{where}: no node '{node_id}' in this draft")
    return problems


def check(raw: Any, document: Mapping[str, Any]) -> Scenario:
    """Parse and check against the document; ScenarioError names every problem's step."""
    scenario = parse(raw)
    problems = problems_against(scenario, document)
    if problems:
        raise ScenarioError(problems)
    return scenario


def node_count(document: Mapping[str, Any]) -> int:
    """Nodes a scenario can walk (for coverage): every node of the document."""
    return len(document.get("nodes") or {})
