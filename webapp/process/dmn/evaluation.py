"""Evaluate a decision: required decisions first, then the table's rules under its hit policy.

Every entry runs as a Flowdesk expression (no eval); the input value an entry tests is ``$cell``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .. import expressions
from .model import (
    DecisionError,
    Evaluation,
    find_decision,
    output_key,
    result_name,
)

_SINGLE_HIT = ("UNIQUE", "FIRST", "PRIORITY", "ANY")


def evaluate(
    document: Mapping[str, Any],
    decision_id: str,
    data: Mapping[str, Any],
    *,
    now: datetime | None = None,
) -> Evaluation:
    """Evaluate ``decision_id`` over the expression context ``data`` (``$vars``, ``$input``...)."""
    return _Run(document, now).decision(decision_id, data, ())


def evaluate_table(
    document: Mapping[str, Any],
    decision_id: str,
    values: Mapping[str, Any],
    data: Mapping[str, Any] | None = None,
    *,
    now: datetime | None = None,
) -> Evaluation:
    """Match a table's rules against input values given by input id, skipping input expressions."""
    decision = find_decision(document, decision_id)
    table = decision.get("table")
    if decision.get("kind") != "table" or not table:
        raise DecisionError("is not a decision table", decision_id)
    columns = table.get("inputs", [])
    cells = [values.get(column["id"]) for column in columns]
    return _Run(document, now).table(decision, dict(data or {}), cells)


class _Run:
    """One evaluation: results of required decisions are computed once and shared."""

    def __init__(self, document: Mapping[str, Any], now: datetime | None) -> None:
        self.document = document
        self.now = now
        self.done: dict[str, Evaluation] = {}

    def decision(
        self, decision_id: str, data: Mapping[str, Any], path: tuple[str, ...]
    ) -> Evaluation:
        if decision_id in path:
            cycle = " -> ".join([*path[path.index(decision_id) :], decision_id])
            raise DecisionError(f"required decisions form a cycle: {cycle}", decision_id)
        if decision_id in self.done:
            return self.done[decision_id]
        decision = find_decision(self.document, decision_id)
        required = [
            self.decision(other, data, (*path, decision_id))
            for other in decision.get("requires", [])
        ]
        context = dict(data) if isinstance(data, Mapping) else {}
        if required:
            given = context.get("$vars")
            variables = dict(given) if isinstance(given, Mapping) else {}
            for evaluation in required:
                other = find_decision(self.document, evaluation.decision_id)
                variables[result_name(other)] = evaluation.result
            context["$vars"] = variables
        if decision.get("kind") == "literal":
            evaluation = self.literal(decision, context)
        elif decision.get("kind") != "table":
            raise DecisionError("has no decision table or literal expression", decision_id)
        else:
            table = decision.get("table") or {}
            cells = [
                self.value(decision, column, context, f"input column '{_label(column)}'")
                for column in table.get("inputs", [])
            ]
            evaluation = self.table(decision, context, cells)
        evaluation.required = required
        self.done[decision_id] = evaluation
        return evaluation

    def value(
        self,
        decision: Mapping[str, Any],
        column: Mapping[str, Any],
        context: Mapping[str, Any],
        where: str,
    ) -> Any:
        text = column.get("expression")
        if not isinstance(text, str):
            raise DecisionError(
                f"{where} could not be translated, so it cannot be evaluated", decision["id"]
            )
        try:
            return expressions.evaluate(text, context, now=self.now)
        except expressions.ExpressionError as exc:
            raise DecisionError(f"{where}: {exc.message}", decision["id"]) from None

    def literal(self, decision: Mapping[str, Any], context: Mapping[str, Any]) -> Evaluation:
        literal = decision.get("literal") or {}
        result = self.value(decision, literal, context, "the literal expression")
        return Evaluation(
            decision["id"],
            result,
            outputs=[{result_name(decision): result}],
            name=str(decision.get("name") or ""),
        )

    def table(
        self,
        decision: Mapping[str, Any],
        context: dict[str, Any],
        cells: list[Any],
    ) -> Evaluation:
        decision_id = decision["id"]
        table = decision.get("table") or {}
        columns = table.get("inputs", [])
        outputs = table.get("outputs", [])
        cell_contexts = [{**context, "$cell": value} for value in cells]
        matched: list[int] = []
        results: list[dict[str, Any]] = []
        policy = table.get("hitPolicy") or "UNIQUE"
        for number, rule in enumerate(table.get("rules", []), 1):
            if not self.matches(decision_id, number, rule, columns, cell_contexts):
                continue
            matched.append(number)
            results.append(self.outputs(decision_id, number, rule, outputs, context))
            if policy == "FIRST":
                break
        inputs = [
            {"id": column["id"], "label": _label(column), "value": value}
            for column, value in zip(columns, cells, strict=False)
        ]
        result = _apply_policy(decision_id, table, matched, results)
        name = str(decision.get("name") or "")
        return Evaluation(decision_id, result, matched, inputs, results, name=name)

    def matches(
        self,
        decision_id: str,
        number: int,
        rule: Mapping[str, Any],
        columns: list[Mapping[str, Any]],
        cell_contexts: list[dict[str, Any]],
    ) -> bool:
        for index, cell in enumerate(rule.get("inputs", [])):
            test = cell.get("test")
            if test is None:
                continue
            column = _label(columns[index]) if index < len(columns) else f"#{index + 1}"
            if not isinstance(test, str):
                raise DecisionError(
                    f"rule {number}, input column '{column}': the entry {cell.get('text')!r} could "
                    "not be translated",
                    decision_id,
                    [number],
                )
            context = cell_contexts[index] if index < len(cell_contexts) else {}
            try:
                if not expressions.evaluate(test, context, now=self.now):
                    return False
            except expressions.ExpressionError as exc:
                if context.get("$cell") is None:
                    return False
                raise DecisionError(
                    f"rule {number}, input column '{column}': {exc.message}", decision_id, [number]
                ) from None
        return True

    def outputs(
        self,
        decision_id: str,
        number: int,
        rule: Mapping[str, Any],
        outputs: list[Mapping[str, Any]],
        context: Mapping[str, Any],
    ) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for index, output in enumerate(outputs):
            cells = rule.get("outputs", [])
            cell = cells[index] if index < len(cells) else {}
            text = cell.get("expression")
            key = output_key(output, index)
            if text is None:
                values[key] = None
                continue
            if not isinstance(text, str):
                raise DecisionError(
                    f"rule {number}, output column '{key}': the entry {cell.get('text')!r} could "
                    "not be translated",
                    decision_id,
                    [number],
                )
            try:
                values[key] = expressions.evaluate(text, context, now=self.now)
            except expressions.ExpressionError as exc:
                raise DecisionError(
                    f"rule {number}, output column '{key}': {exc.message}", decision_id, [number]
                ) from None
        return values


