"""The instance list's data filter: an expression (`$vars.amount > 1000`) turned into SQL.

Evaluating an expression per row cannot keep a list of 100,000 instances fast, so the simple
shapes are translated to the database's JSON operators (PostgreSQL JSONB `#>`, SQLite
`json_extract`) and everything else is refused with a message that says what is supported.
A row matches when the expression would be true for it; a value of another type never matches.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from sqlalchemy import SQLColumnExpression, Text, and_, case, false, func, literal, not_, or_
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.sql import ColumnElement

from webapp.inputs import text_problem
from webapp.models import Instance
from webapp.process.expressions import (
    Compare,
    ExpressionSyntaxError,
    List,
    Literal,
    Logical,
    Path,
    Unary,
    parse,
)

SUPPORTED = (
    "Use comparisons of one data path with a value, such as $vars.amount > 1000, "
    "$input.country == 'NL', $vars.ok == true or $vars.kind in ['a', 'b'], "
    "joined with and, or, not."
)
COLUMNS = {"$vars": Instance.vars, "$input": Instance.input, "$nodes": Instance.nodes}
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
INT64 = 2**63 - 1


class FilterError(Exception):
    """The filter text cannot be used; `message` is for the person who typed it."""

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.position = position


def translate(text: str, dialect: str) -> ColumnElement[bool]:
    """A WHERE clause for `text` on the `dialect` ("postgresql" or "sqlite"); FilterError else."""
    problem = text_problem(text)
    if problem:
        raise FilterError(problem)
    try:
        expression = parse(text)
    except ExpressionSyntaxError as error:
        raise FilterError(error.message, error.position) from None
    json = _Postgres() if dialect == "postgresql" else _Sqlite()
    return _condition(expression.tree, json)


def _condition(node: Any, json: _Json) -> ColumnElement[bool]:
    match node:
        case Logical("and", operands):
            return and_(*[_condition(operand, json) for operand in operands])
        case Logical("or", operands):
            return or_(*[_condition(operand, json) for operand in operands])
        case Unary("not", operand, _):
            return not_(_condition(operand, json))
        case Compare(op, left, right, pos):
            return _comparison(op, left, right, pos, json)
        case Path():
            shown = _shown(node)
            raise FilterError(f"A path alone is not a filter; compare it, e.g. {shown} == true.")
    raise FilterError(f"This filter cannot be searched in the database. {SUPPORTED}")


def _comparison(op: str, left: Any, right: Any, pos: int, json: _Json) -> ColumnElement[bool]:
    if op in ("in", "not in"):
        if not isinstance(left, Path) or not isinstance(right, List):
            raise FilterError(f"Use 'path in [values]' at position {pos}. {SUPPORTED}", pos)
        path = _path(left)
        found = or_(false(), *[json.equals(path, _value(item, pos)) for item in right.items])
        return found if op == "in" else not_(found)
    if isinstance(right, Path) and not isinstance(left, Path):
        left, right, op = right, left, FLIPPED[op]
    if not isinstance(left, Path) or isinstance(right, Path):
        raise FilterError(f"Compare one data path with a value at position {pos}. {SUPPORTED}", pos)
    path, value = _path(left), _value(right, pos)
    if op == "==":
        return json.equals(path, value)
    if op == "!=":
        return not_(json.equals(path, value))
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise FilterError(f"'{op}' needs a number or a text to compare with, at position {pos}.")
    return json.ordered(path, op, value)


def _shown(path: Path) -> str:
    return path.root + "".join(f".{s}" if isinstance(s, str) else f"[{s}]" for s in path.segments)


def _path(node: Path) -> Target:
    column = COLUMNS.get(node.root)
    if column is None:
        raise FilterError(f"{node.root} is not stored on instances; use $vars, $input or $nodes.")
    if not node.segments:
        raise FilterError(f"Name a value inside {node.root}, e.g. {node.root}.amount.")
    for segment in node.segments:
        if isinstance(segment, str) and ('"' in segment or "\\" in segment):
            raise FilterError(f"The key {segment!r} cannot be searched (quotes or backslashes).")
    return column, node.segments


def _value(node: Any, pos: int) -> Any:
    if isinstance(node, Unary) and node.op == "-" and isinstance(node.operand, Literal):
        value = node.operand.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return -value
    if not isinstance(node, Literal):
        message = f"Compare with a value (number, 'text', true, false, null) at position {pos}."
        raise FilterError(message, pos)
    return node.value


Target = tuple[SQLColumnExpression[Any], tuple[str | int, ...]]


class _Json:
    """How one database reads a JSON path: its type name and its value."""

    NUMBER: tuple[str, ...]
    TEXT: str

    def kind(self, path: Target) -> ColumnElement[Any]:
        raise NotImplementedError

    def scalar(self, path: Target, kind: str) -> ColumnElement[Any]:
        raise NotImplementedError

    def equals(self, path: Target, value: Any) -> ColumnElement[bool]:
        kind = self.kind(path)
        if value is None:
            return or_(kind.is_(None), kind == "null")
        if isinstance(value, bool):
            return func.coalesce(kind == self.boolean(value), false())
        if isinstance(value, str):
            return func.coalesce(self._typed(path, "text") == value, false())
        return func.coalesce(self._typed(path, "number") == self.number(value), false())

    def ordered(self, path: Target, op: str, value: int | float | str) -> ColumnElement[bool]:
        typed = self._typed(path, "text" if isinstance(value, str) else "number")
        bound = value if isinstance(value, str) else self.number(value)
        return _OPERATORS[op](typed, bound)

    def number(self, value: int | float) -> ColumnElement[Any]:
        return literal(value)

    def boolean(self, value: bool) -> str:
        return "true" if value else "false"

    def _typed(self, path: Target, kind: str) -> ColumnElement[Any]:
        """The value when its JSON type is `kind`, else NULL (which never compares true)."""
        names = self.NUMBER if kind == "number" else (self.TEXT,)
        return case((self.kind(path).in_(names), self.scalar(path, kind)), else_=None)


class _Postgres(_Json):
    """JSONB: equality and number order compare jsonb values (numeric, no text casts); text
    order compares the text with the "C" collation, which is code point order as in Python."""

    NUMBER = ("number",)
    TEXT = "string"

    def element(self, path: Target) -> ColumnElement[Any]:
        column, segments = path
        return column.op("#>", return_type=JSONB)(_pg_path(segments))

    def kind(self, path: Target) -> ColumnElement[Any]:
        return func.jsonb_typeof(self.element(path))

    def equals(self, path: Target, value: Any) -> ColumnElement[bool]:
        if value is None:
            return super().equals(path, value)
        return func.coalesce(self.element(path) == literal(value, JSONB), false())

    def ordered(self, path: Target, op: str, value: int | float | str) -> ColumnElement[bool]:
        if isinstance(value, str):
            return super().ordered(path, op, value)
        compared = _OPERATORS[op](self.element(path), literal(value, JSONB))
        return and_(self.kind(path) == "number", compared)

    def scalar(self, path: Target, kind: str) -> ColumnElement[Any]:
        column, segments = path
        return column.op("#>>", return_type=Text)(_pg_path(segments)).collate("C")


class _Sqlite(_Json):
    NUMBER = ("integer", "real")
    TEXT = "text"

    def kind(self, path: Target) -> ColumnElement[Any]:
        column, segments = path
        return func.json_type(column, _sqlite_path(segments))

    def scalar(self, path: Target, kind: str) -> ColumnElement[Any]:
        column, segments = path
        return func.json_extract(column, _sqlite_path(segments))

    def number(self, value: int | float) -> ColumnElement[Any]:
        """SQLite binds 64-bit integers; beyond, it compares as a float (or an infinity beyond
        the float range, which orders the same against every stored number)."""
        if isinstance(value, int) and abs(value) > INT64:
            try:
                value = float(value)
            except OverflowError:
                value = math.inf if value > 0 else -math.inf
        return literal(value)


def _pg_path(segments: tuple[str | int, ...]) -> ColumnElement[Any]:
    return literal([str(segment) for segment in segments], ARRAY(Text))


def _sqlite_path(segments: tuple[str | int, ...]) -> str:
    parts = ["$"]
    for segment in segments:
        if isinstance(segment, str):
            parts.append(f'."{segment}"')
        else:
            parts.append(f"[{segment}]" if segment >= 0 else f"[#{segment}]")
    return "".join(parts)


_OPERATORS: dict[str, Callable[[Any, Any], ColumnElement[bool]]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}
