"""Properties-panel forms, one per element kind, and their conversion to and from node config.

Each panel class loads its fields from a node's config (`load`) and dumps a valid submission back
into it (`dump`), adding inline errors for values that would not work; config keys a kind does not
edit are kept. `initial_data` and `read_values` call them for the element's kind (`PANELS`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
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
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, NumberRange, Optional

from webapp.designer import timer_start
from webapp.designer.form_spec import (
    FieldRow,
    input_shown,
    missing_in_row,
    row_data,
    spec_from_rows,
    spec_problems,
)
from webapp.designer.missing import Missing, blocking
from webapp.designer.script_check import script_problems
from webapp.inputs import parse_json
from webapp.process import expressions
from webapp.process.bpmn.writer import xml_safe
from webapp.process.document import is_identifier
from webapp.process.durations import parse_cycle, parse_duration
from webapp.process.forms import MAX_FIELDS
from webapp.process.kinds import KINDS, TOOL_DEFAULTS
from webapp.process.tools import ToolSpec
from webapp.process.validation import RESULTLESS_KINDS

FLOW = "sequenceFlow"
# Flows leaving these take a condition, or are the default.
CONDITION_GATEWAYS = ("exclusiveGateway", "inclusiveGateway")
SECONDS = "Use a number of seconds above 0 and at most 86400 (a day)."
EXPRESSION_HINT = "An expression, such as $input.amount > 1000 or $vars.review.approved == true."


@dataclass
class PanelContext:
    """Choices that come from the database and the tool registry."""

    users: list[SelectChoice] = field(default_factory=list)
    roles: list[SelectChoice] = field(default_factory=list)
    tools: Mapping[str, ToolSpec] = field(default_factory=dict)
    processes: list[SelectChoice] = field(default_factory=list)
    versions: Mapping[str, int] = field(default_factory=dict)


def _save_to_field(label: str, what: str) -> StringField:
    return StringField(
        label,
        validators=[Optional(), Length(max=64)],
        description=f"A name; later steps read {what} as $vars.<name>.",
    )


MAX_CODE = 200


def output_hint(element_id: str, kind: str = "userTask") -> str:
    """What a multi-instance output may read, naming the activity's own `$nodes` entry."""
    if kind == "subProcess":
        return (
            "What the output list gets for each finished instance. A sub-process has no "
            "result of its own: read what the steps inside saved, such as "
            "$nodes.<their id>.approved or $vars.<name>, or $item."
        )
    if kind in RESULTLESS_KINDS:
        return "What the output list gets for each finished instance, from $item or $loop."
    return (
        "What the output list gets for each finished instance instead of its whole result. "
        f"That instance's result is $nodes.{element_id}: a form field as "
        f"$nodes.{element_id}.approved, a tool's value as $nodes.{element_id}.<key>. "
        "Save the result as gets the list only after the last instance, so the output "
        "cannot read it."
    )


class MultiInstanceFields:
    """The multi-instance section of user tasks, service tasks, sub-processes and calls."""

    mi_mode = RadioField(
        "Runs",
        choices=[
            SelectChoice("", "No: runs once"),
            SelectChoice("parallel", "Parallel: all instances at once"),
            SelectChoice("sequential", "Sequential: one instance after another"),
        ],
        default="",
    )
    mi_collection = StringField(
        "Collection (expression)",
        validators=[Optional(), Length(max=2000)],
        description="A list: one instance per element, such as $input.reviewers.",
    )
    mi_element = StringField(
        "Element variable",
        validators=[Optional(), Length(max=64)],
        description="Each instance reads its element as $item, and as $vars.<name> when "
        "named here.",
    )
    mi_cardinality = StringField(
        "Cardinality (expression)",
        validators=[Optional(), Length(max=2000)],
        description="Without a collection: how many instances, such as 3 or len($input.items).",
    )
    mi_completion = StringField(
        "Completion condition",
        validators=[Optional(), Length(max=2000)],
        description="Checked after each instance completes; when true the other instances are "
        "cancelled. Such as $loop.completed >= 2.",
    )
    mi_output = StringField(
        "Output of each instance (expression)",
        validators=[Optional(), Length(max=2000)],
        description=output_hint("<id>"),
    )


class PanelForm(FlaskForm):
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


class _WithForm(PanelForm):
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


