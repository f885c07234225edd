"""Translate foreign BPMN expressions (JUEL, FEEL, SpiffWorkflow Python) into our language.

A translation is exact: on any data the source engine evaluates the expression without error,
ours gives the same value or stops with an error naming the expression, never another value. So
it follows each source's coercions (JUEL reads text as a boolean or a number when the other side
is one; Python counts `True` as 1) and leaves untranslated what ours cannot say the same way
(method calls, FEEL's decimal arithmetic, comparisons whose coercion depends on data). Anything
untranslated is returned unchanged with `ok=False`, and validation reports it instead of the
importer silently guessing. docs/process-format.md lists the translations.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

from webapp.process import expressions

from .namespaces import FLOWDESK_LANGUAGE

JUEL, FEEL, PYTHON, PLAIN, OURS, OTHER = "juel", "feel", "python", "plain", "flowdesk", "other"
#: jBPM's Java dialect (`return x > 5;`): comparisons and logic only, no arithmetic.
JAVA = "java"

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>\d+(?:\.\d+)?)
    | (?P<str>'[^'\\]*'|"[^"\\]*")
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op>==|!=|<=|>=|&&|\|\||[<>!=().,+\-*/\[\]])
    )""",
    re.VERBOSE,
)
_JUEL_WRAPPED = re.compile(r"^\s*[$#]\{(?P<body>.*)\}\s*$", re.DOTALL)
_JAVA_RETURN = re.compile(r"^\s*(?:return\s+)?(?P<body>.*?)\s*;?\s*$", re.DOTALL)
_ISO_DATETIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)
#: Text Java's Long.valueOf or Double.valueOf would read as a number (JUEL coerces with them).
_JAVA_NUMBER = re.compile(
    r"^[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|0[xX][0-9a-fA-F.]+[pP][+-]?\d+)[fFdD]?)$"
)

_LITERALS = {
    JUEL: {"true": "true", "false": "false", "null": "null"},
    FEEL: {"true": "true", "false": "false", "null": "null"},
    JAVA: {"true": "true", "false": "false", "null": "null"},
    PYTHON: {"True": "true", "False": "false", "None": "null"},
}
_LITERALS[PLAIN] = {**_LITERALS[JUEL], **_LITERALS[PYTHON]}
_LITERAL_VALUES = {"true": True, "false": False, "null": None}
_WORD_OPS = {
    JUEL: {"eq": "==", "ne": "!=", "lt": "<", "gt": ">", "le": "<=", "ge": ">="},
    FEEL: {},
    JAVA: {},
    PYTHON: {},
    PLAIN: {},
}
_SYMBOL_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_RESERVED = {"and", "or", "not", "in", "is", "true", "false", "null", "empty", "div", "mod"}
#: Names Camunda and Flowable bind to engine objects, not process variables.
_JUEL_OBJECTS = {
    "execution",
    "task",
    "authenticatedUserId",
    "processEngine",
    "processEngineServices",
    "variableScope",
    "externalTask",
    "caseExecution",
}

#: What a translated operand is known to hold (ANY: a variable, whatever the data brings).
BOOL, NUM, STR, NULL, LIST, ANY = "boolean", "number", "text", "null", "list", "any"


@dataclass(frozen=True)
class Translation:
    """Result of a translation: `text` is ours when `ok`, else the original text unchanged."""

    text: str
    ok: bool
    dialect: str


class _Untranslatable(Exception):
    """Raised inside the parser when the expression leaves the exactly translatable subset."""


@dataclass(frozen=True)
class _Out:
    """A translated operand: our text, what it holds, and for literals their value."""

    text: str
    kind: str = ANY
    literal: object = None
    is_literal: bool = False
    path: bool = False
    items: frozenset[str] = frozenset()  # kinds of a list literal's items
    negated: str | None = None  # JUEL `empty x`: the text of `not empty x`


