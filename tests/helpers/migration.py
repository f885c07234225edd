"""Versions of one process for migration tests and the benchmark: v1 waits at a user task, a
timer or a tool (by `$input.path`); `second_version` adds a task after each, so an instance that
finishes its wait shows which version it ran on."""

from __future__ import annotations

import copy
from typing import Any

from tests.helpers.documents import document, flow, node

FORM = {"fields": [{"key": "approved", "label": "Approve?", "type": "boolean"}]}


def first_version() -> dict[str, Any]:
    nodes = {
        "start": node("startEvent", "Start"),
        "route": node("exclusiveGateway", "Route"),
        "review": node(
            "userTask", "Review", assignee={"type": "user", "value": "alice"}, form=FORM
        ),
        "wait": node("timerCatch", "Wait", duration="PT1H"),
        "call": node("serviceTask", "Call", tool="noop", inputs={}),
        "end": node("endEvent", "Done"),
    }
    flows = {
        "f1": flow("start", "route"),
        "to_review": flow("route", "review", "$input.path == 'task'"),
        "to_wait": flow("route", "wait", "$input.path == 'timer'"),
        "to_call": flow("route", "call", default=True),
        "f2": flow("review", "end"),
        "f3": flow("wait", "end"),
        "f4": flow("call", "end"),
    }
    return document(nodes, flows)


def second_version(review: str = "review") -> dict[str, Any]:
    """v1 with a task 'Check' for bob before the end; `review` renames the user task's id (the
    old one is then removed) and its title is 'Review again' with one more form field."""
    doc = copy.deepcopy(first_version())
    nodes, flows = doc["nodes"], doc["flows"]
    task = nodes.pop("review")
    task["title"] = "Review again"
    task["config"]["form"] = {
        "fields": [*FORM["fields"], {"key": "note", "label": "Note", "type": "text"}]
    }
    nodes[review] = task
    nodes["check"] = {
        **node("userTask", "Check", assignee={"type": "user", "value": "bob"}),
        "position": {"x": 900, "y": 250},
    }
    flows["to_review"]["target"] = review
    flows["f2"] = flow(review, "check")
    flows["f3"] = flow("wait", "check")
    flows["f4"] = flow("call", "check")
    flows["f5"] = flow("check", "end")
    return doc


def structured_version(collection: str = "$input.people", title: str = "Vote") -> dict[str, Any]:
    """start -> sub-process 'Round' holding a multi-instance user task (one per person in
    `collection`, assigned by `$item`) -> end."""
    vote = node(
        "userTask", title, assignee={"type": "expression", "value": "$item"},
        multiInstance={"collection": collection},
    )  # fmt: skip
    nodes = {
        "start": node("startEvent", "Start"),
        "round": node("subProcess", "Round"),
        "round_start": {**node("startEvent"), "parent": "round"},
        "vote": {**vote, "parent": "round"},
        "round_end": {**node("endEvent"), "parent": "round"},
        "end": node("endEvent", "Done"),
    }
    flows = {
        "f1": flow("start", "round"),
        "f2": flow("round", "end"),
        "g1": flow("round_start", "vote"),
        "g2": flow("vote", "round_end"),
    }
    return document(nodes, flows)
