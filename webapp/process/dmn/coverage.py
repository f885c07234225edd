"""What each input entry accepts, as a ValueSet, read from its translated expression's tree.

Comparisons, ranges, lists, ``not`` and ``or``/``and`` of literal values are analysed; an entry
reading other data, dates or functions is not (its set is None and the checks leave it out).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import expressions
from ..expressions import Compare, List, Literal, Logical, Path, Unary
from .valuesets import INF, ValueSet

_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
NUMERIC_TYPES = ("integer", "long", "double", "number", "int", "float", "decimal")
WHOLE_TYPES = ("integer", "long", "int")


def domain(type_ref: str | None) -> ValueSet:
    """All values a column of ``type_ref`` takes (everything for an unknown type)."""
    kind = (type_ref or "").strip().lower()
    whole = kind in WHOLE_TYPES
    if kind in NUMERIC_TYPES:
        return ValueSet.interval(-INF, False, INF, False, whole)
    if kind == "string":
        return ValueSet(cotext=True)
    if kind == "boolean":
        return ValueSet(booleans=frozenset({True, False}))
    return ValueSet.everything()


def accepted(test: Any, type_ref: str | None) -> ValueSet | None:
    """The values an entry's test accepts within its column's type; None when not analysable."""
    whole = (type_ref or "").strip().lower() in WHOLE_TYPES
    if test is None:
        return domain(type_ref)
    if not isinstance(test, str):
        return None
    try:
        tree = expressions.parse(test).tree
    except expressions.ExpressionError:
        return None
    found = _set(tree, whole)
    return None if found is None else found.intersection(domain(type_ref))


def _is_cell(node: Any) -> bool:
    return isinstance(node, Path) and node.root == "$cell" and not node.segments


def _literal(node: Any) -> tuple[bool, Any]:
    if isinstance(node, Literal):
        return True, node.value
    if isinstance(node, Unary) and node.op == "-" and isinstance(node.operand, Literal):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return True, -value
    return False, None


def _set(node: Any, whole: bool) -> ValueSet | None:
    if isinstance(node, Logical):
        parts = [_set(operand, whole) for operand in node.operands]
        if any(part is None for part in parts):
            return None
        result = parts[0]
        for part in parts[1:]:
            assert result is not None and part is not None
            result = result.union(part) if node.op == "or" else result.intersection(part)
        return result
    if isinstance(node, Unary) and node.op == "not":
        inner = _set(node.operand, whole)
        return None if inner is None else inner.complement()
    if isinstance(node, Compare):
        return _compare(node, whole)
    return None


def _compare(node: Compare, whole: bool) -> ValueSet | None:
    op, left, right = node.op, node.left, node.right
    if op in ("in", "not in") and _is_cell(left) and isinstance(right, List):
        values = [_literal(item) for item in right.items]
        if not all(ok for ok, _ in values):
            return None
        members = [ValueSet.of(value, whole) for _, value in values]
        if any(member is None for member in members):
            return None
        result = ValueSet()
        for member in members:
            assert member is not None
            result = result.union(member)
        return result if op == "in" else result.complement()
    if _is_cell(right) and not _is_cell(left):
        left, right, op = right, left, _FLIP.get(op, "")
    if not _is_cell(left):
        return None
    ok, value = _literal(right)
    if not ok:
        return None
    if op in ("==", "!="):
        point = ValueSet.of(value, whole)
        if point is None:
            return None
        return point if op == "==" else point.complement()
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, str):
        return None  # text order is not analysed
    bounds = {
        "<": (-INF, False, value, False),
        "<=": (-INF, False, value, True),
        ">": (value, False, INF, False),
        ">=": (value, True, INF, False),
    }
    if op not in bounds:
        return None
    return ValueSet.interval(*bounds[op], whole)


def column_sets(table: Mapping[str, Any]) -> list[list[ValueSet | None]]:
    """For each rule, the set each of its input entries accepts."""
    columns = table.get("inputs") or []
    types = [column.get("type") for column in columns]
    return [
        [
            accepted(cell.get("test"), types[index] if index < len(types) else None)
            for index, cell in enumerate(rule.get("inputs") or [])
        ]
        for rule in table.get("rules") or []
    ]
