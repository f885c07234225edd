"""Checks over a decision model document: what the editor shows as you type and publish enforces.

Each problem names the decision, the rule numbers (1-based) and the column involved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import DmnProblem, decisions


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
                        )
                    )
    return problems


def _shown(text: Any) -> str:
    value = str(text or "").strip()
    return repr(value if len(value) <= 60 else value[:57] + "...")


def check(document: Mapping[str, Any]) -> list[DmnProblem]:
    """All problems of a document: blocking ones stop publishing, the rest are warnings."""
    return untranslated(document)
