"""Form specs for start events and user tasks: checking a spec, coercing a submission, visibility.

A spec is ``{"fields": [field, ...]}``; ``FIELD_TYPES`` says which attributes each type takes.

``visibleIf`` and a ``display`` field's ``value`` are expressions evaluated against the instance
context (``$input``, ``$vars``, ``$nodes``) plus ``$form``: the form's own values by field key
(``$form`` must be one of ``expressions.ROOTS``).
Fields are decided in order and a hidden field's value is removed from ``$form``, so a condition
should refer to earlier fields. A condition that fails to evaluate (for example comparing an empty
field with a number) hides the field. A ``default`` is a literal of the field's type, or
``{"expr": "<expression>"}`` computed from the instance context when the form is shown.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any, TypeGuard
from urllib.parse import urlsplit

from webapp.process import expressions
from webapp.process.document import is_identifier

MAX_FIELDS = 200
MAX_OPTIONS = 500
MAX_PATTERN_LENGTH = 500
MAX_KEY_LENGTH = 64
MAX_VALUE_LENGTH = 20_000
# Characters a text field takes when its spec declares no maxLength.
DEFAULT_MAX_LENGTH = {"text": 500, "email": 254, "url": 2000, "textarea": 10_000}
# Names the pages that render a form post beside its fields (CSRF token, start page, live refresh).
RESERVED_KEYS = frozenset({"csrf_token", "business_key", "refresh"})

_RANGE = frozenset({"min", "max"})
_TEXT = frozenset({"minLength", "maxLength", "pattern"})


@dataclass(frozen=True)
class FieldType:
    """A form field type: the HTML control it renders as and the type-specific attributes."""

    name: str
    label: str
    html_input: str | None
    attributes: frozenset[str] = frozenset()
    has_options: bool = False
    multiple: bool = False


FIELD_TYPES: dict[str, FieldType] = {
    t.name: t
    for t in (
        FieldType("text", "Text", "text", _TEXT),
        FieldType("textarea", "Long text", "textarea", _TEXT),
        FieldType("number", "Number", "number", _RANGE),
        FieldType("integer", "Whole number", "number", _RANGE),
        FieldType("boolean", "Checkbox", "checkbox"),
        FieldType("date", "Date", "date", _RANGE),
        FieldType("datetime", "Date and time", "datetime-local"),
        FieldType("email", "Email", "email", _TEXT),
        FieldType("url", "Web address", "url", _TEXT),
        FieldType("select", "Drop-down", "select", frozenset({"options"}), has_options=True),
        FieldType(
            "multiselect",
            "Multiple choice",
            "select",
            frozenset({"options"}),
            has_options=True,
            multiple=True,
        ),
        FieldType("radio", "Radio buttons", "radio", frozenset({"options"}), has_options=True),
        FieldType("display", "Read-only value", None, frozenset({"value"})),
    )
}

# Attributes that only some types take; a non-null one on another type is a spec problem.
_SPECIFIC = _RANGE | _TEXT | {"options", "value"}

_TRUE = frozenset({"on", "true", "1", "yes"})
_FALSE = frozenset({"off", "false", "0", "no", ""})
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER_RE = re.compile(r"[+-]?\d{1,18}")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})?"
)
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s.]+(?:\.[^@\s.]+)+")
# A group that repeats something and is itself repeated without bound: (a+)+, (\w+\s?)* ...
_CHAR = r"(?:\[(?:\\.|[^\]\\])*\]|\\.|[^()\\\[])"
_NESTED_REPEAT_RE = re.compile(rf"\({_CHAR}*[*+]{_CHAR}*\)(?:[*+]|\{{\d*,\d*\}})")


@dataclass(frozen=True)
class FormSpecProblem:
    """A problem in a form spec: the field key (``None`` for the whole form) and a message;
    ``index`` (0-based) and ``attribute`` say which field and which of its attributes is wrong."""

    key: str | None
    message: str
    code: str = "form.invalid"
    index: int | None = None
    attribute: str | None = None


class _Invalid(Exception):
    """A submitted value that cannot be coerced; the message follows the field label."""


def field_label(field: Mapping[str, Any]) -> str:
    """Return the label a message should name: the field's label, else its key."""
    label = field.get("label")
    return label if isinstance(label, str) and label.strip() else str(field.get("key", "Field"))