def _label(column: Mapping[str, Any]) -> str:
    return str(column.get("label") or column.get("text") or column.get("id"))


def _shape(values: dict[str, Any]) -> Any:
    """One output gives its value, several a dict by output name."""
    return next(iter(values.values())) if len(values) == 1 else values


def _rules(numbers: list[int]) -> str:
    shown = [str(n) for n in numbers]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _priority(
    decision_id: str, table: Mapping[str, Any], number: int, values: dict[str, Any]
) -> tuple[int, ...]:
    """A rule's rank under PRIORITY/OUTPUT ORDER: where each output's value is in its list."""
    ranks = []
    for index, output in enumerate(table.get("outputs", [])):
        allowed = output.get("values") or []
        if not allowed:
            continue
        value = values.get(output_key(output, index))
        position = next(
            (i for i, item in enumerate(allowed) if expressions.values_equal(item, value)), None
        )
        if position is None:
            raise DecisionError(
                f"rule {number}: output '{output_key(output, index)}' is {value!r}, which is not "
                "among the output's values, so it has no priority",
                decision_id,
                [number],
            )
        ranks.append(position)
    if not ranks:
        raise DecisionError(
            f"the {table.get('hitPolicy')} hit policy needs output values to order by", decision_id
        )
    return tuple(ranks)


def _apply_policy(
    decision_id: str,
    table: Mapping[str, Any],
    matched: list[int],
    results: list[dict[str, Any]],
) -> Any:
    policy = table.get("hitPolicy") or "UNIQUE"
    aggregation = table.get("aggregation")
    if policy == "UNIQUE" and len(matched) > 1:
        raise DecisionError(
            f"UNIQUE hit policy: rules {_rules(matched)} all match"
            if len(matched) > 2
            else f"UNIQUE hit policy: rules {_rules(matched)} both match",
            decision_id,
            matched,
        )
    if policy == "ANY" and any(not _same(results[0], other) for other in results[1:]):
        raise DecisionError(
            f"ANY hit policy: rules {_rules(matched)} match with different outputs",
            decision_id,
            matched,
        )
    if policy in _SINGLE_HIT:
        if not results:
            return None
        if policy == "PRIORITY":
            ranked = min(
                zip(matched, results, strict=True),
                key=lambda pair: _priority(decision_id, table, pair[0], pair[1]),
            )
            return _shape(ranked[1])
        return _shape(results[0])
    ordered = results
    if policy == "OUTPUT ORDER" and results:
        pairs = sorted(
            zip(matched, results, strict=True),
            key=lambda pair: _priority(decision_id, table, pair[0], pair[1]),
        )
        ordered = [values for _, values in pairs]
    shaped = [_shape(values) for values in ordered]
    if policy != "COLLECT" or not aggregation:
        return shaped
    return _aggregate(decision_id, table, aggregation, matched, shaped)


def _same(left: Any, right: Any) -> bool:
    return expressions.values_equal(left, right)


def _aggregate(
    decision_id: str,
    table: Mapping[str, Any],
    aggregation: str,
    matched: list[int],
    values: list[Any],
) -> Any:
    """COLLECT with SUM/MIN/MAX/COUNT over the distinct non-null outputs (DMN 1.3, 8.2.11)."""
    if len(table.get("outputs", [])) != 1:
        raise DecisionError(f"COLLECT {aggregation} needs exactly one output column", decision_id)
    distinct: list[Any] = []
    for value in values:
        if value is not None and not any(_same(value, seen) for seen in distinct):
            distinct.append(value)
    if aggregation == "COUNT":
        return len(distinct)
    if not distinct:
        return None
    if aggregation == "SUM":
        if any(isinstance(v, bool) or not isinstance(v, int | float) for v in distinct):
            raise DecisionError(
                f"COLLECT SUM needs numbers; rules {_rules(matched)} give {distinct!r}",
                decision_id,
                matched,
            )
        return sum(distinct)
    kinds = {
        "number" if isinstance(v, int | float) and not isinstance(v, bool) else type(v).__name__
        for v in distinct
    }
    if len(kinds) != 1 or kinds <= {"bool", "dict", "list"}:
        raise DecisionError(
            f"COLLECT {aggregation} needs values of one comparable kind, got {distinct!r}",
            decision_id,
            matched,
        )
    return min(distinct) if aggregation == "MIN" else max(distinct)
