"""Placing `check` problems on the table editor: which rules, columns and cells each one names."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.process import dmn

_RULES = re.compile(r"\brules? (\d+(?:(?:, | and | & |-)\d+)*)", re.IGNORECASE)


@dataclass
class Placed:
    """The problems of one decision, by rule index and by cell (rule index, side, column)."""

    problems: list[dmn.DmnProblem] = field(default_factory=list)
    rules: dict[int, list[dmn.DmnProblem]] = field(default_factory=lambda: defaultdict(list))
    cells: dict[tuple[int, str, int], list[dmn.DmnProblem]] = field(
        default_factory=lambda: defaultdict(list)
    )
    columns: dict[tuple[str, int], list[dmn.DmnProblem]] = field(
        default_factory=lambda: defaultdict(list)
    )


def rule_numbers(message: str) -> list[int]:
    """The 1-based rule numbers a message names ("rules 2 and 5" -> [2, 5])."""
    numbers: list[int] = []
    for match in _RULES.finditer(message):
        numbers.extend(int(n) for n in re.findall(r"\d+", match.group(1)))
    return numbers


def _column_of(problem: dmn.DmnProblem, columns: list[Mapping[str, Any]]) -> int | None:
    for index, column in enumerate(columns):
        if problem.element_id and problem.element_id == column.get("id"):
            return index
    for index, column in enumerate(columns):
        names = {str(column.get(k)) for k in ("label", "name", "id") if column.get(k)}
        if any(f"'{n}'" in problem.message or f'"{n}"' in problem.message for n in names):
            return index
        if any(f"column {n}" in problem.message for n in names):
            return index
    return None


def place(decision: Mapping[str, Any] | None, problems: list[dmn.DmnProblem]) -> Placed:
    """The problems that concern `decision`, with the rules and cells they name."""
    placed = Placed()
    if decision is None:
        return placed
    table = decision.get("table") or {}
    rules = table.get("rules") or []
    rule_ids = {rule.get("id"): index for index, rule in enumerate(rules)}
    sides = {"input": table.get("inputs") or [], "output": table.get("outputs") or []}
    own_ids = {decision["id"], *rule_ids, *(c.get("id") for cols in sides.values() for c in cols)}
    for problem in problems:
        if problem.element_id not in own_ids and decision["id"] not in problem.message:
            continue
        placed.problems.append(problem)
        indexes = [n - 1 for n in rule_numbers(problem.message) if 0 < n <= len(rules)]
        if problem.element_id in rule_ids:
            indexes.append(rule_ids[problem.element_id])
        located = None
        for side, columns in sides.items():
            column = _column_of(problem, columns)
            if column is not None:
                located = (side, column)
                break
        for index in dict.fromkeys(indexes):
            placed.rules[index].append(problem)
            if located is not None:
                placed.cells[(index, *located)].append(problem)
        if located is not None and not indexes:
            placed.columns[located].append(problem)
    return placed
