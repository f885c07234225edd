"""Properties-panel forms, one per element kind, and their conversion to and from node config.

`initial_data` fills a form from an element's values (sent by the canvas or read from the draft),
`read_values` turns a valid submission back into title + config (or a flow's condition/default),
adding inline errors for values that would not work. Config keys a kind does not edit are kept.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flask_wtf import FlaskForm
from wtforms import (
    BooleanField,
    FieldList,
    FloatField,
    Form,
    FormField,
    HiddenField,
    IntegerField,
    RadioField,
    SelectField,
    StringField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, NumberRange, Optional

from webapp.designer.form_spec import FieldRow, row_data, spec_from_rows, spec_problems
from webapp.inputs import parse_json
from webapp.process import expressions
from webapp.process.bpmn.writer import xml_safe
from webapp.process.document import is_identifier
from webapp.process.durations import parse_duration
from webapp.process.forms import MAX_FIELDS
from webapp.process.kinds import KINDS
from webapp.process.tools import ToolSpec

FLOW = "sequenceFlow"
SECONDS = "Use a number of seconds above 0 and at most 86400 (a day)."
EXPRESSION_HINT = "An expression, such as $input.amount > 1000 or $vars.review.approved == true."


@dataclass
class PanelContext:
    """Choices that come from the database and the tool registry."""

    users: list[SelectChoice] = field(default_factory=list)
    roles: list[SelectChoice] = field(default_factory=list)
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)


def _save_to_field(label: str, what: str) -> StringField:
    return StringField(
        label,
        validators=[Optional(), Length(max=64)],
        description=f"A name; later steps read {what} as $vars.<name>.",
    )


class PanelForm(FlaskForm):
    element_id = HiddenField()
    kind = HiddenField()
    original = HiddenField()
    revision = HiddenField()
    title = StringField("Title", validators=[Optional(), Length(max=500)])


class _WithForm(PanelForm):
    fields = FieldList(FormField(FieldRow), max_entries=MAX_FIELDS)


class StartEventPanel(_WithForm):
    pass


class UserTaskPanel(_WithForm):
    assignee_type = RadioField(
        "Assign to",
        choices=[
            SelectChoice("user", "A user"),
            SelectChoice("role", "Everyone with a role"),
            SelectChoice("expression", "Computed (expression)"),
        ],
        default="user",
    )
    assignee_user = SelectField("User", validate_choice=False)
    assignee_role = SelectField("Role", validate_choice=False)
    assignee_expression = StringField(
        "Assignee expression", validators=[Optional(), Length(max=2000)]
    )
    due_in = StringField(
        "Due in",
        validators=[Optional(), Length(max=64)],
        description="An ISO-8601 duration: PT4H is 4 hours, P2D 2 days. Empty: no due date.",
    )
    save_to = _save_to_field("Save the result as", "the submitted form")


class InputRow(Form):
    name = HiddenField()
    expression = StringField("Expression", validators=[Optional(), Length(max=2000)])


class ServiceTaskPanel(PanelForm):
    tool = SelectField("Tool", validate_choice=False)
    inputs = FieldList(FormField(InputRow))
    save_to = _save_to_field("Save the result as", "the tool's result")
    retries = IntegerField(
        "Retries",
        validators=[
            Optional(),
            NumberRange(min=0, max=100, message="Use a whole number from 0 to 100."),
        ],
        default=3,
    )
    backoff = FloatField(
        "Backoff (seconds)",
        validators=[Optional(), NumberRange(min=0.001, max=86_400, message=SECONDS)],
        default=2,
        description="Retry n waits backoff * 2^(n-1) seconds.",
    )
    timeout = FloatField(
        "Timeout (seconds)",
        validators=[Optional(), NumberRange(min=0.001, max=86_400, message=SECONDS)],
        default=30,
    )


class TimerPanel(PanelForm):
    timer_type = RadioField(
        "Wait",
        choices=[SelectChoice("duration", "For a duration"), SelectChoice("date", "Until a date")],
        default="duration",
    )
    duration = StringField(
        "Duration", validators=[Optional(), Length(max=64)], description="Such as PT5M or P1DT2H."
    )
    date = StringField(
        "Date (expression)",
        validators=[Optional(), Length(max=2000)],
        description="An expression giving an ISO date and time, such as $input.deadline.",
    )


class MessagePanel(PanelForm):
    message = StringField("Message name", validators=[Optional(), Length(max=200)])
    correlation_key = StringField(
        "Correlation key (expression)",
        validators=[Optional(), Length(max=2000)],
        description="Matched against the key sent with the message, such as $input.orderId.",
    )
    save_to = _save_to_field("Save the message as", "the message payload")


class PlainPanel(PanelForm):
    pass


class FlowPanel(PanelForm):
    source_kind = HiddenField()
    condition = StringField(
        "Condition", validators=[Optional(), Length(max=2000)], description=EXPRESSION_HINT
    )
    default = BooleanField("Default flow: taken when no other condition is true")


PANELS: dict[str, type[PanelForm]] = {
    "startEvent": StartEventPanel,
    "endEvent": PlainPanel,
    "userTask": UserTaskPanel,
    "serviceTask": ServiceTaskPanel,
    "exclusiveGateway": PlainPanel,
    "parallelGateway": PlainPanel,
    "timerCatch": TimerPanel,
    "messageCatch": MessagePanel,
    FLOW: FlowPanel,
}


def make_form(kind: str, context: PanelContext, **kwargs: Any) -> PanelForm:
    """A panel form for `kind` with its database choices filled in.

    A stored value that is no longer offered (a user who left the partition, a removed tool)
    stays selectable so opening and applying the panel does not lose it; nothing else is added.
    """
    form = PANELS[kind](**kwargs)
    stored = original_values(form)
    if isinstance(form, UserTaskPanel):
        assignee = stored.get("assignee") if isinstance(stored.get("assignee"), dict) else {}
        kept = {assignee.get("type"): assignee.get("value")}
        form.assignee_user.choices = _with_current(
            [SelectChoice("", "— choose a user —"), *context.users], kept.get("user")
        )
        form.assignee_role.choices = _with_current(
            [SelectChoice("", "— choose a role —"), *context.roles], kept.get("role")
        )
    if isinstance(form, ServiceTaskPanel):
        tools = [SelectChoice(name, name) for name in context.tools]
        form.tool.choices = _with_current(
            [SelectChoice("", "— choose a tool —"), *tools], stored.get("tool")
        )
    return form


def _with_current(choices: list[SelectChoice], current: Any) -> list[SelectChoice]:
    """Keep a stored value selectable even when it is no longer offered (so it is not lost)."""
    if current and current not in {c.value for c in choices}:
        choices.append(SelectChoice(str(current), f"{current} (not available here)"))
    return choices


def _number_text(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def initial_data(kind: str, element_id: str, title: str, values: Mapping[str, Any]) -> dict:
    """Form data for an element: `values` is a node's config, or a flow's condition/default."""
    data: dict[str, Any] = {
        "element_id": element_id,
        "kind": kind,
        "title": title,
        "original": json.dumps(dict(values), sort_keys=True),
    }
    if kind == FLOW:
        data.update(
            condition=values.get("condition") or "",
            default=bool(values.get("default")),
            source_kind=values.get("source_kind") or "",
        )
        return data
    config = values
    form_spec = config.get("form")
    if isinstance(form_spec, dict) and isinstance(form_spec.get("fields"), list):
        data["fields"] = [row_data(f) for f in form_spec["fields"] if isinstance(f, dict)]
    if kind == "userTask":
        assignee = config.get("assignee") if isinstance(config.get("assignee"), dict) else {}
        kind_of = assignee.get("type") if assignee.get("type") in ("user", "role") else None
        kind_of = kind_of or ("expression" if assignee.get("value") else "user")
        data.update(
            assignee_type=kind_of,
            assignee_user=assignee.get("value", "") if kind_of == "user" else "",
            assignee_role=assignee.get("value", "") if kind_of == "role" else "",
            assignee_expression=assignee.get("value", "") if kind_of == "expression" else "",
            due_in=config.get("dueIn") or "",
            save_to=config.get("saveTo") or "",
        )
    elif kind == "serviceTask":
        defaults = KINDS[kind].defaults
        data.update(
            tool=config.get("tool") or "",
            save_to=config.get("saveTo") or "",
            inputs=[
                {"name": k, "expression": v}
                for k, v in (config.get("inputs") or {}).items()
                if isinstance(v, str)
            ],
            **{
                k: _number_text(config.get(k, defaults[k]))
                for k in ("retries", "backoff", "timeout")
            },
        )
    elif kind == "timerCatch":
        data.update(
            timer_type="date" if config.get("date") and not config.get("duration") else "duration",
            duration=config.get("duration") or "",
            date=config.get("date") or "",
        )
    elif kind == "messageCatch":
        data.update(
            message=config.get("message") or "",
            correlation_key=config.get("correlationKey") or "",
            save_to=config.get("saveTo") or "",
        )
    return data


def input_rows(tool: ToolSpec | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mapping rows: one per input the tool declares, then any other input already mapped."""
    given = {row.get("name"): row.get("expression") or "" for row in rows if row.get("name")}
    declared = [item.name for item in tool.inputs] if tool else []
    names = declared + [name for name in given if name not in declared and given[name]]
    return [{"name": name, "expression": given.get(name, "")} for name in names]


