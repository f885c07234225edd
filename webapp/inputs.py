"""Limits every input meets before it reaches a query or a JSON column.

Both databases refuse some text Python accepts: PostgreSQL stores no NUL character, neither
stores a lone surrogate (not encodable as UTF-8), and ids, counts and numbers have a range.
These checks name the field so a refusal reads as a 4xx with a message, never a 500.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_JSON_DEPTH = 32
MAX_INT64 = 2**63 - 1
MAX_INT32 = 2**31 - 1
_DIGITS = re.compile(r"[0-9]{1,30}")
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"(\s*:)?|[\[\]{}]', re.DOTALL)


class InputError(ValueError):
    """One field's value cannot be used; `field` names it, `message` says what to change."""

    def __init__(self, field: str, message: str, status: int = 422) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.status = status


def text_problem(value: str) -> str | None:
    """Why the database cannot store `value` (a NUL or a lone surrogate), or None."""
    if "\x00" in value:
        return "Remove the NUL character (\\u0000); text cannot contain it."
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "Remove the unpaired surrogate (such as \\ud800); text cannot contain it."
    return None


def check_text(value: str, field: str, status: int = 422) -> str:
    """`value` unchanged, or InputError naming `field` when the database cannot store it."""
    problem = text_problem(value)
    if problem:
        raise InputError(field, problem, status)
    return value


def whole_number(text: str | None, low: int, high: int) -> int | None:
    """`text` as an int when it is plain ASCII digits within [low, high]; None otherwise.

    `str.isdigit` also passes '²' and `int` also takes fullwidth digits, ' 1' and '1_0'; none
    of those is a number a person typed into a URL, so only 0-9 count.
    """
    if text is None or not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if low <= value <= high else None


def parse_json(raw: bytes | str, field: str = "body") -> Any:
    """Parse JSON text into values both databases store; InputError names the bad part.

    Refused: nesting deeper than MAX_JSON_DEPTH, NaN and Infinity, numbers beyond a 64-bit
    whole number or a finite float, and text or keys with NUL or lone surrogates.
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise InputError(field, f"Not valid UTF-8: {error.reason}.", 400) from None
    deep = _too_deep(raw)
    if deep is not None:
        where = f"{field}.{deep}" if deep and field != "body" else deep or field
        message = f"Nested more than {MAX_JSON_DEPTH} levels deep."
        raise InputError(where, message, 400 if where == "body" else 422)
    try:
        value = json.loads(raw, parse_constant=_refuse_constant)
    except json.JSONDecodeError as error:
        message = f"Not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        raise InputError(field, message, 400) from None
    except (ValueError, RecursionError) as error:
        raise InputError(field, f"Not valid JSON: {error}.", 400) from None
    return check_json(value, "" if field == "body" else field)


def check_json(value: Any, field: str) -> Any:
    """`value` unchanged when every text, key and number in it can be stored; InputError names
    the first part that cannot (`field` is the path of `value`, such as `input`)."""
    _check(value, field, 1)
    return value


def _check(value: Any, path: str, level: int) -> None:
    where = path or "body"
    if isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if abs(value) > MAX_INT64:
            raise InputError(where, f"Use a number within ±{MAX_INT64}, or send it as text.")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(where, "Use a finite number (no NaN or Infinity).")
    elif isinstance(value, dict | list):
        if level > MAX_JSON_DEPTH:
            raise InputError(where, f"Nested more than {MAX_JSON_DEPTH} levels deep.")
        if isinstance(value, list):
            for index, item in enumerate(value):
                _check(item, f"{path}[{index}]", level + 1)
            return
        for key, item in value.items():
            problem = text_problem(key) if isinstance(key, str) else None
            if problem:
                raise InputError(where, f"A key: {problem}")
            _check(item, f"{path}.{key}" if path else str(key), level + 1)


def _too_deep(text: str) -> str | None:
    """The top-level key under which `text` nests deeper than MAX_JSON_DEPTH ("" when the body
    itself does), or None; a scan of brackets outside strings, so it never recurses."""
    depth = 0
    top_key = ""
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return top_key
        elif token in ("]", "}"):
            depth -= 1
        elif match.group(1) and depth == 1:
            try:
                top_key = str(json.loads(token[: match.start(1) - match.start()]))
            except ValueError:
                top_key = ""
    return None


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed in JSON")
