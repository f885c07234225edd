"""Flowdesk scripts: one assignment per line, ``name = expression``, in the expression language.

A script task runs its script in one engine step: the lines are evaluated in order, each sees the
assignments of the lines before it in ``$vars``, and the result is the dict of assigned values.
Every expression is parsed and evaluated by :mod:`webapp.process.expressions` (its limits, its
errors); the script adds a bound on its own length, its lines and the size of what it builds, so a
run always finishes quickly. Every failure is a :class:`ScriptError` naming the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

from webapp.process import expressions
from webapp.process.expressions import Expression, ExpressionError

MAX_LENGTH = 20_000
MAX_LINES = 200
# Nodes plus text characters the assigned values may hold together (shared parts counted
# each time they appear, as they will be when stored).
MAX_SIZE = 1_000_000

_ASSIGNMENT = re.compile(r"\s*(\$vars\s*\.\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)(.*)", re.DOTALL)
_LEFT = re.compile(r"\s*(\$?[A-Za-z_][A-Za-z0-9_.$\[\]'\" ]*?)\s*(==|!=|<=|>=|=)")


class ScriptError(Exception):
    """A script failed to parse or evaluate; ``line`` is 1-based (None: the whole script)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.line)


@dataclass(frozen=True, slots=True)
class Assignment:
    """One line of a script: the variable it writes and the parsed expression."""

    line: int
    name: str
    expression: Expression


@dataclass(frozen=True, slots=True)
class Script:
    """A parsed script: its text and its assignments in order."""

    text: str
    assignments: tuple[Assignment, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The variables the script writes, first assignment first, each once."""
        return tuple(dict.fromkeys(item.name for item in self.assignments))

    @property
    def paths(self) -> frozenset[tuple[str, ...]]:
        """Every data path the script's expressions read."""
        return frozenset(path for item in self.assignments for path in item.expression.paths)

    def evaluate(
        self, context: Mapping[str, Any], *, now: datetime | None = None
    ) -> dict[str, Any]:
        """Run the script against ``context``; see :func:`evaluate`."""
        return evaluate(self, context, now=now)


def parse(text: str) -> Script:
    """Parse script text (cached); raises ScriptError naming the line."""
    if not isinstance(text, str):
        raise ScriptError(f"script must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ScriptError(f"script is too long ({len(text)} characters; the limit is {MAX_LENGTH})")
    return _parse(text)


@lru_cache(maxsize=512)
def _parse(text: str) -> Script:
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise ScriptError(f"script has too many lines ({len(lines)}; the limit is {MAX_LINES})")
    assignments = []
    for number, raw in enumerate(lines, start=1):
        line = raw.removesuffix("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        assignments.append(_assignment(line, number))
    if not assignments:
        raise ScriptError("script has no assignments; write one 'name = expression' per line")
    return Script(text, tuple(assignments))


def _assignment(line: str, number: int) -> Assignment:
    match = _ASSIGNMENT.fullmatch(line)
    if match is None:
        raise ScriptError(_not_an_assignment(line), number)
    name, source = match.group(2), match.group(3).strip()
    if not source:
        raise ScriptError(f"nothing after '=' in the assignment to '{name}'", number)
    try:
        expression = expressions.parse(source)
    except ExpressionError as exc:
        raise ScriptError(f"in the value of '{name}': {exc.message}", number) from None
    return Assignment(number, name, expression)


def _not_an_assignment(line: str) -> str:
    """Explain why ``line`` is no ``name = expression``."""
    expected = "expected 'name = expression' (a name such as total or $vars.total)"
    left = _LEFT.match(line)
    if left is None:
        return expected
    target, sign = left.group(1).strip(), left.group(2)
    if sign != "=":
        return f"{expected}; '{sign}' compares, '=' assigns"
    shown = target if len(target) <= 40 else target[:37] + "..."
    return f"cannot assign to '{shown}'; {expected}"


def check(text: str) -> ScriptError | None:
    """Return the error of ``text``, or None when it parses."""
    try:
        parse(text)
    except ScriptError as exc:
        return exc
    return None


def evaluate(
    script: str | Script, context: Mapping[str, Any], *, now: datetime | None = None
) -> dict[str, Any]:
    """Run the assignments in order against ``context`` (``$input``, ``$vars``, ``$nodes``, ...).

    Each line sees the values assigned before it in ``$vars``; returns the assigned values.
    Raises ScriptError naming the line on any evaluation error or when the values grow too large.
    """
    parsed = script if isinstance(script, Script) else parse(script)
    data = dict(context) if isinstance(context, Mapping) else {}
    base = data.get("$vars")
    variables = dict(base) if isinstance(base, Mapping) else {}
    assigned: dict[str, Any] = {}
    sizes = _Sizes()
    for item in parsed.assignments:
        data["$vars"] = variables
        try:
            value = expressions.evaluate(item.expression, data, now=now)
        except ExpressionError as exc:
            raise ScriptError(f"in the value of '{item.name}': {exc.message}", item.line) from None
        except (RecursionError, MemoryError):
            raise ScriptError(f"the value of '{item.name}' is too large", item.line) from None
        assigned[item.name] = variables[item.name] = value
        if sizes.total(assigned.values()) > MAX_SIZE:
            message = (
                f"the assigned values grow too large (more than {MAX_SIZE} items and characters)"
            )
            raise ScriptError(f"{message} at '{item.name}'", item.line)
    return assigned


class _Sizes:
    """Sizes of values built during one run, remembered per object so shared parts cost once."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[Any, int]] = {}

    def total(self, values: Any) -> int:
        total = 0
        for value in values:
            total += self.size(value)
            if total > MAX_SIZE:
                break
        return total

    def size(self, value: Any) -> int:
        if isinstance(value, str):
            return 1 + len(value)
        if not isinstance(value, list | tuple | Mapping):
            return 1
        known = self.known.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        total = 1
        # Post-order walk without recursion: nesting depth is bounded only by the size budget.
        stack: list[tuple[Any, Any]] = [(value, iter(_children(value)))]
        counts = [1]
        while stack:
            current, children = stack[-1]
            child = next(children, _DONE)
            if child is _DONE:
                stack.pop()
                total = counts.pop()
                self.known[id(current)] = (current, total)
                if counts:
                    counts[-1] += total
                    if counts[-1] > MAX_SIZE:
                        return MAX_SIZE + 1
                continue
            if isinstance(child, list | tuple | Mapping):
                seen = self.known.get(id(child))
                if seen is not None and seen[0] is child:
                    counts[-1] += seen[1]
                elif len(stack) > expressions.MAX_ITEMS:
                    return MAX_SIZE + 1
                else:
                    stack.append((child, iter(_children(child))))
                    counts.append(1)
            else:
                counts[-1] += self.size(child)
            if counts[-1] > MAX_SIZE:
                return MAX_SIZE + 1
        return total


_DONE = object()


def _children(value: Any) -> Any:
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield key
            yield item
    else:
        yield from value
