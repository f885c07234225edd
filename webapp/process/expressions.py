"""Flowdesk's expression language: small, safe conditions and values over instance data.

A hand-written tokenizer and recursive-descent parser build an immutable tree that a tree walker
evaluates against ``$input``, ``$vars`` and ``$nodes``. Python's eval is never used; text length,
nesting depth, numbers and string/list sizes are bounded so every evaluation finishes quickly.
"""

from __future__ import annotations

import math
import operator
import re
from collections import namedtuple
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from functools import lru_cache
from typing import Any, NoReturn

MAX_LENGTH = 2000
MAX_DEPTH = 50
MAX_STRING = 100_000
MAX_ITEMS = 100_000
MAX_INT_BITS = 1024

# `$form` holds the values of the form being filled in (visibleIf, defaults); validation
# allows it only in form expressions. `$item` and `$loop` (index, count, completed, active) are
# the element and counters of a multi-instance activity; validation allows them only inside one.
# `$instance` is the running instance itself: its business key (what Camunda 7 correlates
# messages on). `$cell` is the input value a decision table's input entry tests; validation
# allows it only there. `$gateway` (waiting, arrived) counts the incoming flows of a complex
# gateway without and with a token; validation allows it only in that gateway's activation
# condition.
ROOTS = ("$input", "$vars", "$nodes", "$instance", "$item", "$loop", "$gateway", "$form", "$cell")
LOOP_FIELDS = ("index", "count", "completed", "active")
GATEWAY_FIELDS = ("waiting", "arrived")
INSTANCE_FIELDS = ("businessKey",)
FUNCTIONS: dict[str, int] = {"contains": 2, "date": 1, "len": 1, "lower": 1, "now": 0, "upper": 1}
FUNCTIONS["keys"] = 1  # an object's keys, in order (what a Python `.keys()` in a DMN entry reads)
_CONSTANTS: dict[str, Any] = {"true": True, "false": False, "null": None}
_KEYWORDS = frozenset({"and", "or", "not", "in", *_CONSTANTS})


class ExpressionError(Exception):
    """An expression failed to parse or evaluate; carries its text and, when known, a position."""

    def __init__(
        self, message: str, expression: str | None = None, position: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.expression = expression
        self.position = position

    def __str__(self) -> str:
        if self.expression is None:
            return self.message
        text = self.expression if len(self.expression) <= 200 else self.expression[:197] + "..."
        return f"{self.message} (expression: {text})"

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.expression, self.position)


class ExpressionSyntaxError(ExpressionError):
    """The text is not a valid expression; ``position`` is the 0-based character offset."""


# --- syntax tree: small immutable nodes, public for translators (such as the SQL data filter) ---

Literal = namedtuple("Literal", "value")
List = namedtuple("List", "items")
Path = namedtuple("Path", "root segments")
Unary = namedtuple("Unary", "op operand pos")
Logical = namedtuple("Logical", "op operands")
Arith = namedtuple("Arith", "first rest")  # rest: ((op, pos, operand), ...), left to right
Compare = namedtuple("Compare", "op left right pos")
Call = namedtuple("Call", "name args pos")


@dataclass(frozen=True, slots=True)
class Expression:
    """A parsed expression: its text, the data paths it reads, and its syntax tree.

    ``paths`` keep name segments only (list indexes are skipped): ``("$input", "items", "price")``.
    """

    text: str
    paths: frozenset[tuple[str, ...]]
    tree: Any = field(repr=False, compare=False)

    def evaluate(self, context: Mapping[str, Any], *, now: datetime | None = None) -> Any:
        """Evaluate against ``context``; see :func:`evaluate`."""
        return evaluate(self, context, now=now)


# --- tokenizer ---------------------------------------------------------------------------------


_Token = namedtuple("_Token", "kind value pos source")  # kind: number string name root op end

_NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = ("==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "(", ")", "[", "]", ",", ".")
_HINTS = {"=": "use '==' to compare", "&": "use 'and'", "|": "use 'or'", "!": "use 'not'"}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r"}
_ROOT_HINT = f"paths start with {', '.join(ROOTS[:-1])} or {ROOTS[-1]}"


def _syntax(message: str, pos: int) -> ExpressionSyntaxError:
    return ExpressionSyntaxError(message, None, pos)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        char = text[pos]
        if char.isspace():
            pos += 1
        elif number := _NUMBER_RE.match(text, pos):
            tokens.append(_Token("number", _number(number.group(), pos), pos, number.group()))
            pos = number.end()
        elif char in "'\"":
            value, end = _string(text, pos)
            tokens.append(_Token("string", value, pos, text[pos:end]))
            pos = end
        elif char == "$":
            name = _NAME_RE.match(text, pos + 1)
            if name is None:
                raise _syntax(f"expected a name after '$' at position {pos}; {_ROOT_HINT}", pos)
            root = "$" + name.group()
            if root not in ROOTS:
                raise _syntax(f"unknown root '{root}' at position {pos}; {_ROOT_HINT}", pos)
            tokens.append(_Token("root", root, pos, root))
            pos = name.end()
        elif name := _NAME_RE.match(text, pos):
            tokens.append(_Token("name", name.group(), pos, name.group()))
            pos = name.end()
        else:
            op = next((op for op in _OPERATORS if text.startswith(op, pos)), None)
            if op is None:
                hint = f"; {_HINTS[char]}" if char in _HINTS else ""
                raise _syntax(f"unexpected {char!r} at position {pos}{hint}", pos)
            tokens.append(_Token("op", op, pos, op))
            pos += len(op)
    tokens.append(_Token("end", None, len(text), ""))
    return tokens


def _number(source: str, pos: int) -> int | float:
    value: int | float
    if any(char in source for char in ".eE"):
        value = float(source)
        too_large = not math.isfinite(value)
    else:
        value = int(source)
        too_large = value.bit_length() > MAX_INT_BITS
    if too_large:
        raise _syntax(f"number too large at position {pos}", pos)
    return value


def _string(text: str, start: int) -> tuple[str, int]:
    quote, pos = text[start], start + 1
    chars: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == quote:
            return "".join(chars), pos + 1
        if char == "\\":
            escaped = text[pos + 1 : pos + 2]
            if not escaped:
                break
            if escaped not in _ESCAPES:
                raise _syntax(f"unknown escape '\\{escaped}' at position {pos}", pos)
            chars.append(_ESCAPES[escaped])
            pos += 2
            continue
        chars.append(char)
        pos += 1
    raise _syntax(f"unterminated string starting at position {start}", start)


# --- parser ------------------------------------------------------------------------------------

_COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")
_ARITHMETIC = (("+", "-"), ("*", "/"))  # lowest precedence first


class _Parser:
    """Recursive descent, one method per precedence level (lowest first: or, and, not, ...)."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
        self.index = 0
        self.depth = 0
        self.paths: set[tuple[str, ...]] = set()

    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def advance(self) -> _Token:
        token = self.peek()
        self.index = min(self.index + 1, len(self.tokens) - 1)
        return token

    def at(self, kind: str, value: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token.kind == kind and token.value == value

    def accept(self, kind: str, value: str) -> bool:
        found = self.at(kind, value)
        if found:
            self.advance()
        return found

    def nest(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _syntax(f"expression nested too deeply at position {pos}", pos)

    def unexpected(self, token: _Token) -> ExpressionSyntaxError:
        if token.kind == "end":
            return _syntax(f"unexpected end of expression at position {token.pos}", token.pos)
        shown = token.source if len(token.source) <= 20 else token.source[:17] + "..."
        return _syntax(f"unexpected {shown!r} at position {token.pos}", token.pos)

    def close(self, char: str, opener: _Token) -> None:
        if self.at("op", char):
            self.advance()
        elif self.peek().kind == "end":
            message = f"missing '{char}' to close '{opener.value}' at position {opener.pos}"
            raise _syntax(message, opener.pos)
        else:
            raise self.unexpected(self.peek())

    def parse(self) -> Any:
        tree = self.expression()
        if self.peek().kind != "end":
            raise self.unexpected(self.peek())
        return tree

    def expression(self) -> Any:
        self.nest(self.peek().pos)
        operands = [self.conjunction()]
        while self.accept("name", "or"):
            operands.append(self.conjunction())
        self.depth -= 1
        return Logical("or", tuple(operands)) if len(operands) > 1 else operands[0]

    def conjunction(self) -> Any:
        operands = [self.negation()]
        while self.accept("name", "and"):
            operands.append(self.negation())
        return Logical("and", tuple(operands)) if len(operands) > 1 else operands[0]

    def negation(self) -> Any:
        if not self.at("name", "not"):
            return self.comparison()
        token = self.advance()
        self.nest(token.pos)
        operand = self.negation()
        self.depth -= 1
        return Unary("not", operand, token.pos)

    def comparison_op(self) -> tuple[str | None, int]:
        token = self.peek()
        if token.kind == "op" and token.value in _COMPARISONS:
            return token.value, 1
        if self.at("name", "in"):
            return "in", 1
        if self.at("name", "not") and self.at("name", "in", 1):
            return "not in", 2
        return None, 0

    def comparison(self) -> Any:
        left = self.arithmetic()
        op, width = self.comparison_op()
        if op is None:
            return left
        pos = self.peek().pos
        self.index += width
        right = self.arithmetic()
        if self.comparison_op()[0] is not None:
            pos = self.peek().pos
            raise _syntax(f"comparisons cannot be chained at position {pos}; use 'and'", pos)
        return Compare(op, left, right, pos)

    def arithmetic(self, level: int = 0) -> Any:
        inner = level + 1 < len(_ARITHMETIC)
        first, rest = self.arithmetic(level + 1) if inner else self.unary(), []
        while (token := self.peek()).kind == "op" and token.value in _ARITHMETIC[level]:
            self.advance()
            operand = self.arithmetic(level + 1) if inner else self.unary()
            rest.append((token.value, token.pos, operand))
        return Arith(first, tuple(rest)) if rest else first

    def unary(self) -> Any:
        if not self.at("op", "-"):
            return self.primary()
        token = self.advance()
        self.nest(token.pos)
        operand = self.unary()
        self.depth -= 1
        return Unary("-", operand, token.pos)

    def primary(self) -> Any:
        token = self.peek()
        if token.kind in ("number", "string"):
            self.advance()
            return Literal(token.value)
        if token.kind == "root":
            return self.path()
        if token.kind == "name":
            return self.name()
        if token.kind == "op" and token.value in ("(", "["):
            self.advance()
            if token.value == "(":
                tree = self.expression()
                self.close(")", token)
                return tree
            return List(self.items("]", token))
        raise self.unexpected(token)

    def items(self, closer: str, opener: _Token) -> tuple[Any, ...]:
        items = []
        if not self.at("op", closer):
            items.append(self.expression())
            while self.accept("op", ","):
                items.append(self.expression())
        self.close(closer, opener)
        return tuple(items)

    def name(self) -> Any:
        token = self.advance()
        name = token.value
        if name in _CONSTANTS:
            return Literal(_CONSTANTS[name])
        if name in FUNCTIONS:
            return self.call(token)
        if name in _KEYWORDS:
            raise self.unexpected(token)
        if self.at("op", "("):
            known = ", ".join(FUNCTIONS)
            message = f"unknown function '{name}' at position {token.pos}; available: {known}"
            raise _syntax(message, token.pos)
        if name.lower() in _CONSTANTS or name.lower() in FUNCTIONS:
            hint = f"did you mean '{name.lower()}'?"
        else:
            hint = _ROOT_HINT
        raise _syntax(f"unknown name '{name}' at position {token.pos}; {hint}", token.pos)

    def call(self, token: _Token) -> Call:
        if not self.at("op", "("):
            pos = self.peek().pos
            raise _syntax(f"expected '(' after '{token.value}' at position {pos}", pos)
        args = self.items(")", self.advance())
        expected = FUNCTIONS[token.value]
        if len(args) != expected:
            plural = "" if expected == 1 else "s"
            message = (
                f"{token.value}() at position {token.pos} takes {expected} argument{plural}, "
                f"got {len(args)}"
            )
            raise _syntax(message, token.pos)
        return Call(token.value, args, token.pos)

    def path(self) -> Path:
        root = self.advance().value
        segments: list[str | int] = []
        names = [root]
        while True:
            if self.accept("op", "."):
                token = self.peek()
                if token.kind != "name":
                    message = f"expected a name after '.' at position {token.pos}"
                    raise _syntax(message, token.pos)
                self.advance()
                segments.append(token.value)
                names.append(token.value)
            elif self.at("op", "["):
                opener = self.advance()
                key = self.index_key()
                self.close("]", opener)
                segments.append(key)
                if isinstance(key, str):
                    names.append(key)
            else:
                break
        self.paths.add(tuple(names))
        return Path(root, tuple(segments))

    def index_key(self) -> str | int:
        negative = self.accept("op", "-")
        token = self.peek()
        if token.kind == "number" and isinstance(token.value, int):
            self.advance()
            return -token.value if negative else token.value
        if token.kind == "string" and not negative:
            self.advance()
            return token.value
        message = f"expected a whole number or a quoted key at position {token.pos}"
        raise _syntax(message, token.pos)


def parse(text: str) -> Expression:
    """Parse expression text (cached); raises ExpressionSyntaxError with a position."""
    if not isinstance(text, str):
        raise ExpressionSyntaxError(f"expression must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        message = f"expression is too long ({len(text)} characters; the limit is {MAX_LENGTH})"
        raise ExpressionSyntaxError(message, text, MAX_LENGTH)
    return _parse(text)


@lru_cache(maxsize=2048)
def _parse(text: str) -> Expression:
    try:
        if not text.strip():
            raise _syntax("expression is empty", 0)
        parser = _Parser(text)
        tree = parser.parse()
    except ExpressionSyntaxError as exc:
        exc.expression = text
        raise
    except RecursionError:
        raise ExpressionSyntaxError("expression nested too deeply", text) from None
    return Expression(text, frozenset(parser.paths), tree)


def check(text: str) -> ExpressionSyntaxError | None:
    """Return the syntax error of ``text``, or None when it parses."""
    try:
        parse(text)
    except ExpressionSyntaxError as exc:
        return exc
    return None


# --- evaluation --------------------------------------------------------------------------------


def evaluate(
    expr: str | Expression, context: Mapping[str, Any], *, now: datetime | None = None
) -> Any:
    """Evaluate against ``{"$input": ..., "$vars": ..., "$nodes": ...}``; missing paths are None.

    Raises ExpressionError (with the text) on type errors; ``now`` pins what ``now()`` returns.
    """
    expression = expr if isinstance(expr, Expression) else parse(expr)
    data = context if isinstance(context, Mapping) else {}
    try:
        return _eval(expression.tree, data, now)
    except ExpressionError as exc:
        exc.expression = expression.text
        raise
    except RecursionError:
        raise ExpressionError("expression nested too deeply", expression.text) from None


def _fail(message: str, pos: int | None = None) -> NoReturn:
    raise ExpressionError(message, None, pos)


def _eval(node: Any, data: Mapping[str, Any], now: datetime | None) -> Any:
    match node:
        case Literal(value):
            return value
        case Path(root, segments):
            return _lookup(data.get(root), segments)
        case Logical(op, operands):
            stop = op == "or"
            for operand in operands:
                if bool(_eval(operand, data, now)) is stop:
                    return stop
            return not stop
        case Compare(op, left, right, pos):
            return _compare(op, _eval(left, data, now), _eval(right, data, now), pos)
        case Arith(first, rest):
            value = _eval(first, data, now)
            for op, pos, operand in rest:
                value = _arith(op, value, _eval(operand, data, now), pos)
            return value
        case Unary("not", operand):
            return not _eval(operand, data, now)
        case Unary(_, operand, pos):
            value = _eval(operand, data, now)
            if _kind(value) != "number":
                _fail(f"cannot negate {_kind(value)}{_null_hint(value)}", pos)
            return _checked_number(-value, pos)
        case List(items):
            return [_eval(item, data, now) for item in items]
        case Call(name, args, pos):
            values = [_eval(arg, data, now) for arg in args]
            if name == "now":
                return now if now is not None else datetime.now(UTC)
            try:
                return _CALLS[name](*values)
            except ExpressionError as exc:
                exc.position = pos
                raise
    raise AssertionError(f"unknown node {node!r}")


def _lookup(value: Any, segments: tuple[str | int, ...]) -> Any:
    for segment in segments:
        if value is None:
            return None
        if isinstance(segment, str):
            value = value.get(segment) if isinstance(value, Mapping) else None
        elif isinstance(value, list | tuple) and -len(value) <= segment < len(value):
            value = value[segment]
        else:
            return None
    return value


_KINDS = (
    (type(None), "null"),
    (bool, "boolean"),
    (int | float, "number"),
    (str, "text"),
    (list | tuple, "list"),
    (Mapping, "object"),
    (date, "date"),
)
_KIND_OF_TYPE = {type(None): "null", bool: "boolean", int: "number", float: "number", str: "text"}
_KIND_OF_TYPE |= {list: "list", tuple: "list", dict: "object", date: "date", datetime: "date"}


def _kind(value: Any) -> str:
    """Name a value's type the way modellers see it."""
    kind = _KIND_OF_TYPE.get(type(value))
    if kind is None:
        kind = next((name for types, name in _KINDS if isinstance(value, types)), None)
    return kind or type(value).__name__


def _null_hint(*values: Any) -> str:
    return " (a value may be missing)" if any(value is None for value in values) else ""


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _as_datetime(value: Any) -> datetime | None:
    """Read a datetime, date or ISO-8601 text as an aware datetime (naive means UTC)."""
    if isinstance(value, datetime):
        result = value
    elif isinstance(value, date):
        result = datetime.combine(value, time())
    elif isinstance(value, str) and len(value) <= 100:
        try:
            result = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    return result if result.utcoffset() is not None else result.replace(tzinfo=UTC)


def _equal(left: Any, right: Any) -> bool:
    """Structural equality that never raises: booleans are not numbers, dates match ISO text."""
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if a is b:
            continue
        if type(a) is type(b) and type(a) in (str, int, float, bool):
            if a != b:
                return False
            continue
        kind_a, kind_b = _kind(a), _kind(b)
        if "date" in (kind_a, kind_b):
            date_a, date_b = _as_datetime(a), _as_datetime(b)
            if date_a is None or date_b is None or date_a != date_b:
                return False
        elif kind_a != kind_b:
            return False
        elif kind_a == "list":
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b))
        elif kind_a == "object":
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif a != b:
            return False
    return True


