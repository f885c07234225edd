"""Panels of the events: starts, ends, boundary events, and intermediate catches and throws."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wtforms import (
    HiddenField,
    RadioField,
    SelectField,
    StringField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional

from webapp.designer import timer_start
from webapp.designer.missing import Missing
from webapp.designer.panels.base import (
    MAX_CODE,
    PanelContext,
    PanelForm,
    WithForm,
    as_rows,
    as_text,
    original_values,
    read_code,
    read_duration,
    read_expression,
    read_name,
    read_rows,
    read_save_to,
    save_to_field,
)
from webapp.designer.panels.catch import CatchFields, catch_data, read_catch
from webapp.designer.panels.compensation import (
    CompensationFields,
    compensation_data,
    read_compensation,
)
from webapp.designer.panels.fields import (
    ConditionFields,
    MessageNameField,
    PayloadFields,
    SignalFields,
    ToolFields,
    condition_data,
    read_condition,
    read_tool,
    tool_data,
)
from webapp.process.durations import parse_cycle
from webapp.process.kinds import TOOL_DEFAULTS


class TimerPanel(PanelForm):
    timer_type = RadioField(
        "Wait",
        choices=[
            SelectChoice("duration", "For a duration"),
            SelectChoice("date", "Until a date"),
            SelectChoice("cycle", "Until a cycle's first occurrence"),
        ],
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
    cycle = StringField(
        "Cycle",
        validators=[Optional(), Length(max=200)],
        description="An ISO-8601 repeating interval such as R3/PT1H: the catch fires once, at its "
        "first occurrence.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        kind = next((k for k in ("duration", "date", "cycle") if config.get(k)), "duration")
        return {
            "timer_type": kind,
            "duration": config.get("duration") or "",
            "date": config.get("date") or "",
            "cycle": config.get("cycle") or "",
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        if self.timer_type.data == "cycle":
            self._read_cycle(config)
        elif self.timer_type.data == "date":
            date = read_expression(self.date, required=True)
            if date:
                config["date"] = date
        else:
            duration = read_duration(self.duration)
            if duration:
                config["duration"] = duration
            elif not self.duration.errors:
                self.duration.errors.append(Missing("Enter a duration such as PT5M."))

    def _read_cycle(self, config: dict[str, Any]) -> None:
        """The cycle whose first occurrence the catch waits for, with an error when it does not
        parse."""
        cycle = (self.cycle.data or "").strip()
        if not cycle:
            self.cycle.errors.append(Missing("Enter a cycle such as R3/PT1H."))
            return
        try:
            parse_cycle(cycle)
        except ValueError as exc:
            message = str(exc)
            self.cycle.errors.append(message[:1].upper() + message[1:] + ".")
        config["cycle"] = cycle


class MessagePanel(MessageNameField, PanelForm):
    correlation_key = StringField(
        "Correlation key (expression)",
        validators=[Optional(), Length(max=2000)],
        description="Matched against the key sent with the message, such as $input.orderId.",
    )
    save_to = save_to_field("Save the message as", "the message payload")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "message": config.get("message") or "",
            "correlation_key": config.get("correlationKey") or "",
            "save_to": config.get("saveTo") or "",
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(read_name(self.message, "message", required=False))
        key = read_expression(self.correlation_key)
        if key:
            config["correlationKey"] = key
        save_to = read_save_to(self.save_to)
        if save_to:
            config["saveTo"] = save_to


def signal_data(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a signal catch or throw shows: the signal, where a payload is saved, the payload."""
    return {
        "signal": as_text(config.get("signal")),
        "save_to": as_text(config.get("saveTo")),
        "payload": as_rows(config.get("payload")),
    }


class SignalCatchPanel(SignalFields, PanelForm):
    save_to = save_to_field("Save the signal's payload as", "the payload")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return signal_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(read_name(self.signal, "signal"))
        save_to = read_save_to(self.save_to)
        if save_to:
            config["saveTo"] = save_to


