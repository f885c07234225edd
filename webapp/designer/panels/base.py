"""The panel form every kind builds on, its database choices, and the readers of shared values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask_wtf import FlaskForm
from wtforms import (
    FieldList,
    FormField,
    HiddenField,
    StringField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional

from webapp.designer.form_spec import (
    FieldRow,
    input_shown,
    missing_in_row,
    row_data,
    spec_from_rows,
    spec_problems,
)
from webapp.designer.missing import Missing, blocking
from webapp.inputs import parse_json
from webapp.process import expressions
from webapp.process.bpmn.writer import xml_safe
from webapp.process.document import is_identifier
from webapp.process.durations import parse_duration
from webapp.process.forms import MAX_FIELDS
from webapp.process.kinds import KINDS
from webapp.process.tools import ToolSpec

FLOW = "sequenceFlow"


@dataclass
class PanelContext:
    """Choices that come from the database and the tool registry."""

    users: list[SelectChoice] = field(default_factory=list)
    roles: list[SelectChoice] = field(default_factory=list)
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    processes: list[SelectChoice] = field(default_factory=list)
    versions: Mapping[str, int] = field(default_factory=dict)
    decisions: list[str] = field(default_factory=list)


def save_to_field(label: str, what: str) -> StringField:
    """A "save the result as" field, naming what later steps read (`what`)."""
    return StringField(
        label,
        validators=[Optional(), Length(max=64)],
        description=f"A name; later steps read {what} as $vars.<name>.",
    )


MAX_CODE = 200


class PanelForm(FlaskForm):
    """The fields every panel has (element, stored config, title) and the hooks kinds fill in."""

    element_id = HiddenField()
    kind = HiddenField()
    original = HiddenField()
    revision = HiddenField()
    names = HiddenField()  # JSON: the signal and message names used in the process
    title = StringField("Title", validators=[Optional(), Length(max=500)])
    #: How many missing-value errors are not shown yet (their fields not left, no Apply pressed).
    hidden_missing = 0

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        """The form data of this panel's own fields, from a node's config."""
        return {}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        """Write the submitted fields into `config`, adding inline errors for values that
        would not work."""

    @classmethod
    def canvas_values(cls, args: Mapping[str, str], config: dict[str, Any]) -> Mapping[str, Any]:
        """The values to load from what the canvas sends (`args`): the node's parsed `config`."""
        return config

    def applied_values(self, values: Mapping[str, Any]) -> Mapping[str, Any]:
        """The values the form shown after an apply loads, from the applied `values`."""
        return values["config"]

    @classmethod
    def placement(cls, args: Mapping[str, str]) -> dict[str, Any]:
        """Form data on where the element sits besides its config, from `args` (what the canvas
        sends, or the outline finds in the draft)."""
        return {}

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """What the form shown after an apply keeps of this one besides the applied config
        (`data`, that form's data so far)."""
        return {}

    def read(self, title: str, context: PanelContext) -> dict[str, Any]:
        """The submitted element: its title and config (the config keys the kind does not
        edit kept as they were)."""
        original = original_values(self)
        keys = KINDS[self.kind.data].config_keys
        config = {k: v for k, v in original.items() if k not in keys}
        self.dump(config, context)
        return {"title": title, "config": config}


class WithForm(PanelForm):
    """A panel with form-field rows (user tasks, process starts): loads and dumps `form`."""

    fields = FieldList(FormField(FieldRow), max_entries=MAX_FIELDS)

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        form_spec = config.get("form")
        if isinstance(form_spec, dict) and isinstance(form_spec.get("fields"), list):
            return {"fields": [row_data(f) for f in form_spec["fields"] if isinstance(f, dict)]}
        return {}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        spec, messages = spec_from_rows([entry.data for entry in self.fields.entries])
        placed, general = spec_problems(spec)
        for index, entry in enumerate(self.fields.entries):
            missing = missing_in_row(entry.data)
            for name, message in missing.items():
                entry.form[name].errors = [*entry.form[name].errors, Missing(message)]
            field_type = entry.data.get("type")
            converted = messages.get(index, {})
            for name in {*converted, *(name for at, name in placed if at == index)}:
                found = [*converted.get(name, []), *placed.get((index, name), [])]
                if name in missing:
                    continue
                target = entry.form[name] if input_shown(name, field_type) else entry.form.key
                target.errors = [*target.errors, *found]
        self.form_errors.extend(general)
        if spec:
            config["form"] = spec


