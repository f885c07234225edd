"""Edits the table editor makes to a decision model document, each checked before it applies.

An edit changes entry and column *texts*; the DMN library translates them again afterwards
(`webapp.services.decisions`), so the expressions never disagree with what the modeller typed.
Every edit returns a new document; a refused one raises EditError naming the field.
"""

from __future__ import annotations

import copy
import re
import secrets
from collections.abc import Callable, Mapping
from typing import Any

HIT_POLICIES = ("UNIQUE", "FIRST", "PRIORITY", "ANY", "RULE ORDER", "OUTPUT ORDER", "COLLECT")
AGGREGATIONS = ("SUM", "MIN", "MAX", "COUNT")
TYPES = ("", "string", "integer", "long", "double", "number", "boolean", "date", "dateTime", "time")
MAX_TEXT = 2000
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")

Document = dict[str, Any]


class EditError(ValueError):
    """A refused edit: `field` names the form field, `message` what is wrong with it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(4)}"


def _text(params: Mapping[str, Any], field: str, *, required: bool = False) -> str:
    value = str(params.get(field) or "").strip()
    if len(value) > MAX_TEXT:
        raise EditError(field, f"{field} is longer than {MAX_TEXT} characters.")
    if required and not value:
        raise EditError(field, f"{field} must not be empty.")
    return value


def _index(params: Mapping[str, Any], field: str, items: list[Any]) -> int:
    try:
        index = int(params.get(field, ""))
    except (TypeError, ValueError):
        raise EditError(field, f"{field} must be a number.") from None
    if not 0 <= index < len(items):
        raise EditError(field, f"There is no {field.replace('_', ' ')} {index + 1}.")
    return index


def _type(params: Mapping[str, Any]) -> str:
    value = _text(params, "type")
    if value not in TYPES:
        raise EditError("type", f"Type must be one of {', '.join(t for t in TYPES if t)}.")
    return value


def decision(doc: Document, decision_id: str) -> dict[str, Any]:
    for item in doc.get("decisions") or []:
        if item.get("id") == decision_id:
            return item
    raise EditError("decision", f"The model has no decision '{decision_id}'.")


def _table(doc: Document, decision_id: str) -> dict[str, Any]:
    table = decision(doc, decision_id).get("table")
    if table is None:
        raise EditError("decision", f"Decision '{decision_id}' is a literal expression.")
    return table


def set_hit_policy(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    policy = _text(params, "hit_policy").upper()
    if policy not in HIT_POLICIES:
        raise EditError("hit_policy", f"Hit policy must be one of {', '.join(HIT_POLICIES)}.")
    aggregation = _text(params, "aggregation").upper() or None
    if aggregation is not None and aggregation not in AGGREGATIONS:
        raise EditError("aggregation", f"Aggregation must be one of {', '.join(AGGREGATIONS)}.")
    if aggregation is not None and policy != "COLLECT":
        raise EditError("aggregation", "Only the COLLECT hit policy aggregates.")
    table["hitPolicy"] = policy
    table["aggregation"] = aggregation


def set_input(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    column = table["inputs"][_index(params, "column", table["inputs"])]
    column["label"] = _text(params, "label")
    column["text"] = _text(params, "text", required=True)
    column["expression"] = None
    column["type"] = _type(params) or None


def add_input(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    language = table["inputs"][0].get("language") if table["inputs"] else None
    number = len(table["inputs"]) + 1
    table["inputs"].append(
        {
            "id": new_id("Input"),
            "label": f"Input {number}",
            "text": f"input{number}",
            "language": language,
            "expression": None,
            "type": "string",
        }
    )
    for rule in table["rules"]:
        rule["inputs"].append({"text": "", "test": None})


def remove_input(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    index = _index(params, "column", table["inputs"])
    if len(table["inputs"]) == 1:
        raise EditError("column", "A decision table keeps at least one input column.")
    del table["inputs"][index]
    for rule in table["rules"]:
        del rule["inputs"][index]


def _values(params: Mapping[str, Any]) -> list[str]:
    text = _text(params, "values")
    return [
        value.strip()
        for value in re.split(r",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)", text)
        if value.strip()
    ]


def set_output(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    column = table["outputs"][_index(params, "column", table["outputs"])]
    name = _text(params, "name")
    if name and not NAME.match(name):
        raise EditError("name", "An output name is letters, digits and _, starting with a letter.")
    column["label"] = _text(params, "label")
    column["name"] = name
    column["type"] = _type(params) or None
    column["values"] = _values(params)


def add_output(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    number = len(table["outputs"]) + 1
    table["outputs"].append(
        {
            "id": new_id("Output"),
            "label": f"Output {number}",
            "name": f"output{number}",
            "type": "string",
            "values": [],
        }
    )
    for rule in table["rules"]:
        rule["outputs"].append({"text": "", "expression": None})


def remove_output(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    index = _index(params, "column", table["outputs"])
    if len(table["outputs"]) == 1:
        raise EditError("column", "A decision table keeps at least one output column.")
    del table["outputs"][index]
    for rule in table["rules"]:
        del rule["outputs"][index]


def add_rule(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    table["rules"].append(
        {
            "id": new_id("Rule"),
            "description": "",
            "inputs": [{"text": "", "test": None} for _ in table["inputs"]],
            "outputs": [{"text": "", "expression": None} for _ in table["outputs"]],
        }
    )


def remove_rule(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    del table["rules"][_index(params, "rule", table["rules"])]


def move_rule(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    index = _index(params, "rule", table["rules"])
    direction = _text(params, "direction")
    if direction not in ("up", "down"):
        raise EditError("direction", "A rule moves up or down.")
    target = index - 1 if direction == "up" else index + 1
    if not 0 <= target < len(table["rules"]):
        raise EditError("direction", f"Rule {index + 1} cannot move {direction}.")
    rules = table["rules"]
    rules[index], rules[target] = rules[target], rules[index]


def set_cell(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    rule = table["rules"][_index(params, "rule", table["rules"])]
    side = _text(params, "side")
    if side not in ("input", "output"):
        raise EditError("side", "A cell is an input or an output entry.")
    entries = rule["inputs"] if side == "input" else rule["outputs"]
    entry = entries[_index(params, "column", entries)]
    entry["text"] = _text(params, "text")
    entry["test" if side == "input" else "expression"] = None


def set_description(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    table = _table(doc, decision_id)
    rule = table["rules"][_index(params, "rule", table["rules"])]
    rule["description"] = _text(params, "description")


def set_literal(doc: Document, decision_id: str, params: Mapping[str, Any]) -> None:
    literal = decision(doc, decision_id).get("literal")
    if literal is None:
        raise EditError("decision", f"Decision '{decision_id}' is a decision table.")
    variable = _text(params, "variable")
    if variable and not NAME.match(variable):
        raise EditError("variable", "A variable name is letters, digits and _.")
    literal["text"] = _text(params, "text", required=True)
    literal["expression"] = None
    literal["variable"] = variable
    literal["type"] = _type(params) or None


EDITS: dict[str, Callable[[Document, str, Mapping[str, Any]], None]] = {
    "hit-policy": set_hit_policy,
    "input": set_input,
    "add-input": add_input,
    "remove-input": remove_input,
    "output": set_output,
    "add-output": add_output,
    "remove-output": remove_output,
    "add-rule": add_rule,
    "remove-rule": remove_rule,
    "move-rule": move_rule,
    "cell": set_cell,
    "description": set_description,
    "literal": set_literal,
}


def apply(
    doc: Mapping[str, Any], edit: str, decision_id: str, params: Mapping[str, Any]
) -> Document:
    """A copy of `doc` with the edit named `edit` made to decision `decision_id`."""
    if edit not in EDITS:
        raise EditError("edit", f"Unknown edit '{edit}'.")
    changed = copy.deepcopy(dict(doc))
    EDITS[edit](changed, decision_id, params)
    return changed
