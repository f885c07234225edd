"""Checks of one decision table: its shape, output values against their types, overlapping
rules under UNIQUE and ANY, rules FIRST never reaches, and values no rule matches."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .. import expressions
from .coverage import NUMERIC_TYPES, WHOLE_TYPES, column_sets, domain
from .model import AGGREGATIONS, HIT_POLICIES, DmnProblem, output_key
from .valuesets import ValueSet

MAX_REPORTED = 20  # per kind and table: a badly overlapping table would otherwise flood the list


def _problem(code: str, decision_id: str, message: str, blocking: bool = True) -> DmnProblem:
    return DmnProblem(code, decision_id, None, f"Decision '{decision_id}': {message}", blocking)


def _label(columns: list[Mapping[str, Any]], index: int) -> str:
    column = columns[index] if index < len(columns) else {}
    return str(column.get("label") or column.get("name") or column.get("id") or f"#{index + 1}")


def table_problems(decision_id: str, table: Mapping[str, Any]) -> list[DmnProblem]:
    problems = _shape(decision_id, table)
    problems += _output_values(decision_id, table)
    if any(p.blocking for p in problems):
        return problems
    sets = column_sets(table)
    policy = table.get("hitPolicy")
    if policy in ("UNIQUE", "ANY"):
        problems += _overlaps(decision_id, table, sets)
    if policy == "FIRST":
        problems += _unreachable(decision_id, table, sets)
    problems += _gaps(decision_id, table, sets)
    return problems


def _shape(decision_id: str, table: Mapping[str, Any]) -> list[DmnProblem]:
    problems = []
    policy = table.get("hitPolicy")
    aggregation = table.get("aggregation")
    outputs = table.get("outputs") or []
    columns = table.get("inputs") or []
    if policy not in HIT_POLICIES:
        problems.append(_problem("dmn.hit-policy", decision_id, f"unknown hit policy {policy!r}."))
    if aggregation and (aggregation not in AGGREGATIONS or policy != "COLLECT"):
        problems.append(
            _problem(
                "dmn.aggregation",
                decision_id,
                f"the aggregation {aggregation!r} needs the COLLECT hit policy and one of "
                f"{', '.join(AGGREGATIONS)}.",
            )
        )
    if aggregation and len(outputs) != 1:
        problems.append(
            _problem(
                "dmn.aggregation", decision_id, f"COLLECT {aggregation} needs exactly one output."
            )
        )
    if not outputs:
        problems.append(_problem("dmn.outputs", decision_id, "the table has no output column."))
    keys = [output_key(output, index) for index, output in enumerate(outputs)]
    if len(outputs) > 1 and (
        len(set(keys)) != len(keys) or not all(o.get("name") for o in outputs)
    ):
        problems.append(
            _problem(
                "dmn.output-name",
                decision_id,
                "a table with several outputs needs a distinct name for each (the result is a "
                "dict by output name).",
            )
        )
    if policy in ("PRIORITY", "OUTPUT ORDER") and not any(o.get("values") for o in outputs):
        problems.append(
            _problem(
                "dmn.output-values",
                decision_id,
                f"the {policy} hit policy orders by the output values, and no output lists them.",
            )
        )
    for number, rule in enumerate(table.get("rules") or [], 1):
        ins, outs = len(rule.get("inputs") or []), len(rule.get("outputs") or [])
        if ins != len(columns) or outs != len(outputs):
            problems.append(
                _problem(
                    "dmn.rule-shape",
                    decision_id,
                    f"rule {number} has {ins} input and {outs} output entries; the table has "
                    f"{len(columns)} input and {len(outputs)} output columns.",
                )
            )
    return problems


def _fits(value: Any, type_ref: str) -> bool:
    kind = type_ref.strip().lower()
    if value is None or not kind:
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in WHOLE_TYPES:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in NUMERIC_TYPES:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in ("date", "datetime", "date and time", "time"):
        return isinstance(value, datetime)
    return True


def _constant(text: str) -> tuple[bool, Any]:
    """Whether an output entry is a constant (reads no data), and its value."""
    try:
        parsed = expressions.parse(text)
    except expressions.ExpressionError:
        return False, None
    if parsed.paths or "now(" in text:
        return False, None
    try:
        return True, expressions.evaluate(parsed, {})
    except expressions.ExpressionError:
        return False, None


def _output_values(decision_id: str, table: Mapping[str, Any]) -> list[DmnProblem]:
    problems = []
    outputs = table.get("outputs") or []
    for number, rule in enumerate(table.get("rules") or [], 1):
        for index, cell in enumerate(rule.get("outputs") or []):
            text = cell.get("expression")
            if index >= len(outputs) or not isinstance(text, str):
                continue
            output = outputs[index]
            constant, value = _constant(text)
            if not constant:
                continue
            key = output_key(output, index)
            if not _fits(value, output.get("type") or ""):
                problems.append(
                    _problem(
                        "dmn.output-type",
                        decision_id,
                        f"rule {number}, output column '{key}': {cell.get('text')!r} does not "
                        f"fit the output's type '{output.get('type')}'.",
                    )
                )
            allowed = output.get("values") or []
            if allowed and not any(expressions.values_equal(value, item) for item in allowed):
                problems.append(
                    _problem(
                        "dmn.output-value",
                        decision_id,
                        f"rule {number}, output column '{key}': {cell.get('text')!r} is not one of "
                        f"the output's values ({', '.join(map(repr, allowed))}).",
                    )
                )
    return problems


def _meet(left: list[ValueSet | None], right: list[ValueSet | None]) -> int | None:
    """None when two rules can match the same input; else a column where they cannot."""
    for index, (a, b) in enumerate(zip(left, right, strict=False)):
        if a is None or b is None:
            return index  # not analysed: no overlap is claimed
        if a.intersection(b).is_empty():
            return index
    return None


def _overlaps(
    decision_id: str, table: Mapping[str, Any], sets: list[list[ValueSet | None]]
) -> list[DmnProblem]:
    rules = table.get("rules") or []
    policy = table.get("hitPolicy")
    problems = []
    for j in range(len(sets)):
        for i in range(j):
            if _meet(sets[i], sets[j]) is not None:
                continue
            if policy == "ANY":
                same = [c.get("text", "").strip() for c in rules[i].get("outputs") or []] == [
                    c.get("text", "").strip() for c in rules[j].get("outputs") or []
                ]
                if same:
                    continue
                message = (
                    f"rules {i + 1} and {j + 1} can both match with different outputs, which the "
                    "ANY hit policy does not allow."
                )
            else:
                message = (
                    f"rules {i + 1} and {j + 1} can both match the same input, which the UNIQUE "
                    "hit policy does not allow (with FIRST the earlier rule wins)."
                )
            problems.append(_problem("dmn.overlap", decision_id, message))
            if len(problems) >= MAX_REPORTED:
                return problems
    return problems


def _unreachable(
    decision_id: str, table: Mapping[str, Any], sets: list[list[ValueSet | None]]
) -> list[DmnProblem]:
    problems = []
    single = len(table.get("inputs") or []) == 1
    for j, later in enumerate(sets):
        if any(entry is None for entry in later):
            continue
        cover = next(
            (
                i
                for i in range(j)
                if all(
                    a is not None and b is not None and b.within(a)
                    for a, b in zip(sets[i], later, strict=False)
                )
            ),
            None,
        )
        message = None
        if cover is not None:
            message = f"rule {j + 1} is never used: rule {cover + 1} matches every input it does"
        elif single and j and all(s[0] is not None for s in sets[:j]) and later:
            union = ValueSet()
            for earlier in sets[:j]:
                assert earlier[0] is not None
                union = union.union(earlier[0])
            if later[0] is not None and later[0].within(union):
                message = f"rule {j + 1} is never used: rules 1 to {j} match every input it does"
        if message:
            problems.append(
                _problem("dmn.unreachable", decision_id, message + " (FIRST hit policy).", False)
            )
            if len(problems) >= MAX_REPORTED:
                break
    return problems


def _gaps(
    decision_id: str, table: Mapping[str, Any], sets: list[list[ValueSet | None]]
) -> list[DmnProblem]:
    columns = table.get("inputs") or []
    problems = []
    for index, column in enumerate(columns):
        kind = (column.get("type") or "").strip().lower()
        if kind not in (*NUMERIC_TYPES, "boolean") or not sets:
            continue
        entries = [rule[index] if index < len(rule) else None for rule in sets]
        if any(entry is None for entry in entries):
            continue
        union = ValueSet()
        for entry in entries:
            assert entry is not None
            union = union.union(entry)
        gap = domain(column.get("type")).intersection(union.complement())
        if gap.numbers or gap.booleans:
            problems.append(
                _problem(
                    "dmn.gap",
                    decision_id,
                    f"no rule matches input column '{_label(columns, index)}' when it is "
                    f"{gap.example()}.",
                    False,
                )
            )
    return problems
