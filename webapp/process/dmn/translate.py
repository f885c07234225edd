"""Translate DMN expressions (FEEL and SpiffWorkflow's Python) into Flowdesk expression text.

Names become ``$vars`` paths and ``?`` becomes ``$cell`` (the input value under test). Only the
forms listed in docs/decisions.md are translated; anything else raises Untranslatable naming
what was not understood -- nothing is guessed and nothing is run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import expressions
from ..bpmn import conditions

CELL = "$cell"
FEEL_LANGUAGES = ("feel", "")
_FEEL_URIS = (
    "https://www.omg.org/spec/dmn/20191111/feel/",
    "http://www.omg.org/spec/feel/20140401",
)


class Untranslatable(ValueError):
    """The text uses something Flowdesk's expression language cannot say."""


@dataclass(frozen=True)
class _Tok:
    kind: str  # string number name op
    value: str


_TOKEN_RE = re.compile(
    r"""\s*(?:
    (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|\.\d+)
    |(?P<name>[A-Za-z_][A-Za-z0-9_\0]*)
    |(?P<op>\.\.|==|!=|<=|>=|\*\*|//|[-+*/%<>=()\[\],.?:{}!])
    )""",
    re.VERBOSE,
)
_MULTI_WORD = re.compile(
    r"\b(date\s+and\s+time|string\s+length|upper\s+case|lower\s+case)\s*(?=\()"
)
_FEEL_FUNCTIONS = {"date and time": "date", "date": "date", "string length": "len"}
_FEEL_FUNCTIONS |= {"upper case": "upper", "lower case": "lower", "contains": "contains"}
_FEEL_FUNCTIONS |= {"now": "now"}
_PYTHON_FUNCTIONS = {"len": "len"}
_PYTHON_CONSTANTS = {"True": "true", "False": "false", "None": "null"}
_FEEL_CONSTANTS = {"true": "true", "false": "false", "null": "null"}
_COMPARE = ("==", "!=", "<", "<=", ">", ">=")
TRANSLATED = ("feel", "python", "juel")
_JUEL_CELL = re.compile(r"\$vars\.cellInput\b")


def language_of(language: str | None) -> str:
    """Normalise an expressionLanguage attribute: ``feel``, ``python`` or the text as given."""
    text = (language or "").strip().lower()
    if text in FEEL_LANGUAGES or text.rstrip("/") + "/" in _FEEL_URIS or "feel" in text:
        return "feel"
    if "python" in text:
        return "python"
    return text


def tokenize(text: str) -> list[_Tok]:
    """Split entry text into tokens; FEEL's multi-word function names become one name."""
    text = _MULTI_WORD.sub(lambda m: "\0".join(m.group(1).split()), text)
    tokens: list[_Tok] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        match = _TOKEN_RE.match(text, pos)
        if match is None or match.lastgroup is None:
            raise Untranslatable(f"cannot read {text[pos:].strip()[:20]!r}")
        kind = match.lastgroup
        tokens.append(_Tok(kind, match.group(kind).replace("\0", " ")))
        pos = match.end()
    return tokens


def _string(source: str) -> str:
    """Re-quote a FEEL or Python string literal as Flowdesk text."""
    body = source[1:-1]
    value = re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m[1], m[1]), body)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped.replace("\t", "\\t").replace("\r", "\\r") + '"'


