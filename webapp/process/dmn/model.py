"""The decision model document (``flowdesk-dmn/1``) and the values the DMN library hands back.

The document is a JSON-able dict stored per published version; these helpers find decisions and
columns in it so callers never walk its shape themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FORMAT = "flowdesk-dmn/1"
HIT_POLICIES = ("UNIQUE", "FIRST", "PRIORITY", "ANY", "RULE ORDER", "OUTPUT ORDER", "COLLECT")
MULTI_HIT = ("RULE ORDER", "OUTPUT ORDER", "COLLECT")
AGGREGATIONS = ("SUM", "MIN", "MAX", "COUNT")
#: What an input entry's test holds when its text could not be translated.
UNTRANSLATABLE = {"untranslatable": True}


class DmnImportError(ValueError):
    """The file cannot be read at all: malformed, unsafe, too large or not DMN."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class DecisionError(Exception):
    """Evaluating a decision failed; names the decision and the rules involved."""

    def __init__(self, message: str, decision_id: str, rules: list[int] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.decision_id = decision_id
        self.rules = list(rules or [])

    def __str__(self) -> str:
        return f"Decision '{self.decision_id}': {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.decision_id, self.rules)


@dataclass(frozen=True)
class DmnProblem:
    """One thing wrong with a decision model; blocking ones stop publishing.

    ``rules`` (numbered from 1) and ``column`` (a label) say where in the table, when it is one.
    """

    code: str
    element_id: str | None
    line: int | None
    message: str
    blocking: bool = True
    rules: tuple[int, ...] = ()
    column: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "elementId": self.element_id,
            "line": self.line,
            "message": self.message,
            "blocking": self.blocking,
            "rules": list(self.rules),
            "column": self.column,
        }


@dataclass
class DmnImport:
    """What reading a DMN file gave: the document and what could not be taken over."""

    document: dict[str, Any]
    problems: list[DmnProblem] = field(default_factory=list)


@dataclass
class Evaluation:
    """The outcome of one decision: its result shaped by the hit policy, and how it was reached."""

    decision_id: str
    result: Any
    matched: list[int] = field(default_factory=list)
    inputs: list[dict[str, Any]] = field(default_factory=list)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    required: list[Evaluation] = field(default_factory=list)
    #: The decision's name, shown to people beside its id.
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict for history (dates as ISO text)."""
        return {
            "decisionId": self.decision_id,
            "decisionName": self.name,
            "result": _jsonable(self.result),
            "matched": list(self.matched),
            "inputs": _jsonable(self.inputs),
            "outputs": _jsonable(self.outputs),
            "required": [evaluation.to_json() for evaluation in self.required],
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


def decisions(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The document's decisions, in file order."""
    return list(document.get("decisions") or [])


def decision_ids(document: Mapping[str, Any]) -> list[str]:
    """The ids of the decisions the document provides."""
    return [decision["id"] for decision in decisions(document)]


def find_decision(document: Mapping[str, Any], decision_id: str) -> dict[str, Any]:
    """The decision with ``decision_id``; DecisionError when the document has none."""
    for decision in decisions(document):
        if decision.get("id") == decision_id:
            return decision
    known = ", ".join(decision_ids(document)) or "none"
    raise DecisionError(f"no such decision (the model has: {known})", decision_id)


def input_columns(document: Mapping[str, Any], decision_id: str) -> list[dict[str, Any]]:
    """A table's input columns (id, label, type) for forms; a literal decision has none."""
    table = find_decision(document, decision_id).get("table") or {}
    return [
        {
            "id": column["id"],
            "label": column.get("label") or column["id"],
            "type": column.get("type"),
        }
        for column in table.get("inputs", [])
    ]


def result_name(decision: Mapping[str, Any]) -> str:
    """The name a dependent decision reads this decision's result under.

    A literal decision's variable; a table's single output name; else the decision's name or id.
    """
    literal = decision.get("literal")
    if literal and literal.get("variable"):
        return str(literal["variable"])
    outputs = (decision.get("table") or {}).get("outputs") or []
    if len(outputs) == 1 and outputs[0].get("name"):
        return str(outputs[0]["name"])
    return str(decision.get("name") or decision["id"])


def output_key(output: Mapping[str, Any], index: int) -> str:
    """The key an output's value goes under: its name, else its label, else ``output<n>``."""
    return str(output.get("name") or output.get("label") or f"output{index + 1}")