#: Camunda's multi-instance counters and what they are called here.
_LOOP_NAMES = {
    "loopCounter": "$loop.index",
    "nrOfInstances": "$loop.count",
    "nrOfCompletedInstances": "$loop.completed",
    "nrOfActiveInstances": "$loop.active",
}


def detect_dialect(text: str, language: str | None = None) -> str:
    """Guess the dialect from the `language` attribute and the text's shape; a language we do
    not read (XPath, JavaScript, Groovy...) is OTHER and never translated."""
    lang = (language or "").lower()
    if lang == FLOWDESK_LANGUAGE:
        return OURS
    if "juel" in lang:
        return JUEL
    if "feel" in lang:
        return FEEL
    if "java" in lang and "javascript" not in lang:
        return JAVA
    if "python" in lang:
        return PYTHON
    if lang:
        return OTHER
    if _JUEL_WRAPPED.match(text):
        return JUEL
    if re.match(r"^\s*return\s.*;\s*$", text, re.DOTALL):
        return JAVA  # jBPM's default dialect
    if text.lstrip().startswith("="):
        return FEEL
    return PLAIN


def translate(text: str, language: str | None = None) -> Translation:
    """Translate one expression; returns the original text with `ok=False` when it cannot."""
    dialect = detect_dialect(text, language)
    if dialect == OURS:
        return Translation(text, True, OURS)
    if dialect == OTHER:
        return Translation(text, False, OTHER)
    body = text
    if dialect == JUEL:
        match = _JUEL_WRAPPED.match(text)
        if not match:
            return Translation(text, False, dialect)
        body = match.group("body")
    elif dialect == FEEL:
        body = text.lstrip().removeprefix("=")
    elif dialect == JAVA:
        java = _JAVA_RETURN.match(text)
        body = java.group("body") if java else text
    try:
        translated = _Parser(_tokenize(body), dialect).parse()
    except _Untranslatable:
        return Translation(text, False, dialect)
    return _checked(translated, text, dialect)


_ASSIGNMENT = re.compile(
    r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(?P<op>[-+*])?=(?!=)\s*(?P<expression>\S.*)$"
)


def translate_script(text: str) -> Translation:
    """Translate a SpiffWorkflow Python script into Flowdesk assignments when every line is a
    plain assignment (`x = ...`, `x += ...`) whose expression translates exactly; blank and
    `#` lines stay. Anything else (a call, `del`, indexing, a block) keeps the script as it is."""
    lines: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            lines.append(line)
            continue
        match = _ASSIGNMENT.match(line)
        if raw[:1].isspace() or match is None or keyword.iskeyword(match["name"]):
            return Translation(text, False, PYTHON)
        name, operator = match["name"], match["op"]
        source = f"{name} {operator} ({match['expression']})" if operator else match["expression"]
        translated = translate(source, "python")
        if not translated.ok:
            return Translation(text, False, PYTHON)
        lines.append(f"{name} = {translated.text}")
    if not any(line and not line.startswith("#") for line in lines):
        return Translation(text, False, PYTHON)
    return Translation("\n".join(lines).strip("\n"), True, PYTHON)


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
    """Tell whether `text` has no space outside brackets and strings (needs no grouping)."""
    depth, quote_char = 0, ""
    for char in text:
        if quote_char:
            quote_char = "" if char == quote_char else quote_char
        elif char in "'\"":
            quote_char = char
        elif char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == " " and depth == 0:
            return False
    return True


def _group(text: str) -> str:
    return text if _is_atomic(text) else f"({text})"


def _group_not(text: str) -> str:
    return f"({text})" if text.startswith("not ") else text


def _unwrap(text: str) -> str:
    """Drop parentheses around the whole text (a guarded comparison at the top)."""
    while text.startswith("(") and text.endswith(")") and _is_atomic(text):
        depth, quote_char = 0, ""
        for index, char in enumerate(text):
            if quote_char:
                quote_char = "" if char == quote_char else quote_char
            elif char in "'\"":
                quote_char = char
            elif char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0 and index < len(text) - 1:
                    return text
        text = text[1:-1]
    return text


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


