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
MAX_PIECES = 256  # what is left of a rule after earlier ones; beyond it reachability is not claimed


def _problem(
    code: str,
    decision_id: str,
    message: str,
    blocking: bool = True,
    rules: tuple[int, ...] = (),
    column: str | None = None,
) -> DmnProblem:
    text = f"Decision '{decision_id}': {message}"
    return DmnProblem(code, decision_id, None, text, blocking, rules, column)


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
                    rules=(number,),
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
                        rules=(number,),
                        column=key,
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
                        rules=(number,),
                        column=key,
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
                if _outputs(rules[i]) == _outputs(rules[j]):
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
            problems.append(_problem("dmn.overlap", decision_id, message, rules=(i + 1, j + 1)))
            if len(problems) >= MAX_REPORTED:
                return problems
    return problems


def _outputs(rule: Mapping[str, Any]) -> list[Any]:
    """A rule's output entries as translated (so `'a'` and `"a"` are the same output)."""
    return [cell.get("expression") for cell in rule.get("outputs") or []]


def _subtract(box: list[ValueSet], other: list[ValueSet]) -> list[list[ValueSet]]:
    """The inputs of ``box`` that ``other`` does not take, as boxes (one per column cut)."""
    if any(mine.intersection(theirs).is_empty() for mine, theirs in zip(box, other, strict=False)):
        return [box]
    pieces: list[list[ValueSet]] = []
    inside: list[ValueSet] = []
    for index, (mine, theirs) in enumerate(zip(box, other, strict=False)):
        rest = mine.intersection(theirs.complement())
        if not rest.is_empty():
            pieces.append([*inside, rest, *box[index + 1 :]])
        inside.append(mine.intersection(theirs))
    return pieces


def _covering(sets: list[list[ValueSet | None]], j: int) -> list[int] | None:
    """The earlier rules that together take every input rule ``j`` takes, or None."""
    later = sets[j]
    if any(entry is None for entry in later):
        return None
    remaining: list[list[ValueSet]] = [[entry for entry in later if entry is not None]]
    used = []
    for i in range(j):
        earlier = sets[i]
        if any(entry is None for entry in earlier) or len(earlier) != len(later):
            continue
        box = [entry for entry in earlier if entry is not None]
        cut = [piece for part in remaining for piece in _subtract(part, box)]
        if cut != remaining:
            used.append(i + 1)
        remaining = cut
        if not remaining:
            return used
        if len(remaining) > MAX_PIECES:
            return None
    return None


def _unreachable(
    decision_id: str, table: Mapping[str, Any], sets: list[list[ValueSet | None]]
) -> list[DmnProblem]:
    problems = []
    for j in range(1, len(sets)):
        covering = _covering(sets, j)
        if not covering:
            continue
        if len(covering) == 1:
            who = f"rule {covering[0]} matches"
        else:
            who = f"rules {', '.join(map(str, covering[:-1]))} and {covering[-1]} together match"
        problems.append(
            _problem(
                "dmn.unreachable",
                decision_id,
                f"rule {j + 1} is never used: {who} every input it does (FIRST hit policy).",
                False,
                rules=(*covering, j + 1),
            )
        )
        if len(problems) >= MAX_REPORTED:
            break
    return problems


def _entry_or(rule: list[ValueSet | None], index: int, default: ValueSet) -> ValueSet:
    entry = rule[index] if index < len(rule) else None
    return default if entry is None else entry


def _gap_domain(column: Mapping[str, Any], entries: list[ValueSet | None]) -> ValueSet | None:
    """The values a gap is looked for in: all numbers or booleans; for text, the texts the
    entries name (other text is expected to match nothing); None for a column not analysed."""
    kind = (column.get("type") or "").strip().lower()
    if kind in (*NUMERIC_TYPES, "boolean"):
        return domain(kind)
    if kind == "string":
        named = frozenset(text for entry in entries if entry is not None for text in entry.texts)
        return ValueSet(texts=named)
    return None


def _gaps(
    decision_id: str, table: Mapping[str, Any], sets: list[list[ValueSet | None]]
) -> list[DmnProblem]:
    """Inputs of the analysed columns that no rule takes; other columns and entries not
    analysed count as taking everything, so a gap reported is a real one."""
    columns = table.get("inputs") or []
    if not sets or not columns:
        return []
    entries = [
        [rule[index] if index < len(rule) else None for rule in sets]
        for index in range(len(columns))
    ]
    domains = {
        index: found
        for index, column in enumerate(columns)
        if (found := _gap_domain(column, entries[index])) is not None and not found.is_empty()
    }
    if not domains:
        return []
    analysed = list(domains)
    remaining = [[domains[index] for index in analysed]]
    for rule in sets:
        box = [_entry_or(rule, index, domains[index]) for index in analysed]
        remaining = [piece for part in remaining for piece in _subtract(part, box)]
        if not remaining or len(remaining) > MAX_PIECES:
            return []
    piece = remaining[0]
    where = [
        (_label(columns, index), values)
        for index, values in zip(analysed, piece, strict=True)
        if values != domains[index]
    ] or [(_label(columns, analysed[0]), piece[0])]
    if len(where) == 1:
        label, values = where[0]
        message = f"no rule matches input column '{label}' when it is {values.example()}."
    else:
        described = " and ".join(f"'{label}' is {values.example()}" for label, values in where)
        message = f"no rule matches when {described}."
    return [
        _problem(
            "dmn.gap", decision_id, message, False, column=where[0][0] if len(where) == 1 else None
        )
    ]
