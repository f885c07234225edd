"""What a catching event (boundary event, event sub-process start) reacts to, and its readers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from wtforms import (
    BooleanField,
    SelectField,
    StringField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, Optional

from webapp.designer.missing import Missing
from webapp.designer.panels.base import (
    MAX_CODE,
    as_text,
    read_code,
    read_duration,
    read_expression,
    read_name,
)
from webapp.designer.panels.fields import (
    ConditionFields,
    MessageNameField,
    SignalFields,
    TimerFields,
    condition_data,
    read_condition,
)
from webapp.process.bpmn.writer import xml_safe
from webapp.process.durations import parse_cycle

CATCH_CHOICES = [
    SelectChoice("timer", "A timer"),
    SelectChoice("message", "A message"),
    SelectChoice("signal", "A signal"),
    SelectChoice("error", "An error"),
    SelectChoice("escalation", "An escalation"),
    SelectChoice("compensate", "Compensation (runs its handler when the activity is undone)"),
    SelectChoice("cancel", "A cancel (its transaction was cancelled)"),
    SelectChoice("conditional", "A condition on the data"),
]
#: Events that always interrupt and have no settings of their own.
_SETTINGLESS = ("compensate", "cancel")


class CatchFields(ConditionFields, SignalFields, MessageNameField, TimerFields):
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


def catch_data(config: Mapping[str, Any]) -> dict[str, Any]:
    """A catching event's form data: its event type, interrupting, and each type's settings."""
    timer_type = next((k for k in ("duration", "date", "cycle") if config.get(k)), "duration")
    texts = ("duration", "date", "cycle", "message", "code", "signal", "timezone")
    return {
        "event": as_text(config.get("event")) or "timer",
        "interrupting": config.get("interrupting") is not False,
        "timer_type": timer_type,
        **{k: as_text(config.get(k)) for k in texts},
        "correlation_key": as_text(config.get("correlationKey")),
        "save_to": as_text(config.get("saveTo")),
        **condition_data(config),
    }


def read_catch(form: CatchFields, config: dict[str, Any]) -> None:
    """A catching event's `event`, `interrupting` and the settings of that event type."""
    event = form.event.data or ""
    if event not in {c.value for c in CATCH_CHOICES}:
        form.event.errors.append(
            "Choose a timer, a message, a signal, an error, an escalation or a condition."
        )
        return
    config.pop("signal", None)
    config.pop("handler", None)
    config["event"] = event
    interrupting = bool(form.interrupting.data) or event in _SETTINGLESS
    if event == "error" and not interrupting:
        form.interrupting.errors.append("An error always interrupts: tick Interrupting.")
    config["interrupting"] = interrupting
    _CATCH_READERS[event](form, config)


def _catch_timer(form: CatchFields, config: dict[str, Any]) -> None:
    """When a caught timer fires: at a date, on a cycle (non-interrupting only) or after a
    duration."""
    kind = form.timer_type.data
    if kind == "date":
        date = read_expression(form.date, required=True)
        if date:
            config["date"] = date
    elif kind == "cycle":
        _catch_cycle(form, config)
    else:
        duration = read_duration(form.duration)
        if duration:
            config["duration"] = duration
        elif not form.duration.errors:
            form.duration.errors.append(Missing("Enter a duration such as PT5M."))


def _catch_cycle(form: CatchFields, config: dict[str, Any]) -> None:
    """A repeating timer's cycle (non-interrupting only), with an error when it does not parse."""
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
    key = read_expression(form.correlation_key)
    if key:
        config["correlationKey"] = key


def _catch_signal(form: CatchFields, config: dict[str, Any]) -> None:
    config.update(read_name(form.signal, "signal"))


def _catch_code(form: CatchFields, config: dict[str, Any]) -> None:
    """The error or escalation code caught (none: every code)."""
    config.update(read_code(form.code))


#: What a catching event reads of the panel for each event type it may react to.
_CATCH_READERS: dict[str, Callable[[CatchFields, dict[str, Any]], None]] = {
    "timer": _catch_timer,
    "message": _catch_message,
    "signal": _catch_signal,
    "error": _catch_code,
    "escalation": _catch_code,
    "compensate": lambda form, config: None,
    "cancel": lambda form, config: None,
    "conditional": read_condition,
}
