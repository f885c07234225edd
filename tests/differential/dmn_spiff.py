"""SpiffWorkflow's side of the DMN differential tests: its own parser and engine on a DMN file.

Spiff runs every entry as Python (``Decimal`` and ``datetime`` available, as its tests set up)
and knows only UNIQUE (as first match) and COLLECT; ``matches`` therefore asks it for every
matching rule, whatever the table's hit policy, so the test can apply DMN 1.3's policy to them.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from lxml import etree
from SpiffWorkflow.bpmn.parser.node_parser import DEFAULT_NSMAP
from SpiffWorkflow.bpmn.script_engine.python_engine import PythonScriptEngine
from SpiffWorkflow.bpmn.script_engine.python_environment import TaskDataEnvironment
from SpiffWorkflow.dmn.engine.DMNEngine import DMNEngine
from SpiffWorkflow.dmn.parser.DMNParser import DMNParser

_ENGINE = PythonScriptEngine(
    environment=TaskDataEnvironment({"Decimal": Decimal, "datetime": datetime})
)


@dataclass
class _Spec:
    file: str = "differential.dmn"
    name: str = "differential"
    task_specs: dict | None = None


class _Workflow:
    def __init__(self) -> None:
        self.script_engine = _ENGINE
        self.parent = None
        self.spec = _Spec()
        self.top_workflow = self


@dataclass
class _TaskSpec:
    name: str = "decision"
    bpmn_name: str = "decision"


class _Task:
    """The little of a task Spiff's DMN engine reads: data, its workflow's script engine."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.workflow = _Workflow()
        self.task_spec = _TaskSpec()


def table(xml: bytes | str):
    """Spiff's decision table of a one-decision DMN file."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    nsmap = {**DEFAULT_NSMAP, **root.nsmap}
    if None in nsmap:
        nsmap["dmn"] = nsmap.pop(None)
    parser = DMNParser(None, root, nsmap)
    parser.parse()
    return parser.decision.decisionTables[0]


def matches(xml: bytes | str, data: dict[str, Any]) -> tuple[list[int], list[dict[str, Any]]]:
    """Every rule Spiff matches (1-based) and each one's outputs by output name or label.

    Spiff evaluates each output entry; its nesting of a dotted output name (``item.y`` becomes
    ``{"item": {"y": ...}}``) is left out, as Flowdesk keeps the name as it is (README).
    """
    decision_table = table(xml)
    decision_table.hit_policy = "RULE ORDER"  # not UNIQUE: Spiff then keeps every match
    task = _Task(dict(data))
    rules = DMNEngine(decision_table).decide(task)
    outputs = [
        {
            entry.output.name or entry.output.label: (
                _ENGINE.evaluate(task, entry.text) if entry.text else ""
            )
            for entry in rule.outputEntries
        }
        for rule in rules
    ]
    return [rule.row_number for rule in rules], outputs


def result(xml: bytes | str, data: dict[str, Any]) -> dict[str, Any]:
    """Spiff's own result: the first match's outputs, or for COLLECT a list per output."""
    task = _Task(dict(data))
    return dict(DMNEngine(table(xml)).result(task))


def first_description(xml: bytes | str, data: dict[str, Any]) -> str | None:
    """The description of the rule Spiff's own tests look at (the first match)."""
    decision_table = table(xml)
    task = _Task(dict(data))
    rules = DMNEngine(decision_table).decide(task)
    return rules[0].description if rules else None


def spec_result(
    policy: str,
    aggregation: str | None,
    allowed: dict[str, list[Any]],
    matched: list[int],
    outputs: list[dict[str, Any]],
) -> tuple[str, Any]:
    """DMN 1.3's result (8.2.11) for the rules Spiff matched: ("value", result) or ("error", rules).

    Spiff applies no hit policy but first match and COLLECT; this is the spec's definition, kept
    apart from Flowdesk's implementation so each checks the other.
    """

    def shape(values: dict[str, Any]) -> Any:
        return next(iter(values.values())) if len(values) == 1 else values

    def rank(values: dict[str, Any]) -> list[int]:
        return [allowed[key].index(values[key]) for key in allowed]

    if policy == "UNIQUE":
        if len(matched) > 1:
            return "error", matched
        return "value", shape(outputs[0]) if outputs else None
    if policy == "ANY":
        if any(other != outputs[0] for other in outputs[1:]):
            return "error", matched
        return "value", shape(outputs[0]) if outputs else None
    if policy == "FIRST":
        return "value", shape(outputs[0]) if outputs else None
    if policy == "PRIORITY":
        return "value", shape(min(outputs, key=rank)) if outputs else None
    if policy == "OUTPUT ORDER":
        return "value", [shape(values) for values in sorted(outputs, key=rank)]
    values = [shape(values) for values in outputs]
    if not aggregation:
        return "value", values
    distinct: list[Any] = []
    for value in values:
        if value is not None and value not in distinct:
            distinct.append(value)
    if aggregation == "COUNT":
        return "value", len(distinct)
    if not distinct:
        return "value", None
    return "value", {"SUM": sum, "MIN": min, "MAX": max}[aggregation](distinct)


def table_count(xml: bytes | str) -> int:
    """How many decision tables Spiff finds in the file's first decision."""
    root = etree.fromstring(xml.encode() if isinstance(xml, str) else xml)
    nsmap = {**DEFAULT_NSMAP, **root.nsmap}
    if None in nsmap:
        nsmap["dmn"] = nsmap.pop(None)
    parser = DMNParser(None, root, nsmap)
    parser.parse()
    return len(parser.decision.decisionTables)