class SignalThrowPanel(SignalFields, PayloadFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return signal_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(read_name(self.signal, "signal"))
        config["payload"] = read_rows(self.payload, "payload entry")


class MessageThrowPanel(ToolFields, MessageNameField, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**tool_data(config), "message": as_text(config.get("message"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        read_tool(self, config)
        config.update(read_name(self.message, "message", required=False))


class ConditionalCatchPanel(ConditionFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return condition_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        read_condition(self, config)


class LinkPanel(PanelForm):
    link = StringField(
        "Link name",
        validators=[Optional(), Length(max=200)],
        description="A link throw jumps to the link catch of the same name in the same "
        "(sub-)process.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"link": as_text(config.get("link"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(read_name(self.link, "link"))


PROCESS_START_CHOICES = [
    SelectChoice("", "Someone starting it (by hand or through the API)"),
    SelectChoice("message", "A message (starts a new instance when no instance waits for it)"),
    SelectChoice("timer", "A timer: at a date, or on a schedule"),
    SelectChoice("signal", "A signal"),
    SelectChoice("conditional", "A condition (evaluated through POST /api/conditions)"),
]


class StartEventPanel(CatchFields, WithForm):
    scope = HiddenField()  # "event": the start event of an event sub-process
    timezone = StringField(
        "Time zone",
        validators=[Optional(), Length(max=64)],
        description="An IANA name such as Europe/Berlin; empty is UTC. Cron expressions and "
        "dates without an offset are read in it.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), **catch_data(config)}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        if self.scope.data == "event":
            config.pop("form", None)
            read_catch(self, config)
        else:
            _read_process_start(self, config)

    @classmethod
    def placement(cls, args: Mapping[str, str]) -> dict[str, Any]:
        """Whether it starts an event sub-process ("event") or the process."""
        return {"scope": "event" if args.get("scope") == "event" else ""}

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        return {"scope": self.scope.data}


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
        config.update(read_name(form.message, "message"))
    elif event == "signal":
        config.update(read_name(form.signal, "signal"))
    elif event == "conditional":
        read_condition(form, config)
    else:
        config.update(timer_start.read(form))


def process_start_choices(form: StartEventPanel, stored: Mapping[str, Any], *, fresh: bool) -> None:
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


class BoundaryPanel(CatchFields, PanelForm):
    host_name = HiddenField()  # the title of the activity it sits on, as the canvas has it
    save_to = save_to_field("Save what it caught as", "the message, signal or error")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return catch_data(config)

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        host = original_values(self).get("attachedTo")
        if isinstance(host, str):
            config["attachedTo"] = host
        handler = original_values(self).get("handler")
        read_catch(self, config)
        if config.get("event") == "compensate" and isinstance(handler, str) and handler:
            config["handler"] = handler
        save_to = read_save_to(self.save_to)
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
    SelectChoice("compensate", "Compensation: undoes completed activities, then the path ends"),
    SelectChoice("cancel", "Cancel: undoes and leaves its transaction by the cancel event"),
]


class EndEventPanel(
    ToolFields, SignalFields, PayloadFields, MessageNameField, CompensationFields, PanelForm
):
    event = SelectField("Ends with", choices=END_CHOICES, default="")
    code = StringField(
        "Code", validators=[Optional(), Length(max=MAX_CODE)], description="The code thrown."
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **tool_data(config),
            "event": as_text(config.get("event")),
            "code": as_text(config.get("code")),
            "signal": as_text(config.get("signal")),
            "message": as_text(config.get("message")),
            "payload": as_rows(config.get("payload")),
            **compensation_data(config),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_end(self, config)


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
        config.update(read_code(form.code, required=True))
    elif event == "signal":
        config.update(read_name(form.signal, "signal"))
        config["payload"] = read_rows(form.payload, "payload entry")
    elif event == "message":
        config.update(read_name(form.message, "message", required=False))
        read_tool(form, config)
    elif event == "compensate":
        read_compensation(form, config)


class EscalationThrowPanel(PanelForm):
    code = StringField(
        "Escalation code",
        validators=[Optional(), Length(max=MAX_CODE)],
        description="The code reported to the nearest escalation catcher; the flow goes on.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"code": as_text(config.get("code"))}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.update(read_code(self.code, required=True))
