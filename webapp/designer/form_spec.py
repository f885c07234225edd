"""The form-spec editor: rows of a WTForms FieldList <-> the `{"fields": [...]}` spec of a node.

Each row edits one form field; only the attributes its type takes are shown and stored.
Values are converted per type (numbers, dates, yes/no, comma lists); what cannot be converted
becomes an error on that row, and `validate_form_spec` checks the whole spec on apply.
"""

from __future__ import annotations

import json
from typing import Any

from wtforms import BooleanField, Form, HiddenField, SelectField, StringField, TextAreaField
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional

from webapp.inputs import parse_json, whole_number
from webapp.process.forms import DEFAULT_MAX_LENGTH, FIELD_TYPES, iter_fields, validate_form_spec
from webapp.web.spec_forms import SpecForm, build

# Spec attributes a row edits; anything else a field carries is kept in the row's `extra`.
_EDITED = {
    "key",
    "label",
    "type",
    "required",
    "help",
    "placeholder",
    "default",
    "min",
    "max",
    "minLength",
    "maxLength",
    "pattern",
    "options",
    "value",
    "visibleIf",
}
_TEXT_INPUTS = {"text", "textarea", "number", "integer", "email", "url"}
# The row input that edits each spec attribute, where the two names differ.
_INPUT_OF = {"minLength": "min_length", "maxLength": "max_length", "visibleIf": "visible_if"}
_ALWAYS_SHOWN = {"key", "label", "type", "required", "help"}


class FieldRow(Form):
    """One form field in the editor (a sub-form: the panel form carries the CSRF token); the
    inputs are declared in the order the panel shows them, so errors are summarised that way."""

    key = StringField("Key", validators=[Optional(), Length(max=64)])
    type = SelectField(
        "Type", choices=[SelectChoice(name, t.label) for name, t in FIELD_TYPES.items()]
    )
    # A text area that grows with its text: a long label (a question) stays readable in full.
    label = TextAreaField(
        "Label", validators=[Optional(), Length(max=500)], render_kw={"rows": 1, "class": "grows"}
    )
    required = BooleanField("Required")
    options = TextAreaField(
        "Options", description="One per line: value, or value | label.", render_kw={"rows": 3}
    )
    value = StringField("Value to show (expression)", validators=[Optional(), Length(max=2000)])
    help = StringField("Help text", validators=[Optional(), Length(max=1000)])
    placeholder = StringField("Placeholder", validators=[Optional(), Length(max=500)])
    default = StringField("Default", validators=[Optional(), Length(max=2000)])
    default_is_expression = BooleanField("Default is an expression")
    min = StringField("Minimum")
    max = StringField("Maximum")
    min_length = StringField("Min. length")
    max_length = StringField("Max. length")
    pattern = StringField("Pattern (regular expression)", validators=[Optional(), Length(max=500)])
    visible_if = StringField("Show only if (expression)", validators=[Optional(), Length(max=2000)])
    extra = HiddenField()


def shown_attributes(kind: str) -> set[str]:
    """Row inputs to render for a field type (besides key, label, type, required, help)."""
    field_type = FIELD_TYPES.get(kind) or FIELD_TYPES["text"]
    shown = set(field_type.attributes) | {"visibleIf"}
    if kind != "display":
        shown.add("default")
    if kind in _TEXT_INPUTS:
        shown.add("placeholder")
    return shown


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def row_data(field: dict[str, Any]) -> dict[str, Any]:
    """The editor row for one spec field."""
    default = field.get("default")
    options = field["options"] if isinstance(field.get("options"), list) else []
    lines = []
    for option in options:
        if isinstance(option, dict):
            value, label = _text(option.get("value")), _text(option.get("label"))
            lines.append(f"{value} | {label}" if label and label != value else value)
    extra = {k: v for k, v in field.items() if k not in _EDITED}
    return {
        "key": _text(field.get("key")),
        "label": _text(field.get("label")),
        "type": field.get("type") if field.get("type") in FIELD_TYPES else "text",
        "required": field.get("required") is True,
        "help": _text(field.get("help")),
        "placeholder": _text(field.get("placeholder")),
        "default": (
            default["expr"]
            if isinstance(default, dict) and "expr" in default
            else ", ".join(map(_text, default))
            if isinstance(default, list)
            else _text(default)
        ),
        "default_is_expression": isinstance(default, dict),
        "min": _text(field.get("min")),
        "max": _text(field.get("max")),
        "min_length": _text(field.get("minLength")),
        "max_length": _text(field.get("maxLength")),
        "pattern": _text(field.get("pattern")),
        "options": "\n".join(lines),
        "value": _text(field.get("value")),
        "visible_if": _text(field.get("visibleIf")),
        "extra": json.dumps(extra, sort_keys=True) if extra else "",
    }


def _number(text: str, whole: bool) -> int | float:
    if whole:
        return int(text)
    number = float(text)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(text)
    return int(number) if number.is_integer() and "e" not in text.lower() else number


def _bound(kind: str, text: str) -> Any:
    if kind == "date":
        return text
    return _number(text, kind == "integer")


def _default(kind: str, text: str) -> Any:
    if kind in ("number", "integer"):
        return _number(text, kind == "integer")
    if kind == "boolean":
        lowered = text.lower()
        if lowered not in ("yes", "no", "true", "false"):
            raise ValueError(text)
        return lowered in ("yes", "true")
    if kind == "multiselect":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def row_input(attribute: str | None) -> str:
    """The row input that edits a spec attribute (the key for the field as a whole)."""
    if attribute is None:
        return "key"
    return _INPUT_OF.get(attribute, attribute)