def iter_fields(spec: Any) -> Iterator[dict[str, Any]]:
    """Yield the well-formed fields of ``spec`` (dicts with a known type), skipping broken ones."""
    if not isinstance(spec, Mapping) or not isinstance(spec.get("fields"), list):
        return
    for field in spec["fields"]:
        if isinstance(field, dict) and field.get("type") in FIELD_TYPES:
            yield field


def field_expressions(field: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Yield ``(attribute, expression text)`` for each expression a field carries."""
    if isinstance(field.get("visibleIf"), str) and field["visibleIf"].strip():
        yield "visibleIf", field["visibleIf"]
    if field.get("type") == "display" and isinstance(field.get("value"), str):
        yield "value", field["value"]
    default = field.get("default")
    if isinstance(default, dict) and isinstance(default.get("expr"), str):
        yield "default", default["expr"]


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def pattern_problem(pattern: Any) -> str | None:
    """Return why ``pattern`` is unusable as a field pattern, or ``None`` when it is fine."""
    if not isinstance(pattern, str):
        return "pattern must be a string"
    if len(pattern) > MAX_PATTERN_LENGTH:
        return f"pattern is longer than {MAX_PATTERN_LENGTH} characters"
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"pattern is not a valid regular expression ({exc})"
    if _NESTED_REPEAT_RE.search(pattern):
        return "pattern repeats a repeated group, like (a+)+, which can make matching very slow"
    return None


def _fmt(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _options(field: Mapping[str, Any]) -> list[str]:
    options = field.get("options")
    if not isinstance(options, list):
        return []
    return [o["value"] for o in options if isinstance(o, dict) and isinstance(o.get("value"), str)]


def _coerce_one(field: Mapping[str, Any], text: str) -> Any:
    """Turn one submitted string into the field type's value; ``None`` when empty."""
    kind = field["type"]
    if len(text) > MAX_VALUE_LENGTH:
        raise _Invalid(f"is longer than {MAX_VALUE_LENGTH:,} characters")
    if kind == "boolean":
        lowered = text.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise _Invalid("must be yes or no")
    stripped = text if kind == "textarea" else text.strip()
    if not stripped.strip():
        return None
    if kind in ("text", "textarea"):
        return stripped
    if kind == "number":
        if not _NUMBER_RE.fullmatch(stripped) or len(stripped) > 50:
            raise _Invalid("must be a number")
        number = float(stripped)
        if not math.isfinite(number):
            raise _Invalid("must be a number")
        return number
    if kind == "integer":
        if not _INTEGER_RE.fullmatch(stripped):
            raise _Invalid("must be a whole number")
        return int(stripped)
    if kind == "date":
        try:
            if not _DATE_RE.fullmatch(stripped):
                raise ValueError
            return date.fromisoformat(stripped).isoformat()
        except ValueError:
            raise _Invalid("must be a date (YYYY-MM-DD)") from None
    if kind == "datetime":
        try:
            if not _DATETIME_RE.fullmatch(stripped):
                raise ValueError
            return datetime.fromisoformat(stripped.replace("Z", "+00:00")).isoformat()
        except ValueError:
            raise _Invalid("must be a date and time (YYYY-MM-DDTHH:MM)") from None
    if kind == "email":
        if len(stripped) > 254 or not _EMAIL_RE.fullmatch(stripped):
            raise _Invalid("must be a valid email address")
        return stripped
    if kind == "url":
        parts = urlsplit(stripped)
        if parts.scheme not in ("http", "https") or not parts.netloc or re.search(r"\s", stripped):
            raise _Invalid("must be a valid web address starting with http:// or https://")
        return stripped
    if kind in ("select", "radio"):
        if stripped not in _options(field):
            raise _Invalid("must be one of the listed options")
        return stripped
    raise _Invalid("cannot be submitted")


def _coerce(field: Mapping[str, Any], raw: str | list[str] | None) -> Any:
    """Coerce the raw submission of one field; raises ``_Invalid``."""
    if field["type"] == "multiselect":
        items = [raw] if isinstance(raw, str) else list(raw or [])
        allowed = _options(field)
        chosen: list[str] = []
        for item in items:
            if not isinstance(item, str) or not item:
                continue
            if item not in allowed:
                raise _Invalid("must only contain listed options")
            if item not in chosen:
                chosen.append(item)
        return chosen
    if isinstance(raw, list):
        raw = raw[-1] if raw else None
    if raw is None:
        return False if field["type"] == "boolean" else None
    if not isinstance(raw, str):
        raise _Invalid("has an unexpected value")
    return _coerce_one(field, raw)


def _constraint_error(field: Mapping[str, Any], value: Any) -> str | None:
    """Check a coerced, non-empty value against min/max, lengths and pattern."""
    label = field_label(field)
    kind = field["type"]
    low, high = field.get("min"), field.get("max")
    if kind in ("number", "integer"):
        if _is_number(low) and value < low:
            return f"{label} must be at least {_fmt(low)}"
        if _is_number(high) and value > high:
            return f"{label} must be at most {_fmt(high)}"
    if kind == "date":
        if isinstance(low, str) and value < low:
            return f"{label} must be on or after {low}"
        if isinstance(high, str) and value > high:
            return f"{label} must be on or before {high}"
    if kind in ("text", "textarea", "email", "url"):
        shortest, longest = field.get("minLength"), max_length(field)
        if _is_count(shortest) and len(value) < shortest:
            return f"{label} must be at least {shortest} characters"
        if _is_count(longest) and len(value) > longest:
            return f"{label} must be at most {longest} characters"
        pattern = field.get("pattern")
        if isinstance(pattern, str) and pattern and pattern_problem(pattern) is None:
            compiled = _compile(pattern)
            if compiled is not None and compiled.fullmatch(value) is None:
                return f"{label} does not match the required format"
    return None


def max_length(field: Mapping[str, Any]) -> int | None:
    """The most characters a field takes: its maxLength, else its type's default."""
    declared = field.get("maxLength")
    return declared if _is_count(declared) else DEFAULT_MAX_LENGTH.get(field.get("type", ""))


def _is_number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_empty(value: Any) -> bool:
    return value is None or value == [] or value is False


def _context(context: Mapping[str, Any] | None, form: Mapping[str, Any]) -> dict[str, Any]:
    ctx: dict[str, Any] = {"$input": {}, "$vars": {}, "$nodes": {}}
    ctx.update(context or {})
    ctx["$form"] = form
    return ctx


def _is_visible(field: Mapping[str, Any], ctx: Mapping[str, Any]) -> bool:
    condition = field.get("visibleIf")
    if not isinstance(condition, str) or not condition.strip():
        return True
    try:
        return bool(expressions.evaluate(condition, ctx))
    except expressions.ExpressionError:
        return False


def initial_values(spec: Any, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return each input field's default; ``{"expr": ...}`` defaults evaluated (None on failure)."""
    # iter_fields does not check keys, so a broken spec's key is stored as found (even None).
    values: dict[Any, Any] = {}
    ctx = _context(context, values)
    for field in iter_fields(spec):
        if field["type"] == "display":
            continue
        default = field.get("default")
        if isinstance(default, dict):
            try:
                default = expressions.evaluate(str(default.get("expr", "")), ctx)
            except expressions.ExpressionError:
                default = None
        values[field.get("key")] = default
    return values


def visible_fields(
    spec: Any, context: Mapping[str, Any] | None = None, values: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Return the fields (display fields included) shown for ``values`` (defaults when ``None``)."""
    form: dict[Any, Any] = dict(initial_values(spec, context) if values is None else values)
    ctx = _context(context, form)
    shown = []
    for field in iter_fields(spec):
        if _is_visible(field, ctx):
            shown.append(field)
        else:
            form.pop(field.get("key"), None)
    return shown


def display_text(value: Any) -> str:
    """How a value reads on the page: yes/no, lists joined, whole floats without `.0`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(display_text(item) for item in value)
    return str(value)


def display_value(field: Mapping[str, Any], context: Mapping[str, Any] | None = None) -> Any:
    """Evaluate a ``display`` field's value expression; ``None`` when it fails."""
    try:
        return expressions.evaluate(str(field.get("value") or "null"), _context(context, {}))
    except expressions.ExpressionError:
        return None


def as_submission(data: Mapping[str, Any], spec: Any) -> dict[str, Any]:
    """JSON values as the strings a form would send, so JSON callers (the API, test scenarios)
    and the form share one validation."""
    raw: dict[str, Any] = {}
    for field in iter_fields(spec):
        value = data.get(field.get("key", ""))
        if value is None:
            continue
        if isinstance(value, bool):
            raw[field["key"]] = "true" if value else "false"
        elif isinstance(value, int | float):
            raw[field["key"]] = repr(value) if isinstance(value, float) else str(value)
        elif isinstance(value, list) and field["type"] == "multiselect":
            raw[field["key"]] = [str(item) for item in value]
        else:
            raw[field["key"]] = value
    return raw


def coerce_submission(
    spec: Any,
    raw: Mapping[str, str | list[str]],
    context: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """Coerce and check a submitted form; returns ``(values, errors)`` keyed by field key.

    ``raw`` maps keys to strings or lists (a Werkzeug MultiDict works; for single-value fields
    the last value wins). Hidden fields are neither required nor returned; display fields are
    never read. A required boolean must be checked; absent booleans are False.
    """
    coerced: dict[str, Any] = {}
    failures: dict[str, str] = {}
    inputs = [
        f for f in iter_fields(spec) if f["type"] != "display" and isinstance(f.get("key"), str)
    ]
    for field in inputs:
        key = field["key"]
        submitted = raw.getlist(key) if hasattr(raw, "getlist") else raw.get(key)
        try:
            coerced[key] = _coerce(field, submitted)
        except _Invalid as exc:
            failures[key] = f"{field_label(field)} {exc}"
    form = dict(coerced)
    ctx = _context(context, form)
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field in inputs:
        key = field["key"]
        if not _is_visible(field, ctx):
            form.pop(key, None)
            continue
        if key in failures:
            errors[key] = failures[key]
            continue
        value = coerced[key]
        if field.get("required") is True and _is_empty(value):
            verb = "must be checked" if field["type"] == "boolean" else "is required"
            errors[key] = f"{field_label(field)} {verb}"
            continue
        problem = None if _is_empty(value) else _constraint_error(field, value)
        if problem:
            errors[key] = problem
        else:
            values[key] = value
    return values, errors


def _syntax_problem(key: str, attribute: str, text: str) -> FormSpecProblem | None:
    error = expressions.check(text)
    if error is None:
        return None
    return FormSpecProblem(
        key,
        f"Field '{key}' {attribute} is not a valid expression: {error.message}",
        "expression.syntax",
    )


def _check_default(field: Mapping[str, Any]) -> str | None:
    default = field.get("default")
    kind = field["type"]
    if default is None or isinstance(default, dict) or kind == "display":
        return None
    expected = {
        "number": _is_number(default),
        "integer": isinstance(default, int) and not isinstance(default, bool),
        "boolean": isinstance(default, bool),
        "multiselect": isinstance(default, list),
    }.get(kind, isinstance(default, str))
    if not expected:
        return "the default does not match the field type"
    if isinstance(default, bool):
        raw: str | list[str] = "true" if default else "false"
    else:
        raw = default if isinstance(default, list) else str(default)
    try:
        value = _coerce(field, raw)
    except _Invalid as exc:
        return f"the default {exc}"
    problem = None if _is_empty(value) else _constraint_error(field, value)
    return f"the default is invalid: {problem}" if problem else None


def _check_bounds(field: Mapping[str, Any]) -> list[tuple[str, str]]:
    messages: list[tuple[str, str]] = []
    kind = field["type"]
    low, high = field.get("min"), field.get("max")
    for name, bound in (("min", low), ("max", high)):
        if bound is None:
            continue
        if kind == "date":
            if not isinstance(bound, str) or not _DATE_RE.fullmatch(bound):
                messages.append((name, f"{name} must be a date (YYYY-MM-DD)"))
                continue
            try:
                date.fromisoformat(bound)
            except ValueError:
                messages.append((name, f"{name} must be a date (YYYY-MM-DD)"))
        elif not _is_number(bound) or not math.isfinite(bound):
            messages.append((name, f"{name} must be a number"))
    if not messages and low is not None and high is not None and low > high:
        messages.append(("max", "min is greater than max"))
    shortest, longest = field.get("minLength"), field.get("maxLength")
    for name, count in (("minLength", shortest), ("maxLength", longest)):
        if count is not None and not _is_count(count):
            messages.append((name, f"{name} must be a whole number of at least 0"))
    if _is_count(shortest) and _is_count(longest) and shortest > longest:
        messages.append(("maxLength", "minLength is greater than maxLength"))
    if field.get("pattern") is not None:
        problem = pattern_problem(field["pattern"])
        if problem:
            messages.append(("pattern", problem))
    return messages


def _check_options(field: Mapping[str, Any]) -> list[str]:
    """Messages about a field's options (all of them belong to its ``options`` attribute)."""
    options = field.get("options")
    if not isinstance(options, list) or not options:
        return ["needs a list of options"]
    if len(options) > MAX_OPTIONS:
        return [f"has more than {MAX_OPTIONS} options"]
    messages: list[str] = []
    seen: set[str] = set()
    for i, option in enumerate(options, 1):
        if not isinstance(option, dict) or not isinstance(option.get("value"), str):
            messages.append(f"option {i} needs a string value")
            continue
        if not option["value"]:
            messages.append(f"option {i} has an empty value")
        if not isinstance(option.get("label", ""), str):
            messages.append(f"option {i} label must be a string")
        if option["value"] in seen:
            messages.append(f"option value '{option['value']}' is listed twice")
        seen.add(option["value"])
    return messages


def _check_field(field: dict[str, Any], index: int, seen: set[str]) -> list[FormSpecProblem]:
    """The problems of the field at 0-based `index`, each placed on the attribute to change."""
    key = field.get("key")

    def problem(attribute: str, message: str, key: str | None = key) -> FormSpecProblem:
        return FormSpecProblem(key, message, index=index, attribute=attribute)

    if not is_identifier(key) or len(key) > MAX_KEY_LENGTH:
        return [
            problem(
                "key", f"Field {index + 1} needs a key that is an identifier, like amount", None
            )
        ]
    if key in RESERVED_KEYS:
        return [problem("key", f"Field key '{key}' is reserved; choose another key")]
    if key in seen:
        return [problem("key", f"Field key '{key}' is used twice")]
    seen.add(key)
    kind = field.get("type")
    if kind not in FIELD_TYPES:
        return [problem("type", f"Field '{key}' has unknown type {kind!r}")]
    messages: list[tuple[str, str]] = []
    for name in ("label", "help", "placeholder"):
        if field.get(name) is not None and not isinstance(field[name], str):
            messages.append((name, f"{name} must be a string"))
    if field.get("required") is not None and not isinstance(field["required"], bool):
        messages.append(("required", "required must be true or false"))
    allowed = FIELD_TYPES[kind].attributes
    for name in sorted(_SPECIFIC - allowed):
        if field.get(name) is not None:
            messages.append((name, f"{name} does not apply to {kind} fields"))
    messages.extend(_check_bounds(field))
    if FIELD_TYPES[kind].has_options:
        messages.extend(("options", message) for message in _check_options(field))
    if kind == "display" and not (isinstance(field.get("value"), str) and field["value"].strip()):
        messages.append(("value", "needs a value expression to display"))
    visible_if = field.get("visibleIf")
    if visible_if is not None and not isinstance(visible_if, str):
        messages.append(("visibleIf", "visibleIf must be an expression string"))
    default = field.get("default")
    if isinstance(default, dict) and not isinstance(default.get("expr"), str):
        messages.append(("default", 'a computed default must look like {"expr": "<expression>"}'))
    elif not messages:
        default_problem = _check_default(field)
        if default_problem:
            messages.append(("default", default_problem))
    problems = [problem(name, f"Field '{key}': {message}") for name, message in messages]
    for attribute, text in field_expressions(field):
        syntax = _syntax_problem(key, attribute, text)
        if syntax:
            problems.append(replace(syntax, index=index, attribute=attribute))
    return problems


def validate_form_spec(spec: Any) -> list[FormSpecProblem]:
    """Check a form spec (``None`` means no form); returns problems, empty when the spec is fine."""
    if spec is None:
        return []
    if not isinstance(spec, Mapping):
        return [FormSpecProblem(None, "The form must be an object with a list of fields")]
    fields = spec.get("fields", [])
    if not isinstance(fields, list):
        return [FormSpecProblem(None, "The form's fields must be a list")]
    if len(fields) > MAX_FIELDS:
        return [FormSpecProblem(None, f"The form has more than {MAX_FIELDS} fields")]
    problems: list[FormSpecProblem] = []
    seen: set[str] = set()
    for index, field in enumerate(fields):
        if not isinstance(field, dict):
            problems.append(
                FormSpecProblem(None, f"Field {index + 1} must be an object", index=index)
            )
            continue
        problems.extend(_check_field(field, index, seen))
    return problems