def original_values(form: PanelForm) -> dict[str, Any]:
    try:
        values = parse_json(form.original.data or "{}", "original")
    except ValueError:
        return {}
    return values if isinstance(values, dict) else {}


def _expression_error(field: Any, *, required: bool = False) -> str | None:
    text = (field.data or "").strip()
    if not text:
        if required:
            field.errors.append("Enter an expression.")
        return None
    error = expressions.check(text)
    if error is not None:
        field.errors.append(f"Not a valid expression: {error.message}.")
    return text


def _save_to(field: Any) -> str | None:
    text = (field.data or "").strip()
    if text and not is_identifier(text):
        field.errors.append("Use a plain name: letters, digits and _, not starting with a digit.")
    return text or None


def _duration(field: Any) -> str | None:
    text = (field.data or "").strip()
    if text:
        try:
            parse_duration(text)
        except ValueError as exc:
            message = str(exc)
            field.errors.append(message[:1].upper() + message[1:] + ".")
    return text or None


def read_values(form: PanelForm, context: PanelContext) -> dict[str, Any]:
    """The submitted element as {"title", "config"} (nodes) or {"title", "condition", "default"}.

    Adds inline errors to `form` for values that would not work; check `has_errors` afterwards.
    """
    kind = form.kind.data
    title = (form.title.data or "").strip()
    if not xml_safe(title):
        form.title.errors.append("The title contains control characters; remove them.")
    if kind == FLOW:
        assert isinstance(form, FlowPanel)
        default = bool(form.default.data) and form.source_kind.data == "exclusiveGateway"
        condition = None if default else _expression_error(form.condition)
        return {"title": title, "condition": condition, "default": default}
    original = original_values(form)
    config = {k: v for k, v in original.items() if k not in KINDS[kind].config_keys}
    if isinstance(form, _WithForm):
        spec, messages = spec_from_rows([entry.data for entry in form.fields.entries])
        by_key, general = spec_problems(spec)
        for index, entry in enumerate(form.fields.entries):
            entry.form.key.errors = list(entry.form.key.errors) + messages.get(index, [])
            entry.form.key.errors += by_key.get((entry.data.get("key") or "").strip(), [])
        form.form_errors.extend(general)
        if spec:
            config["form"] = spec
    if isinstance(form, UserTaskPanel):
        _read_user_task(form, config)
    elif isinstance(form, ServiceTaskPanel):
        _read_service_task(form, config, context)
    elif isinstance(form, TimerPanel):
        if form.timer_type.data == "date":
            date = _expression_error(form.date, required=True)
            if date:
                config["date"] = date
        else:
            duration = _duration(form.duration)
            if duration:
                config["duration"] = duration
            elif not form.duration.errors:
                form.duration.errors.append("Enter a duration such as PT5M.")
    elif isinstance(form, MessagePanel):
        message = (form.message.data or "").strip()
        if message:
            config["message"] = message
        key = _expression_error(form.correlation_key)
        if key:
            config["correlationKey"] = key
        save_to = _save_to(form.save_to)
        if save_to:
            config["saveTo"] = save_to
    return {"title": title, "config": config}