def values_equal(left: Any, right: Any) -> bool:
    """Whether two values are equal as ``==`` in an expression sees them."""
    return _equal(left, right)


_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_ARITH_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}


def _compare(op: str, left: Any, right: Any, pos: int) -> bool:
    if op in ("==", "!="):
        return _equal(left, right) is (op == "==")
    if op in ("in", "not in"):
        return _contains(right, left, pos) is (op == "in")
    kind_l, kind_r = _kind(left), _kind(right)
    if kind_l == kind_r and kind_l in ("number", "text"):
        return _ORDER[op](left, right)
    if "date" in (kind_l, kind_r) and {kind_l, kind_r} <= {"date", "text"}:
        date_l, date_r = _as_datetime(left), _as_datetime(right)
        if date_l is None or date_r is None:
            bad = left if date_l is None else right
            _fail(f"cannot compare a date with {_show(bad)}: not an ISO date", pos)
        return _ORDER[op](date_l, date_r)
    message = f"cannot compare {kind_l} and {kind_r} with '{op}'{_null_hint(left, right)}"
    _fail(message, pos)


def _contains(container: Any, item: Any, pos: int | None = None) -> bool:
    if isinstance(container, str):
        if not isinstance(item, str):
            _fail(f"cannot look for {_kind(item)} in text{_null_hint(item)}", pos)
        return item in container
    if isinstance(container, list | tuple):
        if item is None or (isinstance(item, str) and _as_datetime(item) is None):
            return item in container  # exact here, and much faster than comparing one by one
        if _kind(item) == "number" and item not in container:
            return False
        # Only values of one kind are equal (a date and ISO text aside): skipping elements of
        # other kinds keeps a look-up in a long list from costing an _equal per element.
        if isinstance(item, bool):
            return any(element is item for element in container)
        if isinstance(item, list | tuple | Mapping):
            kinds = (list, tuple) if isinstance(item, list | tuple) else (Mapping,)
            if not any(issubclass(kind, kinds) for kind in set(map(type, container))):
                return False
            return any(_equal(item, e) for e in container if isinstance(e, kinds))
        return any(_equal(item, element) for element in container)
    if isinstance(container, Mapping):
        return isinstance(item, str) and item in container
    _fail(f"cannot look for a value in {_kind(container)}{_null_hint(container)}", pos)


