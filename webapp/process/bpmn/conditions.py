"""Translate foreign BPMN expressions (JUEL, FEEL, SpiffWorkflow Python) into our language.

Only simple expressions translate: variable paths, literals, comparisons, arithmetic and boolean
combinations. Anything else (method calls, indexing, `empty`, FEEL ranges...) is returned unchanged
with `ok=False`, so validation reports it instead of the importer silently guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from webapp.process import expressions

from .namespaces import FLOWDESK_LANGUAGE

JUEL, FEEL, PYTHON, PLAIN, OURS = "juel", "feel", "python", "plain", "flowdesk"

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d+)?)
    | (?P<str>'[^'\\]*'|"[^"\\]*")
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[<>!=().,+\-*/])
    )""",
    re.VERBOSE,
)
_JUEL_WRAPPED = re.compile(r"^\s*[$#]\{(?P<body>.*)\}\s*$", re.DOTALL)
_ISO_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)

_LITERALS = {
    JUEL: {"true": "true", "false": "false", "null": "null"},
    FEEL: {"true": "true", "false": "false", "null": "null"},
    PYTHON: {"True": "true", "False": "false", "None": "null"},
}
_LITERALS[PLAIN] = {**_LITERALS[JUEL], **_LITERALS[PYTHON]}
_WORD_OPS = {
    JUEL: {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">="},
    FEEL: {},
    PYTHON: {},
    PLAIN: {},
}
_SYMBOL_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_RESERVED = {"and", "or", "not", "in", "is", "true", "false", "null", "empty", "div", "mod"}


@dataclass(frozen=True)
class Translation:
    """Result of a translation: `text` is ours when `ok`, else the original text unchanged."""

    text: str
    ok: bool
    dialect: str


class _Untranslatable(Exception):
    """Raised inside the parser when the expression leaves the simple subset."""


#: Camunda's multi-instance counters and what they are called here.
_LOOP_NAMES = {
    "loopCounter": "$loop.index",
    "nrOfInstances": "$loop.count",
    "nrOfCompletedInstances": "$loop.completed",
    "nrOfActiveInstances": "$loop.active",
}


def detect_dialect(text: str, language: str | None = None) -> str:
    """Guess the dialect from the `language` attribute and the text's shape."""
    lang = (language or "").lower()
    if lang == FLOWDESK_LANGUAGE:
        return OURS
    if _JUEL_WRAPPED.match(text) or "juel" in lang:
        return JUEL
    if text.lstrip().startswith("=") or "feel" in lang:
        return FEEL
    if "python" in lang:
        return PYTHON
    return PLAIN


def translate(text: str, language: str | None = None) -> Translation:
    """Translate one expression; returns the original text with `ok=False` when it cannot."""
    dialect = detect_dialect(text, language)
    if dialect == OURS:
        return Translation(text, True, OURS)
    body = text
    if dialect == JUEL:
        match = _JUEL_WRAPPED.match(text)
        if not match:
            return Translation(text, False, dialect)
        body = match.group("body")
    elif dialect == FEEL:
        body = text.lstrip().removeprefix("=")
    try:
        translated = _Parser(_tokenize(body), dialect).parse()
    except _Untranslatable:
        return Translation(text, False, dialect)
    return _checked(translated, text, dialect)


def translate_value(text: str) -> Translation:
    """Translate a vendor attribute value: `${...}` is an expression, anything else a string."""
    if _JUEL_WRAPPED.match(text) or text.lstrip().startswith("="):
        return translate(text)
    return _checked(quote(text), text, PLAIN)


def translate_date(text: str) -> Translation:
    """Translate a timer `timeDate`: an ISO literal becomes a quoted string, else an expression."""
    stripped = text.strip().strip("\"'")
    if _ISO_DATETIME.match(stripped):
        return Translation(f"'{stripped}'", True, PLAIN)
    return translate(text.strip())