def _read_user_task(form: UserTaskPanel, config: dict[str, Any]) -> None:
    kind = form.assignee_type.data
    if kind == "expression":
        value = _expression_error(form.assignee_expression)
    else:
        chosen = form.assignee_user if kind == "user" else form.assignee_role
        value = (chosen.data or "").strip()
        if value and value not in {c.value for c in chosen.choices}:
            chosen.errors.append("Choose one of the listed names.")
    if value:
        config["assignee"] = {"type": kind, "value": value}
    due = _duration(form.due_in)
    if due:
        config["dueIn"] = due
    save_to = _save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to


def _read_service_task(
    form: ServiceTaskPanel, config: dict[str, Any], context: PanelContext
) -> None:
    tool_name = (form.tool.data or "").strip()
    if tool_name:
        if tool_name not in {c.value for c in form.tool.choices}:
            form.tool.errors.append(f"There is no tool called '{tool_name}'.")
        config["tool"] = tool_name
    inputs = {}
    for entry in form.inputs.entries:
        name = (entry.form.name.data or "").strip()
        text = _expression_error(entry.form.expression)
        if text and not is_identifier(name):
            entry.form.expression.errors.append(
                "Name the input with letters, digits and _, not starting with a digit."
            )
        elif name and text:
            inputs[name] = text
    config["inputs"] = inputs
    save_to = _save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to
    for name in ("retries", "backoff", "timeout"):
        value = getattr(form, name).data
        if value is not None:
            config[name] = _number_text(value)


def has_errors(form: PanelForm) -> bool:
    """Any inline error, in the form or its nested rows."""
    return bool(form.form_errors) or any(_field_errors(item) for item in form)


def _field_errors(item: Any) -> bool:
    if isinstance(item, FieldList):
        return any(_field_errors(entry) for entry in item.entries)
    if isinstance(item, FormField):
        return any(_field_errors(sub) for sub in item.form)
    return bool(item.errors)