class _Translator:
    """Walks the tokens once, writing Flowdesk text; ``language`` is ``feel`` or ``python``."""

    def __init__(self, tokens: list[_Tok], language: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.language = language
        self.out: list[str] = []

    def peek(self, offset: int = 0) -> _Tok | None:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def run(self) -> str:
        while (token := self.peek()) is not None:
            self.pos += 1
            self.emit(token)
        return " ".join(self.out)

    def emit(self, token: _Tok) -> None:
        if token.kind == "string":
            self.out.append(_string(token.value))
        elif token.kind == "number":
            self.out.append(token.value if not token.value.startswith(".") else "0" + token.value)
        elif token.kind == "name":
            self.name(token.value)
        elif token.value == "?":
            self.out.append(self.path(CELL))
        elif token.value == "=" and self.language == "feel":
            self.out.append("==")
        elif token.value in ("(", ")", "[", "]", ",", "+", "-", "*", "/", *_COMPARE):
            self.out.append(token.value)
        else:
            raise Untranslatable(f"'{token.value}' has no Flowdesk equivalent")

    def name(self, name: str) -> None:
        constants = _PYTHON_CONSTANTS if self.language == "python" else _FEEL_CONSTANTS
        nxt = self.peek()
        if name in constants:
            self.out.append(constants[name])
        elif name in ("and", "or", "not", "in"):
            self.out.append(name)
        elif self.language == "python" and name in ("Decimal", "datetime"):
            self.out.append(self.python_value(name))
        elif nxt is not None and nxt.value == "(":
            self.call(name)
        elif self.language == "python" and name in ("is", "lambda", "for", "if", "else"):
            raise Untranslatable(f"Python '{name}' has no Flowdesk equivalent")
        else:
            self.out.append(self.path("$vars." + name))

    def call(self, name: str) -> None:
        functions = _PYTHON_FUNCTIONS if self.language == "python" else _FEEL_FUNCTIONS
        if name not in functions:
            raise Untranslatable(f"function {name}() has no Flowdesk equivalent")
        self.out.append(functions[name])

    def path(self, base: str) -> str:
        """A path with the ``.name`` and ``[key]`` segments that follow; ``.keys()`` is keys()."""
        parts = [base]
        while (token := self.peek()) is not None and token.value in (".", "["):
            segment = self.peek(1)
            if token.value == "." and segment is not None and segment.kind == "name":
                after = self.peek(2)
                if after is not None and after.value == "(":
                    closing = self.peek(3)
                    if segment.value == "keys" and closing is not None and closing.value == ")":
                        self.pos += 4
                        return f"keys({''.join(parts)})"
                    raise Untranslatable(f"method .{segment.value}() has no Flowdesk equivalent")
                parts.append("." + segment.value)
                self.pos += 2
            elif (
                token.value == "[" and segment is not None and segment.kind in ("string", "number")
            ):
                close = self.peek(2)
                if close is None or close.value != "]":
                    break
                key = _string(segment.value) if segment.kind == "string" else segment.value
                parts.append(f"[{key}]")
                self.pos += 3
            else:
                break
        return "".join(parts)

    def python_value(self, name: str) -> str:
        """``Decimal('1.5')`` and ``datetime.datetime(y, m, d[, h, mi, s])`` as literals."""
        texts = [token.value for token in self.tokens[self.pos :]]
        if name == "Decimal" and texts[:1] == ["("] and len(texts) >= 3 and texts[2] == ")":
            literal = self.tokens[self.pos + 1]
            self.pos += 3
            number = literal.value[1:-1] if literal.kind == "string" else literal.value
            if not re.fullmatch(r"-?\d+(\.\d+)?", number):
                raise Untranslatable(f"Decimal({literal.value}) is not a plain number")
            return number
        if name == "datetime" and texts[:3] == [".", "datetime", "("]:
            end = texts.index(")") if ")" in texts else -1
            parts = texts[3:end]
            numbers = [int(part) for part in parts[::2] if part.isdigit()]
            if end < 0 or any(sep != "," for sep in parts[1::2]) or not 3 <= len(numbers) <= 6:
                raise Untranslatable("datetime.datetime(...) takes 3 to 6 whole numbers here")
            year, month, day, hour, minute, second = [*numbers, 0, 0, 0][:6]
            try:
                when = datetime(year, month, day, hour, minute, second)
            except ValueError as exc:
                raise Untranslatable(f"datetime.datetime(...): {exc}") from None
            self.pos += end + 1
            return f'date("{when.isoformat()}")'
        raise Untranslatable(f"'{name}' has no Flowdesk equivalent")


def _known(language: str) -> None:
    if language not in TRANSLATED:
        raise Untranslatable(f"the expression language '{language}' is not translated")


def _juel(text: str) -> str:
    """Camunda 7's JUEL (``${amount * 2}``), by the BPMN importer's exact translation."""
    translation = conditions.translate(text, conditions.JUEL)
    if not translation.ok:
        raise Untranslatable("this JUEL expression has no exact Flowdesk equivalent")
    return translation.text


def expression(text: str, language: str) -> str:
    """Translate an input expression, output entry or literal expression; '' stays ''."""
    if not text.strip():
        return ""
    _known(language)
    if language == "juel":
        return _juel(text)
    tokens = tokenize(text)
    translated = _split_chains(tokens, language)
    _validate(translated)
    return translated


def _split_chains(tokens: list[_Tok], language: str) -> str:
    """Translate, turning ``a < b <= c`` at the top level into ``(a < b and b <= c)``."""
    depth = 0
    cuts: list[int] = []
    for index, token in enumerate(tokens):
        if token.value in ("(", "["):
            depth += 1
        elif token.value in (")", "]"):
            depth -= 1
        elif depth == 0 and token.kind == "op" and token.value in _COMPARE:
            cuts.append(index)
    if len(cuts) < 2:
        return _Translator(tokens, language).run()
    bounds = [0, *cuts, len(tokens)]
    operands = [tokens[bounds[i] + (i > 0) : bounds[i + 1]] for i in range(len(bounds) - 1)]
    texts = [_Translator(part, language).run() for part in operands]
    ops = ["==" if tokens[cut].value == "=" else tokens[cut].value for cut in cuts]
    pairs = [f"{texts[i]} {op} {texts[i + 1]}" for i, op in enumerate(ops)]
    return "(" + " and ".join(pairs) + ")"


def _validate(text: str) -> None:
    error = expressions.check(text)
    if error is not None:
        raise Untranslatable(error.message)


def split_top(tokens: list[_Tok], separator: str) -> list[list[_Tok]]:
    parts: list[list[_Tok]] = [[]]
    depth = 0
    for token in tokens:
        if token.value in ("(", "["):
            depth += 1
        elif token.value in (")", "]"):
            depth -= 1
        if depth == 0 and token.kind == "op" and token.value == separator:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


def unary_test(text: str, language: str) -> str | None:
    """Translate an input entry to a Flowdesk boolean expression over ``$cell``; None means any."""
    stripped = text.strip()
    if stripped in ("", "-"):
        return None
    _known(language)
    if language == "juel":
        return _JUEL_CELL.sub(CELL, _juel(stripped))  # Camunda 7 names the value cellInput
    tokens = tokenize(stripped)
    if any(token.value == "?" for token in tokens):
        translated = _split_chains(tokens, language)
    elif language == "python":
        translated = _python_test(tokens)
    else:
        translated = _feel_tests(tokens)
    _validate(translated)
    return translated


def _python_test(tokens: list[_Tok]) -> str:
    """SpiffWorkflow's rule: a complete expression is compared for equality, else it is appended."""
    first = tokens[0]
    if first.value in (*_COMPARE, "in") or (
        first.value == "not" and len(tokens) > 1 and tokens[1].value == "in"
    ):
        return f"{CELL} {_Translator(tokens, 'python').run()}"
    if len(split_top(tokens, ",")) > 1:
        raise Untranslatable("a Python tuple is compared as a whole; write 'in [...]' for a list")
    return f"{CELL} == ({_Translator(tokens, 'python').run()})"


def _feel_tests(tokens: list[_Tok]) -> str:
    if (
        tokens[0].kind == "name"
        and tokens[0].value == "not"
        and len(tokens) > 2
        and tokens[1].value == "("
        and tokens[-1].value == ")"
        and _closes_at_end(tokens, 1)
    ):
        return f"not ({_feel_tests(tokens[2:-1])})"
    parts = split_top(tokens, ",")
    if any(not part for part in parts):
        raise Untranslatable("an empty test in a list")
    tests = [_feel_test(part) for part in parts]
    return tests[0] if len(tests) == 1 else "(" + " or ".join(tests) + ")"


def _closes_at_end(tokens: list[_Tok], opener: int) -> bool:
    depth = 0
    for index in range(opener, len(tokens)):
        depth += tokens[index].value in ("(", "[") or -(tokens[index].value in (")", "]"))
        if depth == 0:
            return index == len(tokens) - 1
    return False


def _feel_test(tokens: list[_Tok]) -> str:
    first, last = tokens[0].value, tokens[-1].value
    dots = [i for i, token in enumerate(tokens) if token.value == ".."]
    if dots and first in ("[", "]", "(") and last in ("[", "]", ")"):
        if len(dots) != 1:
            raise Untranslatable("a range has one '..'")
        low = _Translator(tokens[1 : dots[0]], "feel").run()
        high = _Translator(tokens[dots[0] + 1 : -1], "feel").run()
        if not low or not high:
            raise Untranslatable("a range needs both ends")
        low_op = ">=" if first == "[" else ">"
        high_op = "<=" if last == "]" else "<"
        return f"({CELL} {low_op} {low} and {CELL} {high_op} {high})"
    if dots:
        raise Untranslatable("a range is written [a..b], ]a..b[ or (a..b)")
    if first in ("<", "<=", ">", ">=", "=", "!="):
        op = "==" if first == "=" else first
        operand = _Translator(tokens[1:], "feel").run()
        if not operand:
            raise Untranslatable(f"'{first}' needs a value")
        return f"{CELL} {op} {operand}"
    return f"{CELL} == {_Translator(tokens, 'feel').run()}"


def translate_table(table: dict[str, Any], default: str) -> int:
    """Fill in a table's Flowdesk expressions from its texts; returns how many failed.

    A column's own language wins over ``default`` (the definitions' language, or the one
    detected); output entries are Python when any column is.
    """
    failures = 0
    languages = []
    for column in table.get("inputs", []):
        language = language_of(column.get("language") or default)
        languages.append(language)
        column.pop("reason", None)
        text = column.get("text") or ""
        label = column.get("label") or ""
        try:
            if text.strip():
                column["expression"] = expression(text, language)
            elif label.isidentifier():
                column["expression"] = f"$vars.{label}"
            else:
                raise Untranslatable("the input has no expression and no label to read")
        except Untranslatable as exc:
            column["expression"] = None
            column["reason"] = str(exc)
            failures += 1
    out_language = "python" if "python" in languages else language_of(default)
    for rule in table.get("rules", []):
        for index, cell in enumerate(rule.get("inputs", [])):
            language = languages[index] if index < len(languages) else language_of(default)
            language = language_of(cell["language"]) if cell.get("language") else language
            try:
                cell["test"] = unary_test(cell.get("text") or "", language)
            except Untranslatable as exc:
                cell["test"] = {"untranslatable": str(exc)}
                failures += 1
        for cell in rule.get("outputs", []):
            language = language_of(cell["language"]) if cell.get("language") else out_language
            try:
                cell["expression"] = expression(cell.get("text") or "", language) or None
            except Untranslatable as exc:
                cell["expression"] = {"untranslatable": str(exc)}
                failures += 1
    return failures


def translate_literal(literal: dict[str, Any], default: str) -> int:
    """Fill in a literal decision's expression; returns 1 when it failed."""
    literal.pop("reason", None)
    try:
        literal["expression"] = (
            expression(literal.get("text") or "", language_of(literal.get("language") or default))
            or None
        )
        if literal["expression"] is None:
            raise Untranslatable("the literal expression is empty")
    except Untranslatable as exc:
        literal["expression"] = None
        literal["reason"] = str(exc)
        return 1
    return 0


def translate_document(document: dict[str, Any], default: str = "feel") -> int:
    """Re-translate every decision from its texts (after an edit); returns how many failed."""
    failures = 0
    for decision in document.get("decisions") or []:
        if decision.get("kind") == "literal" and decision.get("literal") is not None:
            failures += translate_literal(decision["literal"], default)
        elif decision.get("table") is not None:
            failures += translate_table(decision["table"], default)
    return failures