def quote(value: str) -> str:
    """Quote text as one of our string literals (double quotes if it has only single quotes)."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    escaped = escaped.replace("\t", "\\t")
    if "'" in value and '"' not in value:
        return f'"{escaped}"'
    return "'" + escaped.replace("'", "\\'") + "'"


def _checked(translated: str, original: str, dialect: str) -> Translation:
    """Accept a translation only if our parser accepts it (length limits included)."""
    if expressions.check(translated) is not None:
        return Translation(original, False, dialect)
    return Translation(translated, True, dialect)


def _is_atomic(text: str) -> bool:
    """Tell whether `text` has no space outside parentheses and strings (needs no grouping)."""
    depth, quote_char = 0, ""
    for char in text:
        if quote_char:
            quote_char = "" if char == quote_char else quote_char
        elif char in "'\"":
            quote_char = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == " " and depth == 0:
            return False
    return True


def _group(text: str) -> str:
    return text if _is_atomic(text) else f"({text})"


def _group_not(text: str) -> str:
    return f"({text})" if text.startswith("not ") else text


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise _Untranslatable(text[pos:])
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class _Parser:
    """Recursive-descent parser that emits our syntax while it parses."""

    def __init__(self, tokens: list[tuple[str, str]], dialect: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.dialect = dialect

    def parse(self) -> str:
        if not self.tokens:
            raise _Untranslatable("empty")
        out = self._or()
        if self.pos != len(self.tokens):
            raise _Untranslatable(self.tokens[self.pos][1])
        return out

    def _peek(self, offset: int = 0) -> tuple[str, str]:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else ("", "")

    def _accept(self, *values: str) -> str | None:
        kind, value = self._peek()
        if kind in ("op", "name") and value in values:
            self.pos += 1
            return value
        return None

    def _or(self) -> str:
        out = self._and()
        while self._accept("or", *(("||",) if self.dialect == JUEL else ())):
            out = f"{out} or {self._and()}"
        return out

    def _and(self) -> str:
        out = self._not()
        while self._accept("and", *(("&&",) if self.dialect == JUEL else ())):
            out = f"{out} and {self._not()}"
        return out

    def _not(self) -> str:
        if self.dialect in (PYTHON, PLAIN) and self._accept("not"):
            return f"not {_group(self._not())}"
        if self.dialect == FEEL and self._peek() == ("name", "not") and self._peek(1)[1] == "(":
            self.pos += 1
            return f"not {self._primary()}"
        return self._comparison()

    def _comparison(self) -> str:
        left = self._additive()
        op = self._compare_op()
        if op is None:
            return left
        out = f"{_group_not(left)} {op} {_group_not(self._additive())}"
        if self._compare_op(consume=False) is not None:
            raise _Untranslatable("chained comparison")
        return out

    def _compare_op(self, consume: bool = True) -> str | None:
        kind, value = self._peek()
        op: str | None = None
        width = 1
        if kind == "op" and value in _SYMBOL_COMPARE:
            op = value
        elif kind == "op" and value == "=" and self.dialect == FEEL:
            op = "=="
        elif kind == "name" and value in _WORD_OPS[self.dialect]:
            op = _WORD_OPS[self.dialect][value]
        elif kind == "name" and self.dialect in (PYTHON, PLAIN):
            following = self._peek(1)[1]
            if value == "is":
                op, width = ("!=", 2) if following == "not" else ("==", 1)
            elif value == "in":
                op = "in"
        if op is not None and consume:
            self.pos += width
        return op

    def _additive(self) -> str:
        out = self._multiplicative()
        while (op := self._accept("+", "-")) is not None:
            out = f"{_group_not(out)} {op} {_group_not(self._multiplicative())}"
        return out

    def _multiplicative(self) -> str:
        out = self._unary()
        while (op := self._accept("*", "/")) is not None:
            out = f"{_group_not(out)} {op} {_group_not(self._unary())}"
        return out

    def _unary(self) -> str:
        if self.dialect == JUEL and self._accept("!", "not"):
            return f"not {_group(self._unary())}"
        if self._accept("-"):
            return f"-{_group(self._unary())}"
        return self._primary()

    def _primary(self) -> str:
        kind, value = self._peek()
        self.pos += 1
        if kind == "num":
            return value
        if kind == "str":
            if self.dialect == FEEL and value.startswith("'"):
                raise _Untranslatable("FEEL has no single-quoted strings")
            return quote(value[1:-1])
        if kind == "op" and value == "(":
            inner = self._or()
            if not self._accept(")"):
                raise _Untranslatable("unbalanced parenthesis")
            return f"({inner})"
        if kind == "name":
            literal = _LITERALS[self.dialect].get(value)
            if literal is not None:
                return literal
            return self._path(value)
        raise _Untranslatable(value)

    def _path(self, first: str) -> str:
        parts = [first]
        while self._peek() == ("op", ".") and self._peek(1)[0] == "name":
            parts.append(self._peek(1)[1])
            self.pos += 2
        if self._peek() in (("op", "("), ("op", ".")):
            raise _Untranslatable("call or member access")
        reserved = _RESERVED | _LITERALS[self.dialect].keys() | _WORD_OPS[self.dialect].keys()
        if any(part in reserved for part in parts):
            raise _Untranslatable("reserved word used as a name")
        if len(parts) == 1 and parts[0] in _LOOP_NAMES:
            if parts[0] == "loopCounter" and self.dialect == FEEL:
                return "($loop.index + 1)"  # Zeebe counts from 1, Camunda 7 and we from 0
            return _LOOP_NAMES[parts[0]]
        return "$vars." + ".".join(parts)