def _juel_truth(operand: _Out) -> str:
    """JUEL reads an operand of `&&`, `||` and `!` as a boolean: null and "" are false, text is
    true when it says "true" in any case, anything else (a number, a list) is an error."""
    if operand.kind == BOOL:
        return operand.text
    if operand.path:
        p = operand.text
        return f"({p} == true or ({p} not in [false, null] and lower({p}) == 'true'))"
    raise _Untranslatable("JUEL coerces this operand to a boolean")


def _juel_negation(operand: _Out) -> str:
    if operand.path:
        p = operand.text
        return f"({p} in [false, null] or ({p} != true and lower({p}) != 'true'))"
    return f"not {_group(_juel_truth(operand))}"


class _Parser:
    """Recursive-descent parser that emits our syntax while it parses, with what each operand
    is known to hold, so that comparisons translate only where both languages agree."""

    def __init__(self, tokens: list[tuple[str, str]], dialect: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.dialect = dialect
        self.python = dialect in (PYTHON, PLAIN)

    def parse(self) -> str:
        if not self.tokens:
            raise _Untranslatable("empty")
        out = self._or()
        if self.pos != len(self.tokens):
            raise _Untranslatable(self.tokens[self.pos][1])
        return _unwrap(out.text)

    def _peek(self, offset: int = 0) -> tuple[str, str]:
        index = self.pos + offset
        return self.tokens[index] if index < len(self.tokens) else ("", "")

    def _accept(self, *values: str) -> str | None:
        kind, value = self._peek()
        if kind in ("op", "name") and value in values:
            self.pos += 1
            return value
        return None

    def _expect(self, value: str) -> None:
        if not self._accept(value):
            raise _Untranslatable(f"expected {value}")

    # --- boolean operators -------------------------------------------------------------------

    def _logic(self, word: str, symbol: str, inner: str) -> _Out:
        operands = [getattr(self, inner)()]
        while self._accept(word, *((symbol,) if self.dialect in (JUEL, JAVA) else ())):
            operands.append(getattr(self, inner)())
        if len(operands) == 1:
            return operands[0]
        if self.dialect == JUEL:
            texts = [_juel_truth(o) for o in operands]
        else:
            texts = [o.text for o in operands]
        kind = BOOL if self.dialect == JUEL or all(o.kind == BOOL for o in operands) else ANY
        return _Out(f" {word} ".join(texts), kind)

    def _or(self) -> _Out:
        return self._logic("or", "||", "_and")

    def _and(self) -> _Out:
        return self._logic("and", "&&", "_not")

    def _not(self) -> _Out:
        if self.dialect == JAVA and self._accept("!"):
            return _Out(f"not {_group(self._not().text)}", BOOL)
        if self.python and self._accept("not"):
            return _Out(f"not {_group(self._not().text)}", BOOL)
        if self.dialect == FEEL and self._peek() == ("name", "not") and self._peek(1)[1] == "(":
            self.pos += 1
            return _Out(f"not {_group(_unwrap(self._primary().text))}", BOOL)
        return self._comparison()

    # --- comparisons -------------------------------------------------------------------------

    def _comparison(self) -> _Out:
        left = self._additive()
        op = self._compare_op()
        if op is None:
            return left
        right = self._additive()
        if self._compare_op(consume=False) is not None:
            raise _Untranslatable("chained comparison")
        if op in ("==", "!="):
            text = self._equality(op, left, right)
        elif op in ("in", "not in"):
            text = self._membership(op, left, right)
        elif op in ("is", "is not"):
            if not right.is_literal or right.kind not in (NULL, BOOL):
                raise _Untranslatable("identity other than None, True or False")
            text = self._plain("==" if op == "is" else "!=", left, right)
        else:
            text = self._plain(op, left, right)
        return _Out(text, BOOL)

    def _compare_op(self, consume: bool = True) -> str | None:
        kind, value = self._peek()
        op: str | None = None
        width = 1
        if kind == "op" and value in _SYMBOL_COMPARE:
            if self.dialect == FEEL and value == "==":
                raise _Untranslatable("FEEL compares with '='")
            op = value
        elif kind == "op" and value == "=" and self.dialect == FEEL:
            op = "=="
        elif kind == "name" and value in _WORD_OPS[self.dialect]:
            op = _WORD_OPS[self.dialect][value]
        elif kind == "name" and self.python:
            following = self._peek(1)[1]
            if value == "is":
                op, width = ("is not", 2) if following == "not" else ("is", 1)
            elif value == "in":
                op = "in"
            elif value == "not" and following == "in":
                op, width = "not in", 2
        if op is not None and consume:
            self.pos += width
        return op

    @staticmethod
    def _plain(op: str, left: _Out, right: _Out) -> str:
        return f"{_group_not(left.text)} {op} {_group_not(right.text)}"

    def _equality(self, op: str, left: _Out, right: _Out) -> str:
        """`==` / `!=` where both languages agree; guarded where the source coerces."""
        plain = self._plain(op, left, right)
        kinds = {left.kind, right.kind}
        if NULL in kinds or self.dialect == FEEL:
            return plain  # FEEL compares without coercion; null equals only null everywhere
        if self.dialect == JAVA:
            if (left.is_literal or right.is_literal) and kinds & {NUM, BOOL}:
                return plain  # a boxed value against a number or boolean literal is unboxed
            raise _Untranslatable("Java's == compares objects by identity")
        if self.dialect == JUEL:
            if len(kinds) == 1 and kinds <= {BOOL, NUM, STR}:
                return plain
            return self._juel_equality(op, left, right, plain)
        if ANY not in kinds:
            if kinds == {BOOL, NUM} or LIST in kinds:
                raise _Untranslatable("Python counts True as 1")
            return plain
        known = right if left.kind == ANY else left
        if known.kind == ANY:
            raise _Untranslatable("two variables: Python's 1 == True")
        if known.kind == STR:
            return plain
        if known.is_literal and known.kind in (NUM, BOOL) and known.literal in (0, 1):
            variable = left if known is right else right
            twin = {0: ("false", "0"), 1: ("true", "1")}[int(bool(known.literal))]
            other = twin[0] if known.kind == NUM else twin[1]
            member = "in" if op == "==" else "not in"
            return f"{_group_not(variable.text)} {member} [{known.text}, {other}]"
        if known.kind == NUM and known.is_literal:
            return plain
        raise _Untranslatable("Python compares booleans and numbers")

    @staticmethod
    def _juel_equality(op: str, left: _Out, right: _Out, plain: str) -> str:
        """A variable against a number, a boolean or a text literal, the way JUEL coerces."""
        variable, known = (left, right) if left.path else (right, left)
        if not variable.path or known.kind not in (NUM, BOOL, STR):
            raise _Untranslatable("JUEL coerces one side of this comparison")
        p = variable.text
        if known.kind == NUM:
            # JUEL reads text as a number here; `+ 0` makes ours stop on text instead of false
            sides = (f"{p} + 0", known.text) if variable is left else (known.text, f"{p} + 0")
            return f"{sides[0]} {op} {sides[1]}"
        if known.kind == BOOL:
            if not known.is_literal:
                raise _Untranslatable("JUEL reads text as a boolean here")
            truth = _juel_truth(variable)
            if (op == "==") is known.literal:  # == true, != false
                return truth if known.literal else f"({p} == null or {truth})"
            if op == "==":  # == false: null equals only null
                return f"({p} == false or ({p} not in [true, null] and lower({p}) != 'true'))"
            return _juel_negation(variable)  # != true
        return _Parser._juel_text_equality(op, variable, known, plain)

    @staticmethod
    def _juel_text_equality(op: str, variable: _Out, literal: _Out, plain: str) -> str:
        """A variable against a text literal: JUEL compares texts, but reads the literal as a
        boolean against a boolean (`'Yes'` is false) and as a number against a number."""
        text = literal.literal
        if not (
            variable.path
            and literal.is_literal
            and literal.kind == STR
            and isinstance(text, str)
            and text.strip()
            and not _JAVA_NUMBER.match(text.strip())
            and text[:1] not in "[{"
        ):
            raise _Untranslatable("JUEL coerces one side of this comparison")
        boolean = "true" if text.lower() == "true" else "false"
        if op == "==":
            return f"({plain} or {variable.text} == {boolean})"
        return f"({plain} and {variable.text} != {boolean})"

    def _membership(self, op: str, left: _Out, right: _Out) -> str:
        """Python's `in`: exact for text on the left or a list of texts (and None) on the right."""
        if (right.kind == LIST and right.items <= {STR, NULL}) or left.kind == STR:
            return self._plain(op, left, right)
        raise _Untranslatable("Python's == inside `in` counts True as 1")

    # --- arithmetic --------------------------------------------------------------------------

    def _additive(self) -> _Out:
        out = self._multiplicative()
        while (op := self._accept("+", "-")) is not None:
            right = self._multiplicative()
            out = _Out(self._plain(op, out, right), self._arith_kind(op, out, right))
        return out

    def _multiplicative(self) -> _Out:
        out = self._unary()
        while (
            op := self._accept("*", "/", *(("div",) if self.dialect == JUEL else ()))
        ) is not None:
            right = self._unary()
            op = "/" if op == "div" else op
            out = _Out(self._plain(op, out, right), self._arith_kind(op, out, right))
        return out

    def _arith_kind(self, op: str, left: _Out, right: _Out) -> str:
        kinds = {left.kind, right.kind}
        if self.dialect == JAVA:
            raise _Untranslatable("Java's integer arithmetic truncates and overflows")
        if self.dialect == FEEL:
            if op == "+" and STR in kinds:
                return STR  # text joining; FEEL's numbers are decimals, ours binary floats
            raise _Untranslatable("FEEL computes in decimals")
        if self.dialect == JUEL:
            if op == "+" and NUM not in kinds:
                raise _Untranslatable("JUEL's + reads texts as numbers")
            return NUM
        if op == "+":
            return next((k for k in (NUM, STR, LIST) if k in kinds), ANY)
        return NUM

    def _unary(self) -> _Out:
        if self.dialect == JUEL and self._accept("!", "not"):
            operand = self._unary()
            if operand.negated is not None:
                return _Out(operand.negated, BOOL)
            return _Out(_juel_negation(operand), BOOL)
        if self.dialect == JUEL and self._accept("empty"):
            operand = self._unary()
            if not operand.path:
                raise _Untranslatable("empty of something other than a variable")
            p = operand.text
            negated = f"({p} != null and len({p}) > 0)"
            return _Out(f"({p} == null or len({p}) == 0)", BOOL, negated=negated)
        if self._accept("-"):
            operand = self._unary()
            value = operand.literal
            if operand.is_literal and operand.kind == NUM and isinstance(value, int | float):
                return _Out(f"-{operand.text}", NUM, -value, is_literal=True)
            return _Out(f"-{_group(operand.text)}", NUM)
        return self._primary()

    # --- operands ----------------------------------------------------------------------------

    def _primary(self) -> _Out:
        kind, value = self._peek()
        self.pos += 1
        if kind == "num":
            number = float(value) if "." in value else int(value)
            return _Out(value, NUM, number, is_literal=True)
        if kind == "str":
            if self.dialect == FEEL and value.startswith("'"):
                raise _Untranslatable("FEEL has no single-quoted strings")
            if self.dialect == JAVA and value.startswith("'"):
                raise _Untranslatable("a Java char, not a string")
            return _Out(quote(value[1:-1]), STR, value[1:-1], is_literal=True)
        if kind == "op" and value == "(":
            inner = self._or()
            self._expect(")")
            text = f"({_unwrap(inner.text)})"
            return _Out(text, inner.kind, inner.literal, inner.is_literal, inner.path)
        if kind == "op" and value == "[" and (self.python or self.dialect == FEEL):
            return self._list()
        if kind == "name":
            literal = _LITERALS[self.dialect].get(value)
            if literal is not None:
                literal_kind = NULL if literal == "null" else BOOL
                return _Out(literal, literal_kind, _LITERAL_VALUES[literal], is_literal=True)
            if self.python and value == "len" and self._peek() == ("op", "("):
                self.pos += 1
                argument = self._or()
                self._expect(")")
                return _Out(f"len({argument.text})", NUM)
            if self.dialect == JUEL and value == "execution":
                return self._get_variable()
            return self._path([value])
        raise _Untranslatable(value)

    def _list(self) -> _Out:
        items: list[_Out] = []
        if not self._accept("]"):
            items.append(self._or())
            while self._accept(","):
                items.append(self._or())
            self._expect("]")
        text = "[" + ", ".join(item.text for item in items) + "]"
        return _Out(text, LIST, items=frozenset(item.kind for item in items))

    def _get_variable(self) -> _Out:
        """`execution.getVariable("x")` reads process variable x (null when it has none)."""
        if [self._peek(i) for i in range(3)] != [
            ("op", "."),
            ("name", "getVariable"),
            ("op", "("),
        ]:
            raise _Untranslatable("execution is the engine's object, not a variable")
        self.pos += 3
        kind, name = self._peek()
        self.pos += 1
        if kind != "str" or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name[1:-1]):
            raise _Untranslatable("getVariable of something other than a plain name")
        self._expect(")")
        return self._path([name[1:-1]], check_names=False)

    def _path(self, parts: list[str], check_names: bool = True) -> _Out:
        while self._peek() == ("op", ".") and self._peek(1)[0] == "name":
            parts.append(self._peek(1)[1])
            self.pos += 2
        if self._peek() in (("op", "("), ("op", "."), ("op", "[")):
            raise _Untranslatable("call, index or member access")
        reserved = _RESERVED | _LITERALS[self.dialect].keys() | _WORD_OPS[self.dialect].keys()
        if any(part in reserved for part in parts[1 if not check_names else 0 :]):
            raise _Untranslatable("reserved word used as a name")
        if check_names and self.dialect == JUEL and parts[0] in _JUEL_OBJECTS:
            raise _Untranslatable("an engine object, not a variable")
        if check_names and len(parts) == 1 and parts[0] in _LOOP_NAMES:
            if parts[0] == "loopCounter" and self.dialect == FEEL:
                return _Out(
                    "($loop.index + 1)", NUM
                )  # Zeebe counts from 1, Camunda 7 and we from 0
            return _Out(_LOOP_NAMES[parts[0]], NUM)
        return _Out("$vars." + ".".join(parts), ANY, path=True)


_PATH = re.compile(r"^\$vars((?:\.[A-Za-z_][A-Za-z0-9_]*)+)$")


def to_vendor(text: str, dialect: str) -> str | None:
    """Our variable path `$vars.a.b` as JUEL (`${a.b}`) or FEEL (`=a.b`), when translating that
    back gives `text` exactly; None for anything else (export then writes it only as ours)."""
    match = _PATH.match(text) if isinstance(text, str) else None
    if match is None or dialect not in (JUEL, FEEL):
        return None
    path = match.group(1)[1:]
    written = f"${{{path}}}" if dialect == JUEL else f"={path}"
    translated = translate(written)
    return written if translated.ok and translated.text == text else None
