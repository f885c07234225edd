"""Small documents for validate(): nodes, tasks, flows and reading the problems found."""

from __future__ import annotations

from typing import Any

from webapp.process.tools import ToolInput, ToolSpec
from webapp.process.validation import Problem

ASSIGNEE = {"type": "user", "value": "alice"}


TOOLS = {
    "mail": ToolSpec("mail", inputs=(ToolInput("to"), ToolInput("cc", required=False))),
}


def node(kind: str, title: str = "", **config: Any) -> dict[str, Any]:
    return {"kind": kind, "title": title, "config": config}


def user(title: str = "", **config: Any) -> dict[str, Any]:
    config.setdefault("assignee", ASSIGNEE)
    return node("userTask", title, **config)


def make(nodes: dict[str, Any], *flows: tuple) -> dict[str, Any]:
    """Build a document; a node given as a kind string gets an empty config (tasks: assignee)."""
    built = {}
    for node_id, spec in nodes.items():
        if spec == "userTask":
            spec = user()
        built[node_id] = node(spec) if isinstance(spec, str) else spec
    flow_map = {}
    for i, flow in enumerate(flows, 1):
        source, target, *extra = flow
        flow_map[f"f{i}"] = {"source": source, "target": target, **(extra[0] if extra else {})}
    return {"format_version": 1, "nodes": built, "flows": flow_map}


def linear(task: dict[str, Any] | None = None) -> dict[str, Any]:
    return make(
        {"start": "startEvent", "task": task or user("Review"), "end": "endEvent"},
        ("start", "task"),
        ("task", "end"),
    )


def found(problems: list[Problem]) -> set[tuple[str, str | None]]:
    return {(p.code, p.element_id) for p in problems}


def only(problems: list[Problem], code: str) -> Problem:
    matches = [p for p in problems if p.code == code]
    assert len(matches) == 1, problems
    return matches[0]