def input_shown(name: str, kind: str | None) -> bool:
    """Whether a row of field type `kind` shows the input `name` (else its key holds messages)."""
    attribute = {v: k for k, v in _INPUT_OF.items()}.get(name, name)
    return name in _ALWAYS_SHOWN or attribute in shown_attributes(kind or "text")


def row_field(row: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The spec field for an editor row, and messages for values that could not be converted,
    by the row input that holds them."""
    kind = row["type"] if row.get("type") in FIELD_TYPES else "text"
    shown = shown_attributes(kind)
    field: dict[str, Any] = {"key": (row.get("key") or "").strip(), "type": kind}
    problems: dict[str, list[str]] = {}
    label = " ".join((row.get("label") or "").split())
    if label:
        field["label"] = label
    if row.get("required") and kind != "display":
        field["required"] = True
    for name, attribute in (
        ("help", "help"),
        ("placeholder", "placeholder"),
        ("pattern", "pattern"),
        ("value", "value"),
        ("visible_if", "visibleIf"),
    ):
        text = (row.get(name) or "").strip() if name != "pattern" else row.get(name) or ""
        if text and (attribute in shown or attribute == "help"):
            field[attribute] = text
    default = (row.get("default") or "").strip()
    if default and "default" in shown:
        if row.get("default_is_expression"):
            field["default"] = {"expr": default}
        else:
            try:
                field["default"] = _default(kind, default)
            except ValueError:
                problems.setdefault("default", []).append(
                    f"Default '{default}' does not fit a {kind} field."
                )
    for attribute, label in (("min", "Minimum"), ("max", "Maximum")):
        text = (row.get(attribute) or "").strip()
        if text and attribute in shown:
            try:
                field[attribute] = _bound(kind, text)
            except ValueError:
                problems.setdefault(attribute, []).append(f"{label} '{text}' must be a number.")
    for name, attribute in (("min_length", "minLength"), ("max_length", "maxLength")):
        text = (row.get(name) or "").strip()
        if text and attribute in shown:
            try:
                field[attribute] = int(text)
            except ValueError:
                message = f"{attribute} '{text}' must be a whole number."
                problems.setdefault(name, []).append(message)
    if "options" in shown:
        field["options"] = _options(row.get("options") or "")
    extra = row.get("extra") or ""
    if extra:
        try:
            kept = parse_json(extra, "extra")
        except ValueError:
            kept = {}
        if isinstance(kept, dict):
            field.update({k: v for k, v in kept.items() if k not in _EDITED})
    return field, problems


def missing_in_row(row: dict[str, Any]) -> dict[str, str]:
    """The row inputs its field type needs that are still empty, with what to enter in each."""
    kind = row["type"] if row.get("type") in FIELD_TYPES else "text"
    missing = {}
    if FIELD_TYPES[kind].has_options and not _options(row.get("options") or ""):
        missing["options"] = "Enter the options to choose from, one per line."
    if kind == "display" and not (row.get("value") or "").strip():
        missing["value"] = "Enter the expression whose value is shown."
    return missing


def _options(text: str) -> list[dict[str, str]]:
    options = []
    for line in text.splitlines():
        value, _, label = line.partition("|")
        value, label = value.strip(), label.strip()
        if value:
            options.append({"value": value, "label": label or value})
    return options


def spec_from_rows(
    rows: list[dict[str, Any]],
) -> tuple[dict[str, Any] | None, dict[int, dict[str, list[str]]]]:
    """The form spec of all rows (None without rows) and conversion messages per row index,
    by row input."""
    fields, messages = [], {}
    for index, row in enumerate(rows):
        field, problems = row_field(row)
        fields.append(field)
        if problems:
            messages[index] = problems
    return ({"fields": fields} if fields else None), messages


def spec_problems(
    spec: dict[str, Any] | None,
) -> tuple[dict[tuple[int, str], list[str]], list[str]]:
    """`validate_form_spec` messages by (row index, row input) as the checks place them, plus
    those about the whole form."""
    placed: dict[tuple[int, str], list[str]] = {}
    general: list[str] = []
    for problem in validate_form_spec(spec):
        if problem.index is None:
            general.append(problem.message)
        else:
            placed.setdefault((problem.index, row_input(problem.attribute)), []).append(
                problem.message
            )
    return placed, general


def edit_rows(rows: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    """Apply an editor action: `field-add`, `field-remove-N`, `field-up-N`, `field-down-N`."""
    rows = list(rows)
    if action == "field-add":
        taken = {row.get("key") for row in rows}
        number = len(rows) + 1
        while f"field{number}" in taken:
            number += 1
        rows.append(row_data({"key": f"field{number}", "label": "", "type": "text"}))
        return rows
    verb, _, raw = action.rpartition("-")
    index = whole_number(raw, 0, len(rows) - 1)
    if index is None:
        return rows
    if verb == "field-remove":
        del rows[index]
    elif verb == "field-up" and index > 0:
        rows[index - 1], rows[index] = rows[index], rows[index - 1]
    elif verb == "field-down" and index < len(rows) - 1:
        rows[index + 1], rows[index] = rows[index], rows[index + 1]
    return rows


def preview(spec: dict[str, Any] | None) -> tuple[SpecForm, list[tuple[str, str]]]:
    """The form as the inbox will build it (every field shown), and the show-only-if notes."""
    fields = [{k: v for k, v in f.items() if k != "visibleIf"} for f in iter_fields(spec)]
    notes = [(str(f.get("key")), f["visibleIf"]) for f in iter_fields(spec) if f.get("visibleIf")]
    return build({"fields": fields}), notes


def max_length_hint(kind: str | None) -> str | None:
    """What an empty Max. length means for a field type, shown under the input."""
    default = DEFAULT_MAX_LENGTH.get(kind or "")
    return f"Empty: at most {default:,} characters." if default else None
