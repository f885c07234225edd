"""Checks over a decision model document: what the editor shows as you type and publish enforces.

Each problem names the decision, the rule numbers (1-based) and the column involved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import DmnProblem, decisions
from .tables import table_problems


def _column(table: Mapping[str, Any], index: int, kind: str = "inputs") -> str:
    columns = table.get(kind) or []
    if index < len(columns):
        column = columns[index]
        return str(column.get("label") or column.get("name") or column.get("id"))
    return f"#{index + 1}"


def _is_untranslatable(value: Any) -> bool:
    return isinstance(value, Mapping) and "untranslatable" in value


def untranslated(
    document: Mapping[str, Any], lines: Mapping[str, int] | None = None
) -> list[DmnProblem]:
    """Blocking problems for every input, entry or literal that could not be translated."""
    lines = lines or {}
    problems: list[DmnProblem] = []
    for decision in decisions(document):
        decision_id = decision["id"]
        literal = decision.get("literal")
        if (
            decision.get("kind") == "literal"
            and literal is not None
            and literal.get("expression") is None
        ):
            reason = literal.get("reason") or "the literal expression is empty"
            text = literal.get("text")
            message = (
                f"Decision '{decision_id}': cannot translate the literal expression "
                f"{_shown(text)}: {reason}."
                if str(text or "").strip()
                else f"Decision '{decision_id}' cannot be evaluated: {reason}."
            )
            problems.append(
                DmnProblem("dmn.untranslatable", decision_id, lines.get(decision_id), message)
            )
        if decision.get("kind") not in ("table", "literal"):
            problems.append(
                DmnProblem(
                    "dmn.decision-logic",
                    decision_id,
                    lines.get(decision_id),
                    f"Decision '{decision_id}' cannot be evaluated: it has neither a decision "
                    "table nor a literal expression (the only decision logic Flowdesk evaluates).",
                )
            )
        table = decision.get("table")
        if decision.get("kind") != "table" or not table:
            continue
        for index, column in enumerate(table.get("inputs", [])):
            if column.get("expression") is None:
                problems.append(
                    DmnProblem(
                        "dmn.untranslatable",
                        decision_id,
                        lines.get(column["id"], lines.get(decision_id)),
                        f"Decision '{decision_id}', input column '{_column(table, index)}': cannot "
                        f"translate the input expression {_shown(column.get('text'))}: "
                        f"{column.get('reason') or 'not translated'}.",
                    )
                )
        for number, rule in enumerate(table.get("rules", []), 1):
            line = lines.get(rule.get("id", ""), lines.get(decision_id))
            for index, cell in enumerate(rule.get("inputs", [])):
                if _is_untranslatable(cell.get("test")):
                    problems.append(
                        DmnProblem(
                            "dmn.untranslatable",
                            decision_id,
                            line,
                            f"Decision '{decision_id}', rule {number}, input column "
                            f"'{_column(table, index)}': cannot translate "
                            f"{_shown(cell.get('text'))}: "
                            f"{cell['test']['untranslatable']}.",
                            rules=(number,),
                            column=_column(table, index),
                        )
                    )
            for index, cell in enumerate(rule.get("outputs", [])):
                if _is_untranslatable(cell.get("expression")):
                    problems.append(
                        DmnProblem(
                            "dmn.untranslatable",
                            decision_id,
                            line,
                            f"Decision '{decision_id}', rule {number}, output column "
                            f"'{_column(table, index, 'outputs')}': cannot translate "
                            f"{_shown(cell.get('text'))}: {cell['expression']['untranslatable']}.",
                            rules=(number,),
                            column=_column(table, index, "outputs"),
                        )
                    )
    return problems


def _shown(text: Any) -> str:
    value = str(text or "").strip()
    return repr(value if len(value) <= 60 else value[:57] + "...")


def check(document: Mapping[str, Any]) -> list[DmnProblem]:
    """All problems of a document: blocking ones stop publishing, the rest are warnings."""
    problems = untranslated(document)
    problems += _duplicate_ids(document)
    problems += _requirements(document)
    for decision in decisions(document):
        table = decision.get("table")
        if decision.get("kind") == "table" and table:
            problems += table_problems(decision["id"], table)
    return problems


def _problem(code: str, decision_id: str, message: str, blocking: bool = True) -> DmnProblem:
    return DmnProblem(code, decision_id, None, f"Decision '{decision_id}': {message}", blocking)


def _duplicate_ids(document: Mapping[str, Any]) -> list[DmnProblem]:
    seen: dict[str, str] = {}
    problems = []
    for decision in decisions(document):
        table = decision.get("table") or {}
        owned = [("decision", decision.get("id"))]
        owned += [("input", column.get("id")) for column in table.get("inputs") or []]
        owned += [("output", output.get("id")) for output in table.get("outputs") or []]
        owned += [("rule", rule.get("id")) for rule in table.get("rules") or []]
        for what, element_id in owned:
            if not element_id:
                problems.append(
                    _problem("dmn.id", decision.get("id") or "?", f"a {what} has no id.")
                )
            elif element_id in seen:
                problems.append(
                    _problem(
                        "dmn.duplicate-id",
                        decision.get("id") or "?",
                        f"the id '{element_id}' of a {what} is already used by a "
                        f"{seen[element_id]}.",
                    )
                )
            else:
                seen[element_id] = what
    return problems


def _requirements(document: Mapping[str, Any]) -> list[DmnProblem]:
    graph = {
        decision["id"]: list(decision.get("requires") or []) for decision in decisions(document)
    }
    problems = []
    for decision_id, requires in graph.items():
        for other in requires:
            if other not in graph:
                problems.append(
                    _problem(
                        "dmn.required-unknown",
                        decision_id,
                        f"it requires the decision '{other}', which this model does not have.",
                    )
                )
    reported: set[frozenset[str]] = set()
    for start in graph:
        cycle = _cycle_from(graph, start)
        if cycle and frozenset(cycle) not in reported:
            reported.add(frozenset(cycle))
            problems.append(
                _problem(
                    "dmn.required-cycle",
                    start,
                    "its required decisions form a cycle: " + " -> ".join([*cycle, cycle[0]]) + ".",
                )
            )
    return problems


def _cycle_from(graph: Mapping[str, list[str]], start: str) -> list[str] | None:
    """A cycle through ``start`` (depth-first, iterative), or None."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for other in graph.get(node, []):
            if other == start:
                return path
            if other in graph and other not in seen:
                seen.add(other)
                stack.append((other, [*path, other]))
    return None