class UserTaskPanel(MultiInstanceFields, _WithForm):
    assignee_type = RadioField(
        "Assign to",
        choices=[
            SelectChoice("anyone", "Anyone who works tasks in the partition"),
            SelectChoice("user", "A user"),
            SelectChoice("role", "Everyone with a role"),
            SelectChoice("expression", "Computed (expression)"),
        ],
        default="anyone",
    )
    assignee_user = SelectField("User", validate_choice=False)
    assignee_role = SelectField("Role", validate_choice=False)
    assignee_expression = StringField(
        "Assignee expression", validators=[Optional(), Length(max=2000)]
    )
    candidate_roles = StringField(
        "Also offered to roles",
        validators=[Optional(), Length(max=2000)],
        description="Role names, separated by commas: their members may claim the task too.",
    )
    candidate_users = StringField(
        "Also offered to users",
        validators=[Optional(), Length(max=2000)],
        description="User names, separated by commas: each may claim the task too.",
    )
    candidate_roles_from = StringField(
        "Also offered to roles from (expression)",
        validators=[Optional(), Length(max=2000)],
        description="An expression giving role names when the task is created: a text "
        "separated by commas or a list, such as $vars.approverGroups.",
    )
    candidate_users_from = StringField(
        "Also offered to users from (expression)",
        validators=[Optional(), Length(max=2000)],
        description="An expression giving user names when the task is created.",
    )
    due_in = StringField(
        "Due in",
        validators=[Optional(), Length(max=64)],
        description="An ISO-8601 duration: PT4H is 4 hours, P2D 2 days. Empty: no due date.",
    )
    save_to = _save_to_field("Save the result as", "the submitted form")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        assignee = config["assignee"] if isinstance(config.get("assignee"), dict) else {}
        kind_of = assignee.get("type") if assignee.get("type") in ("user", "role") else None
        kind_of = kind_of or ("expression" if assignee.get("value") else "anyone")
        return {
            **super().load(config),
            "assignee_type": kind_of,
            "assignee_user": assignee.get("value", "") if kind_of == "user" else "",
            "assignee_role": assignee.get("value", "") if kind_of == "role" else "",
            "assignee_expression": assignee.get("value", "") if kind_of == "expression" else "",
            "candidate_roles": ", ".join(_candidates(config, "roles")),
            "candidate_users": ", ".join(_candidates(config, "users")),
            "candidate_roles_from": _candidates_from(config, "rolesFrom"),
            "candidate_users_from": _candidates_from(config, "usersFrom"),
            "due_in": config.get("dueIn") or "",
            "save_to": config.get("saveTo") or "",
            **_multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        _read_user_task(self, config)
        _read_multi_instance(self, config)

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The assignee choice stays as picked (an empty one reads as "anyone")."""
        return {"assignee_type": self.assignee_type.data or data["assignee_type"]}


class InputRow(Form):
    name = HiddenField()
    expression = StringField("Expression", validators=[Optional(), Length(max=2000)])


class MappingRow(Form):
    name = StringField("Name", validators=[Optional(), Length(max=64)])
    expression = StringField("Expression", validators=[Optional(), Length(max=2000)])


class ToolFields:
    """A tool call's settings: service and send tasks, message throws and message ends."""

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


class ServiceTaskPanel(MultiInstanceFields, ToolFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **_tool_data(config),
            "message": _text(config.get("message")),
            **_multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_tool(self, config)
        _read_multi_instance(self, config)


class MessageNameField:
    message = StringField(
        "Message name",
        validators=[Optional(), Length(max=200)],
        description="Pick a name used in this process or type a new one.",
    )


class SendTaskPanel(MultiInstanceFields, ToolFields, MessageNameField, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **_tool_data(config),
            "message": _text(config.get("message")),
            **_multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_tool(self, config)
        config.update(_name(self.message, "message", required=False))
        _read_multi_instance(self, config)


class MessageThrowPanel(ToolFields, MessageNameField, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**_tool_data(config), "message": _text(config.get("message"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_tool(self, config)
        config.update(_name(self.message, "message", required=False))


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

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        dated = config.get("date") and not config.get("duration")
        return {
            "timer_type": "date" if dated else "duration",
            "duration": config.get("duration") or "",
            "date": config.get("date") or "",
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        if self.timer_type.data == "date":
            date = _expression_error(self.date, required=True)
            if date:
                config["date"] = date
        else:
            duration = _duration(self.duration)
            if duration:
                config["duration"] = duration
            elif not self.duration.errors:
                self.duration.errors.append(Missing("Enter a duration such as PT5M."))


class MessagePanel(MessageNameField, PanelForm):
    correlation_key = StringField(
        "Correlation key (expression)",
        validators=[Optional(), Length(max=2000)],
        description="Matched against the key sent with the message, such as $input.orderId.",
    )
    save_to = _save_to_field("Save the message as", "the message payload")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "message": config.get("message") or "",
            "correlation_key": config.get("correlationKey") or "",
            "save_to": config.get("saveTo") or "",
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(_name(self.message, "message", required=False))
        key = _expression_error(self.correlation_key)
        if key:
            config["correlationKey"] = key
        save_to = _save_to(self.save_to)
        if save_to:
            config["saveTo"] = save_to


class ReceiveTaskPanel(MultiInstanceFields, MessagePanel):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), **_multi_instance_data(config.get("multiInstance"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        _read_multi_instance(self, config)


class SignalFields:
    signal = StringField(
        "Signal name",
        validators=[Optional(), Length(max=200)],
        description="Pick a name used in this process or type a new one; a signal is "
        "broadcast by name to every instance of the partition waiting for it.",
    )


class SignalCatchPanel(SignalFields, PanelForm):
    save_to = _save_to_field("Save the signal's payload as", "the payload")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "signal": _text(config.get("signal")),
            "save_to": _text(config.get("saveTo")),
            "payload": _rows(config.get("payload")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(_name(self.signal, "signal"))
        save_to = _save_to(self.save_to)
        if save_to:
            config["saveTo"] = save_to


class PayloadFields:
    payload = FieldList(FormField(MappingRow), max_entries=100)


class SignalThrowPanel(SignalFields, PayloadFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "signal": _text(config.get("signal")),
            "save_to": _text(config.get("saveTo")),
            "payload": _rows(config.get("payload")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(_name(self.signal, "signal"))
        config["payload"] = _read_rows(self.payload, "payload entry")


class LinkPanel(PanelForm):
    link = StringField(
        "Link name",
        validators=[Optional(), Length(max=200)],
        description="A link throw jumps to the link catch of the same name in the same "
        "(sub-)process.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"link": _text(config.get("link"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(_name(self.link, "link"))


class ScriptTaskPanel(MultiInstanceFields, PanelForm):
    language = HiddenField()
    script = TextAreaField(
        "Script",
        validators=[Optional(), Length(max=20_000)],
        description="One assignment per line, name = expression, such as "
        "total = $input.price * $input.qty; each writes $vars.<name>, and a later line sees "
        "the earlier ones. Blank lines and # comments are allowed.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "script": _text(config.get("script")),
            "language": _text(config.get("language")) or "flowdesk",
            **_multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_script(self, config)
        _read_multi_instance(self, config)


class ManualTaskPanel(MultiInstanceFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), **_multi_instance_data(config.get("multiInstance"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        _read_multi_instance(self, config)


class TimerFields:
    """When a timer fires: after a duration, at a date, or (non-interrupting) repeatedly."""

    timer_type = RadioField(
        "Fires",
        choices=[
            SelectChoice("duration", "After a duration"),
            SelectChoice("date", "At a date"),
            SelectChoice("cycle", "Repeatedly (a cycle)"),
        ],
        default="duration",
    )
    duration = StringField(
        "Duration", validators=[Optional(), Length(max=64)], description="Such as PT5M or P2D."
    )
    date = StringField(
        "Date (expression)",
        validators=[Optional(), Length(max=2000)],
        description="An expression giving an ISO date and time, such as $input.deadline.",
    )
    cycle = StringField(
        "Cycle",
        validators=[Optional(), Length(max=100)],
        description="An ISO-8601 repeating interval: R3/PT1H is 3 times hourly, R/P1D daily.",
    )


CATCH_CHOICES = [
    SelectChoice("timer", "A timer"),
    SelectChoice("message", "A message"),
    SelectChoice("signal", "A signal"),
    SelectChoice("error", "An error"),
    SelectChoice("escalation", "An escalation"),
]
PROCESS_START_CHOICES = [
    SelectChoice("", "Someone starting it (by hand or through the API)"),
    SelectChoice("message", "A message (starts a new instance when no instance waits for it)"),
    SelectChoice("timer", "A timer: at a date, or on a schedule"),
    SelectChoice("signal", "A signal"),
]


class CatchFields(SignalFields, MessageNameField, TimerFields):
    """What a catching event (boundary, event sub-process start) reacts to, with its settings."""

    event = SelectField("Reacts to", choices=CATCH_CHOICES, default="timer")
    interrupting = BooleanField("Interrupting", default=True)
    correlation_key = StringField(
        "Correlation key (expression)",
        validators=[Optional(), Length(max=2000)],
        description="Matched against the key sent with the message, such as $input.orderId.",
    )
    code = StringField(
        "Code",
        validators=[Optional(), Length(max=MAX_CODE)],
        description="The code to catch; empty catches every code.",
    )


class StartEventPanel(CatchFields, _WithForm):
    scope = HiddenField()  # "event": the start event of an event sub-process
    timezone = StringField(
        "Time zone",
        validators=[Optional(), Length(max=64)],
        description="An IANA name such as Europe/Berlin; empty is UTC. Cron expressions and "
        "dates without an offset are read in it.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), **_catch_data(config)}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        if self.scope.data == "event":
            config.pop("form", None)
            _read_catch(self, config)
        else:
            _read_process_start(self, config)

    @classmethod
    def placement(cls, args: Mapping[str, str]) -> dict[str, Any]:
        """Whether it starts an event sub-process ("event") or the process."""
        return {"scope": "event" if args.get("scope") == "event" else ""}

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"scope": self.scope.data}


class BoundaryPanel(CatchFields, PanelForm):
    host_name = HiddenField()  # the title of the activity it sits on, as the canvas has it
    save_to = _save_to_field("Save what it caught as", "the message, signal or error")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return _catch_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        host = original_values(self).get("attachedTo")
        if isinstance(host, str):
            config["attachedTo"] = host
        _read_catch(self, config)
        save_to = _save_to(self.save_to)
        if save_to and config.get("event") in ("message", "signal", "error"):
            config["saveTo"] = save_to

    @classmethod
    def placement(cls, args: Mapping[str, str]) -> dict[str, Any]:
        """The title of the activity it sits on, as the canvas has it."""
        return {"host_name": args.get("host_name", "")}

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"host_name": self.host_name.data}


END_CHOICES = [
    SelectChoice("", "Nothing more: a plain end"),
    SelectChoice("error", "An error: thrown to the nearest catcher"),
    SelectChoice("escalation", "An escalation: reported to the nearest catcher"),
    SelectChoice("terminate", "Terminate: ends everything else in its scope"),
    SelectChoice("signal", "A signal: broadcast, then the path ends"),
    SelectChoice("message", "A message: a tool sends it, then the path ends"),
]


class EndEventPanel(ToolFields, SignalFields, PayloadFields, MessageNameField, PanelForm):
    event = SelectField("Ends with", choices=END_CHOICES, default="")
    code = StringField(
        "Code", validators=[Optional(), Length(max=MAX_CODE)], description="The code thrown."
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **_tool_data(config),
            "event": _text(config.get("event")),
            "code": _text(config.get("code")),
            "signal": _text(config.get("signal")),
            "message": _text(config.get("message")),
            "payload": _rows(config.get("payload")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_end(self, config)


class EscalationThrowPanel(PanelForm):
    code = StringField(
        "Escalation code",
        validators=[Optional(), Length(max=MAX_CODE)],
        description="The code reported to the nearest escalation catcher; the flow goes on.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"code": _text(config.get("code"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(_code(self.code, required=True))


class SubProcessPanel(MultiInstanceFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), **_multi_instance_data(config.get("multiInstance"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        _read_multi_instance(self, config)


class CallActivityPanel(MultiInstanceFields, PanelForm):
    called = SelectField("Process to call", validate_choice=False)
    binding = RadioField(
        "Version",
        choices=[
            SelectChoice("latest", "The latest published version when the call starts"),
            SelectChoice("version", "A fixed version"),
        ],
        default="latest",
    )
    version = IntegerField(
        "Version number",
        validators=[Optional(), NumberRange(min=1, message="Use a version number from 1 up.")],
    )
    mappings = FieldList(FormField(MappingRow), max_entries=100)
    save_to = _save_to_field("Save the result as", "the called process's data")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        inputs = config["inputs"] if isinstance(config.get("inputs"), dict) else {}
        version = config.get("version")
        return {
            "called": _text(config.get("process")),
            "binding": "version" if config.get("binding") == "version" else "latest",
            "version": version if isinstance(version, int) else None,
            "mappings": [
                {"name": k, "expression": v} for k, v in inputs.items() if isinstance(v, str)
            ],
            "save_to": _text(config.get("saveTo")),
            **_multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_call(self, config, context)
        _read_multi_instance(self, config)


class PlainPanel(PanelForm):
    pass


class FlowPanel(PanelForm):
    source_kind = HiddenField()
    condition = StringField(
        "Condition", validators=[Optional(), Length(max=2000)], description=EXPRESSION_HINT
    )
    default = BooleanField("Default flow: taken when no other condition is true")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        """A flow's values are its condition, whether it is the default and its source's kind."""
        return {
            "condition": config.get("condition") or "",
            "default": bool(config.get("default")),
            "source_kind": config.get("source_kind") or "",
        }

    def read(self, title: str, context: PanelContext) -> dict[str, Any]:
        """A flow's title, condition and whether it is the default (only out of a gateway
        that chooses by conditions; a default flow takes no condition)."""
        default = bool(self.default.data) and self.source_kind.data in CONDITION_GATEWAYS
        condition = None if default else _expression_error(self.condition)
        return {"title": title, "condition": condition, "default": default}


PANELS: dict[str, type[PanelForm]] = {
    "startEvent": StartEventPanel,
    "endEvent": EndEventPanel,
    "userTask": UserTaskPanel,
    "serviceTask": ServiceTaskPanel,
    "sendTask": SendTaskPanel,
    "receiveTask": ReceiveTaskPanel,
    "scriptTask": ScriptTaskPanel,
    "manualTask": ManualTaskPanel,
    "exclusiveGateway": PlainPanel,
    "parallelGateway": PlainPanel,
    "inclusiveGateway": PlainPanel,
    "eventBasedGateway": PlainPanel,
    "timerCatch": TimerPanel,
    "messageCatch": MessagePanel,
    "signalCatch": SignalCatchPanel,
    "signalThrow": SignalThrowPanel,
    "messageThrow": MessageThrowPanel,
    "linkThrow": LinkPanel,
    "linkCatch": LinkPanel,
    "milestone": PlainPanel,
    "subProcess": SubProcessPanel,
    "eventSubProcess": PlainPanel,
    "callActivity": CallActivityPanel,
    "boundaryEvent": BoundaryPanel,
    "escalationThrow": EscalationThrowPanel,
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
        assignee = stored["assignee"] if isinstance(stored.get("assignee"), dict) else {}
        kept = {assignee.get("type"): assignee.get("value")}
        form.assignee_user.choices = _with_current(
            [SelectChoice("", "— choose a user —"), *context.users], kept.get("user")
        )
        form.assignee_role.choices = _with_current(
            [SelectChoice("", "— choose a role —"), *context.roles], kept.get("role")
        )
    if isinstance(form, CallActivityPanel):
        form.called.choices = _with_current(
            [SelectChoice("", "— choose a process —"), *context.processes], stored.get("process")
        )
    if isinstance(form, ToolFields):
        tools = [SelectChoice(name, name) for name in context.tools]
        form.tool.choices = _with_current(
            [SelectChoice("", "— choose a tool —"), *tools], stored.get("tool")
        )
    if isinstance(form, StartEventPanel) and form.scope.data != "event":
        _process_start(form, stored, fresh=kwargs.get("formdata", True) is None)
    return form


def _process_start(form: StartEventPanel, stored: Mapping[str, Any], *, fresh: bool) -> None:
    """A process-level start: started by hand, or by a message, a timer (date or schedule) or
    a signal."""
    form.event.choices = PROCESS_START_CHOICES
    form.event.label.text = "Started by"
    form.timer_type.choices = [
        SelectChoice("cycle", "Repeatedly (a repeating interval or cron)"),
        SelectChoice("date", "Once, at a date"),
    ]
    form.date.label.text = "Date and time"
    form.date.description = "An ISO date and time, such as 2027-01-01T08:00:00Z."
    form.cycle.label.text = "Schedule"
    form.cycle.description = (
        "An ISO-8601 repeating interval (R/2027-01-01T08:00:00Z/P1D daily from that moment, "
        "R5/… five times, R/PT1H hourly) or a cron expression (0 8 * * MON-FRI: 8:00 on "
        "weekdays)."
    )
    if fresh and not stored.get("event"):
        form.event.data = ""
    if form.timer_type.data not in ("cycle", "date"):
        form.timer_type.data = "cycle"


def _with_current(choices: list[SelectChoice], current: Any) -> list[SelectChoice]:
    """Keep a stored value selectable even when it is no longer offered (so it is not lost)."""
    if current and current not in {c.value for c in choices}:
        choices.append(SelectChoice(str(current), f"{current} (not available here)"))
    return choices


def _number_text(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def initial_data(kind: str, element_id: str, title: str, values: Mapping[str, Any]) -> dict:
    """Form data for an element: `values` is a node's config, or a flow's condition/default."""
    return {
        "element_id": element_id,
        "kind": kind,
        "title": title,
        "original": json.dumps(dict(values), sort_keys=True),
        **PANELS[kind].load(values),
    }


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _rows(mapping: Any) -> list[dict[str, str]]:
    """Name → expression rows of a dict setting (a call's inputs, a signal's payload)."""
    if not isinstance(mapping, dict):
        return []
    return [{"name": k, "expression": v} for k, v in mapping.items() if isinstance(v, str)]


def _tool_data(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "tool": _text(config.get("tool")),
        "save_to": _text(config.get("saveTo")),
        "inputs": _rows(config.get("inputs")),
        **{
            k: _number_text(config.get(k, TOOL_DEFAULTS[k]))
            for k in ("retries", "backoff", "timeout")
        },
    }


def with_tool_inputs(data: dict[str, Any], context: PanelContext) -> dict[str, Any]:
    """One input row per input the chosen tool declares (for the kinds that call a tool)."""
    panel = PANELS.get(data.get("kind") or "")
    tool_panel = panel is not None and issubclass(panel, ToolFields)
    if tool_panel and isinstance(data.get("inputs"), list):
        data["inputs"] = input_rows(context.tools.get(data.get("tool") or ""), data["inputs"])
    return data


def _catch_data(config: Mapping[str, Any]) -> dict[str, Any]:
    timer_type = next((k for k in ("duration", "date", "cycle") if config.get(k)), "duration")
    texts = ("duration", "date", "cycle", "message", "code", "signal", "timezone")
    return {
        "event": _text(config.get("event")) or "timer",
        "interrupting": config.get("interrupting") is not False,
        "timer_type": timer_type,
        **{k: _text(config.get(k)) for k in texts},
        "correlation_key": _text(config.get("correlationKey")),
        "save_to": _text(config.get("saveTo")),
    }


def _multi_instance_data(multi: Any) -> dict[str, Any]:
    if not isinstance(multi, dict):
        return {"mi_mode": ""}
    return {
        "mi_mode": "sequential" if multi.get("sequential") is True else "parallel",
        "mi_collection": _text(multi.get("collection")),
        "mi_element": _text(multi.get("element")),
        "mi_cardinality": _text(multi.get("cardinality")),
        "mi_completion": _text(multi.get("completion")),
        "mi_output": _text(multi.get("output")),
    }


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
            field.errors.append(Missing("Enter an expression."))
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
    title = (form.title.data or "").strip()
    if not xml_safe(title):
        form.title.errors.append("The title contains control characters; remove them.")
    return form.read(title, context)


NAME_PROMPTS = {
    "signal": "Enter the signal's name, such as order-cancelled.",
    "message": "Enter the message's name, such as payment-received.",
    "link": "Enter the link's name; its throw and catch share it.",
}


def _name(field: Any, key: str, *, required: bool = True) -> dict[str, str]:
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


def _read_rows(rows: Any, what: str) -> dict[str, str]:
    """Name → expression rows (a call's inputs, a signal's payload); empty rows are dropped."""
    values: dict[str, str] = {}
    for entry in rows.entries:
        name = (entry.form.name.data or "").strip()
        text = _expression_error(entry.form.expression)
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


def _read_end(form: EndEventPanel, config: dict[str, Any]) -> None:
    """How an end event ends: plainly, throwing a code, terminating, a signal or a message."""
    event = form.event.data or ""
    if event not in {c.value for c in END_CHOICES}:
        form.event.errors.append("Choose one of the listed ends.")
        return
    for key in ("signal", "payload", "message", *TOOL_DEFAULTS, "tool", "saveTo"):
        config.pop(key, None)
    if event:
        config["event"] = event
    if event in ("error", "escalation"):
        config.update(_code(form.code, required=True))
    elif event == "signal":
        config.update(_name(form.signal, "signal"))
        config["payload"] = _read_rows(form.payload, "payload entry")
    elif event == "message":
        config.update(_name(form.message, "message", required=False))
        _read_tool(form, config)


def _read_process_start(form: StartEventPanel, config: dict[str, Any]) -> None:
    """A process-level start: by hand (with its form), or a message, timer or signal start."""
    event = form.event.data or ""
    if event not in {c.value for c in PROCESS_START_CHOICES}:
        form.event.errors.append("Choose one of the listed ways to start.")
        return
    if not event:
        return
    config.pop("form", None)
    config["event"] = event
    if event == "message":
        config.update(_name(form.message, "message"))
    elif event == "signal":
        config.update(_name(form.signal, "signal"))
    else:
        config.update(timer_start.read(form))


def _read_script(form: ScriptTaskPanel, config: dict[str, Any]) -> None:
    language = (form.language.data or "").strip() or "flowdesk"
    script = form.script.data or ""
    if len(script) > 20_000:
        return
    config["language"] = language
    if script.strip():
        config["script"] = script
    if language != "flowdesk":
        return
    for message in script_problems(script):
        form.script.errors.append(message)


def _code(field: Any, *, required: bool = False) -> dict[str, str]:
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


def _read_catch(form: CatchFields, config: dict[str, Any]) -> None:
    """A catching event's `event`, `interrupting` and the settings of that event type."""
    event = form.event.data or ""
    if event not in {c.value for c in CATCH_CHOICES}:
        form.event.errors.append("Choose a timer, a message, a signal, an error or an escalation.")
        return
    config.pop("signal", None)
    config["event"] = event
    interrupting = bool(form.interrupting.data)
    if event == "error" and not interrupting:
        form.interrupting.errors.append("An error always interrupts: tick Interrupting.")
    config["interrupting"] = interrupting
    _CATCH_READERS[event](form, config)


def _catch_timer(form: CatchFields, config: dict[str, Any]) -> None:
    """When a caught timer fires: at a date, on a cycle (non-interrupting only) or after a
    duration."""
    kind = form.timer_type.data
    if kind == "date":
        date = _expression_error(form.date, required=True)
        if date:
            config["date"] = date
    elif kind == "cycle":
        _catch_cycle(form, config)
    else:
        duration = _duration(form.duration)
        if duration:
            config["duration"] = duration
        elif not form.duration.errors:
            form.duration.errors.append(Missing("Enter a duration such as PT5M."))


def _catch_cycle(form: CatchFields, config: dict[str, Any]) -> None:
    cycle = (form.cycle.data or "").strip()
    if not cycle:
        form.cycle.errors.append(Missing("Enter a cycle such as R/P1D (every day)."))
        return
    if config["interrupting"]:
        form.cycle.errors.append(
            "A cycle repeats only on a non-interrupting timer: untick Interrupting."
        )
        return
    try:
        parse_cycle(cycle)
    except ValueError as exc:
        message = str(exc)
        form.cycle.errors.append(message[:1].upper() + message[1:] + ".")
    config["cycle"] = cycle


def _catch_message(form: CatchFields, config: dict[str, Any]) -> None:
    """The message waited for, and the key that picks this instance."""
    message = (form.message.data or "").strip()
    if not message:
        form.message.errors.append(Missing("Enter the name of the message to wait for."))
    elif not xml_safe(message):
        form.message.errors.append("The name contains control characters; remove them.")
    else:
        config["message"] = message
    key = _expression_error(form.correlation_key)
    if key:
        config["correlationKey"] = key


def _catch_signal(form: CatchFields, config: dict[str, Any]) -> None:
    config.update(_name(form.signal, "signal"))


def _catch_code(form: CatchFields, config: dict[str, Any]) -> None:
    """The error or escalation code caught (none: every code)."""
    config.update(_code(form.code))


#: What a catching event reads of the panel for each event type it may react to.
_CATCH_READERS: dict[str, Callable[[CatchFields, dict[str, Any]], None]] = {
    "timer": _catch_timer,
    "message": _catch_message,
    "signal": _catch_signal,
    "error": _catch_code,
    "escalation": _catch_code,
}


def _read_multi_instance(form: MultiInstanceFields, config: dict[str, Any]) -> None:
    mode = form.mi_mode.data or ""
    if mode not in ("parallel", "sequential"):
        return
    multi: dict[str, Any] = {"sequential": mode == "sequential"}
    collection = _expression_error(form.mi_collection)
    cardinality = _expression_error(form.mi_cardinality)
    if collection and cardinality:
        form.mi_cardinality.errors.append(
            "Give a collection or a cardinality, not both: clear one of them."
        )
    elif not (collection or cardinality or form.mi_collection.errors or form.mi_cardinality.errors):
        form.mi_collection.errors.append(
            Missing("Enter a collection (a list) or a cardinality (a number of instances).")
        )
    if collection:
        multi["collection"] = collection
    if cardinality:
        multi["cardinality"] = cardinality
    element = (form.mi_element.data or "").strip()
    if element and not is_identifier(element):
        form.mi_element.errors.append(
            "Use a plain name: letters, digits and _, not starting with a digit."
        )
    elif element and not collection:
        form.mi_element.errors.append("An element variable needs a collection to take it from.")
    elif element:
        multi["element"] = element
    for name, key in (("mi_completion", "completion"), ("mi_output", "output")):
        text = _expression_error(getattr(form, name))
        if text:
            multi[key] = text
    config["multiInstance"] = multi


def _read_call(form: CallActivityPanel, config: dict[str, Any], context: PanelContext) -> None:
    key = (form.called.data or "").strip()
    if not key:
        form.called.errors.append(Missing("Choose the process to call."))
    elif key not in {c.value for c in form.called.choices}:
        form.called.errors.append(f"There is no process '{key}' you can call.")
    else:
        config["process"] = key
    if form.binding.data == "version":
        version = form.version.data
        latest = context.versions.get(key, 0)
        if version is None and not form.version.errors:
            form.version.errors.append(Missing("Enter the version number to call."))
        elif version is not None and key and latest and version > latest:
            form.version.errors.append(
                f"'{key}' has {latest} published version{'s' if latest != 1 else ''}; "
                f"choose one of 1 to {latest}."
            )
        elif version is not None and key and not latest and not form.called.errors:
            form.version.errors.append(f"'{key}' has no published version yet.")
        config["binding"] = "version"
        if version is not None:
            config["version"] = version
    else:
        config["binding"] = "latest"
    config["inputs"] = _read_rows(form.mappings, "input")
    save_to = _save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to


def _read_user_task(form: UserTaskPanel, config: dict[str, Any]) -> None:
    kind = form.assignee_type.data
    value: str | None
    if kind == "anyone":
        value = ""
    elif kind == "expression":
        value = _expression_error(form.assignee_expression)
    else:
        chosen = form.assignee_user if kind == "user" else form.assignee_role
        value = (chosen.data or "").strip()
        if value and value not in {c.value for c in chosen.choices}:
            chosen.errors.append("Choose one of the listed names.")
    if value:
        config["assignee"] = {"type": kind, "value": value}
    stored = original_values(form)
    candidates: dict[str, Any] = {}
    for key, typed, chosen in (
        ("roles", form.candidate_roles, form.assignee_role),
        ("users", form.candidate_users, form.assignee_user),
    ):
        names = [n.strip() for n in (typed.data or "").split(",") if n.strip()]
        known = {c.value for c in chosen.choices} | set(_candidates(stored, key))
        unknown = [name for name in names if name not in known]
        if unknown:
            typed.errors.append(f"Not a known {key[:-1]}: {', '.join(unknown)}.")
        if names:
            candidates[key] = list(dict.fromkeys(names))
    for key, typed in (
        ("rolesFrom", form.candidate_roles_from),
        ("usersFrom", form.candidate_users_from),
    ):
        text = _expression_error(typed)
        if text:
            candidates[key] = text
    if candidates:
        config["candidates"] = candidates
    due = _duration(form.due_in)
    if due:
        config["dueIn"] = due
    save_to = _save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to


def _candidates(config: Mapping[str, Any], key: str) -> list[str]:
    """The candidate role or user names (`key` "roles" or "users") stored in a task's config."""
    candidates = config["candidates"] if isinstance(config.get("candidates"), dict) else {}
    names = candidates.get(key)
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _candidates_from(config: Mapping[str, Any], key: str) -> str:
    """A task's candidates expression (`key` "rolesFrom" or "usersFrom"), "" when none."""
    candidates = config["candidates"] if isinstance(config.get("candidates"), dict) else {}
    text = candidates.get(key)
    return text if isinstance(text, str) else ""


def _read_tool(form: ToolFields, config: dict[str, Any]) -> None:
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
    """Any inline error that keeps the form from applying (a missing value does not)."""
    return blocking(form)