def _checked_number(value: int | float, pos: int | None) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        _fail("number out of range", pos)
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        _fail("number out of range", pos)
    return value


def _arith(op: str, left: Any, right: Any, pos: int) -> Any:
    kind_l, kind_r = _kind(left), _kind(right)
    if op == "+" and kind_l == kind_r == "text":
        if len(left) + len(right) > MAX_STRING:
            _fail(f"text result longer than {MAX_STRING} characters", pos)
        return left + right
    if op == "+" and kind_l == kind_r == "list":
        if len(left) + len(right) > MAX_ITEMS:
            _fail(f"list result longer than {MAX_ITEMS} items", pos)
        return [*left, *right]
    if kind_l != "number" or kind_r != "number":
        _fail(f"cannot apply '{op}' to {kind_l} and {kind_r}{_null_hint(left, right)}", pos)
    if op == "/" and right == 0:
        _fail("division by zero", pos)
    try:
        return _checked_number(_ARITH_OPS[op](left, right), pos)
    except OverflowError:
        _fail("number out of range", pos)


def _text_function(name: str, method: Callable[[str], str]) -> Callable[[Any], str]:
    def apply(value: Any) -> str:
        if not isinstance(value, str):
            _fail(f"{name}() needs text, got {_kind(value)}{_null_hint(value)}")
        result = method(value)
        if len(result) > MAX_STRING:
            _fail(f"text result longer than {MAX_STRING} characters")
        return result

    return apply


def _len(value: Any) -> int:
    if not isinstance(value, str | list | tuple | Mapping):
        _fail(f"len() needs text, a list or an object, got {_kind(value)}{_null_hint(value)}")
    return len(value)


def _keys(value: Any) -> list[str]:
    if not isinstance(value, Mapping):
        _fail(f"keys() needs an object, got {_kind(value)}{_null_hint(value)}")
    return [str(key) for key in value]


def _date(value: Any) -> datetime:
    result = _as_datetime(value)
    if result is None:
        if isinstance(value, str):
            _fail(f"date() cannot read {_show(value)} as an ISO date")
        _fail(f"date() needs text, got {_kind(value)}{_null_hint(value)}")
    return result


_CALLS: dict[str, Callable[..., Any]] = {
    "contains": _contains,
    "date": _date,
    "keys": _keys,
    "len": _len,
    "lower": _text_function("lower", str.lower),
    "upper": _text_function("upper", str.upper),
}