def number_text(value: Any) -> Any:
    """A whole float as an int, so 3.0 is stored and shown as 3."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def as_text(value: Any) -> str:
    """A stored value as text, "" when it is not a string."""
    return value if isinstance(value, str) else ""


def as_rows(mapping: Any) -> list[dict[str, str]]:
    """Name → expression rows of a dict setting (a call's inputs, a signal's payload)."""
    if not isinstance(mapping, dict):
        return []
    return [{"name": k, "expression": v} for k, v in mapping.items() if isinstance(v, str)]


def original_values(form: PanelForm) -> dict[str, Any]:
    """The config the panel was opened with (kept in the form), {} when unreadable."""
    try:
        values = parse_json(form.original.data or "{}", "original")
    except ValueError:
        return {}
    return values if isinstance(values, dict) else {}


def read_expression(field: Any, *, required: bool = False) -> str | None:
    """A field's expression; an inline error when it does not parse or is required and empty."""
    text = (field.data or "").strip()
    if not text:
        if required:
            field.errors.append(Missing("Enter an expression."))
        return None
    error = expressions.check(text)
    if error is not None:
        field.errors.append(f"Not a valid expression: {error.message}.")
    return text


def read_save_to(field: Any) -> str | None:
    """A variable name to save a result as, with an inline error when it is not a plain name."""
    text = (field.data or "").strip()
    if text and not is_identifier(text):
        field.errors.append("Use a plain name: letters, digits and _, not starting with a digit.")
    return text or None


def read_duration(field: Any) -> str | None:
    """An ISO-8601 duration, with an inline error when it does not parse."""
    text = (field.data or "").strip()
    if text:
        try:
            parse_duration(text)
        except ValueError as exc:
            message = str(exc)
            field.errors.append(message[:1].upper() + message[1:] + ".")
    return text or None


NAME_PROMPTS = {
    "signal": "Enter the signal's name, such as order-cancelled.",
    "message": "Enter the message's name, such as payment-received.",
    "link": "Enter the link's name; its throw and catch share it.",
}


def read_name(field: Any, key: str, *, required: bool = True) -> dict[str, str]:
    """A signal, message or link name: plain text kept exactly in XML, without outer spaces."""
    text = (field.data or "").strip()
    if not text:
        if required:
            field.errors.append(Missing(NAME_PROMPTS[key]))
        return {}
    if not xml_safe(text):
        field.errors.append("The name contains control characters; remove them.")
        return {}
    return {key: text}


def read_rows(rows: Any, what: str) -> dict[str, str]:
    """Name → expression rows (a call's inputs, a signal's payload); empty rows are dropped."""
    values: dict[str, str] = {}
    for entry in rows.entries:
        name = (entry.form.name.data or "").strip()
        text = read_expression(entry.form.expression)
        if not name and not text:
            continue
        if not is_identifier(name):
            entry.form.name.errors.append(
                f"Name the {what} with letters, digits and _, not starting with a digit."
            )
        elif name in values:
            entry.form.name.errors.append(f"'{name}' is given twice; keep one.")
        elif not text and not entry.form.expression.errors:
            entry.form.expression.errors.append(Missing(f"Enter an expression for this {what}."))
        elif text:
            values[name] = text
    return values


def read_code(field: Any, *, required: bool = False) -> dict[str, str]:
    """An error or escalation code: plain text kept exactly in XML, without outer spaces."""
    text = (field.data or "").strip()
    if not text:
        if required:
            field.errors.append(
                Missing("Enter the code this event throws, such as ORDER_REJECTED.")
            )
        return {}
    if not xml_safe(text):
        field.errors.append("The code contains control characters; remove them.")
        return {}
    return {"code": text}


def has_errors(form: PanelForm) -> bool:
    """Any inline error that keeps the form from applying (a missing value does not)."""
    return blocking(form)
