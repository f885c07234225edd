"""Field groups several panels share, each with the reader that loads and dumps it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

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

from webapp.designer.missing import Missing
from webapp.designer.panels.base import (
    PanelContext,
    PanelForm,
    as_rows,
    as_text,
    number_text,
    read_expression,
    read_save_to,
    save_to_field,
)
from webapp.process.document import is_identifier
from webapp.process.kinds import TOOL_DEFAULTS
from webapp.process.tools import ToolSpec
from webapp.process.validation import RESULTLESS_KINDS

SECONDS = "Use a number of seconds above 0 and at most 86400 (a day)."


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


class ConditionFields:
    """A conditional event's condition and the variables whose change alone re-evaluates it."""

    condition = StringField(
        "Condition",
        validators=[Optional(), Length(max=2000)],
        description="Fires when the data changes and this becomes true, such as "
        "$vars.amount != null and $vars.amount > 1000.",
    )
    watch = StringField(
        "Only when these variables change",
        validators=[Optional(), Length(max=500)],
        description="Names separated by commas; empty: any change of the data re-evaluates it.",
    )


def condition_data(config: Mapping[str, Any]) -> dict[str, Any]:
    return {"condition": as_text(config.get("condition")), "watch": as_text(config.get("watch"))}


def read_condition(form: ConditionFields, config: dict[str, Any]) -> None:
    """The submitted condition (required) and `watch` list (plain variable names)."""
    condition = read_expression(form.condition, required=True)
    if condition:
        config["condition"] = condition
    names = [name.strip() for name in (form.watch.data or "").split(",") if name.strip()]
    wrong = [name for name in names if not is_identifier(name)]
    if wrong:
        form.watch.errors.append(f"'{wrong[0]}' is not a variable name.")
    elif names:
        config["watch"] = ",".join(names)


class MultiInstanceFields:
    """The multi-instance section of user tasks, service tasks, sub-processes and calls."""

    mi_mode = RadioField(
        "Runs",
        choices=[
            SelectChoice("", "No: runs once"),
            SelectChoice("parallel", "Parallel: all instances at once"),
            SelectChoice("sequential", "Sequential: one instance after another"),
            SelectChoice("loop", "Loop: again while a condition holds"),
        ],
        default="",
    )
    loop_condition = StringField(
        "Loop condition",
        validators=[Optional(), Length(max=2000)],
        description="It runs again while this holds; $loop.index counts the runs done, such as "
        "$loop.index < 3 or not $vars.answer.done.",
    )
    loop_test_before = BooleanField(
        "Test before each run",
        description="Ticked: checked before every run, so it may not run at all; otherwise "
        "after each run, so it runs at least once.",
    )
    loop_maximum = IntegerField(
        "At most (runs)",
        validators=[Optional(), NumberRange(min=1, max=100_000)],
        description="Stops after this many runs even while the condition holds.",
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


def multi_instance_data(multi: Any, loop: Any = None) -> dict[str, Any]:
    """The multi-instance section's form data from a node's `multiInstance` setting (or its
    standard `loop`)."""
    if isinstance(loop, dict) and loop and not isinstance(multi, dict):
        maximum = loop.get("maximum")
        return {
            "mi_mode": "loop",
            "loop_condition": as_text(loop.get("condition")),
            "loop_test_before": loop.get("testBefore") is True,
            "loop_maximum": maximum if isinstance(maximum, int) else None,
        }
    if not isinstance(multi, dict):
        return {"mi_mode": ""}
    return {
        "mi_mode": "sequential" if multi.get("sequential") is True else "parallel",
        "mi_collection": as_text(multi.get("collection")),
        "mi_element": as_text(multi.get("element")),
        "mi_cardinality": as_text(multi.get("cardinality")),
        "mi_completion": as_text(multi.get("completion")),
        "mi_output": as_text(multi.get("output")),
    }


def read_multi_instance(form: MultiInstanceFields, config: dict[str, Any]) -> None:
    """The submitted multi-instance section as `multiInstance` (none when it runs once)."""
    mode = form.mi_mode.data or ""
    if mode == "loop":
        _read_loop(form, config)
        return
    if mode not in ("parallel", "sequential"):
        return
    multi: dict[str, Any] = {"sequential": mode == "sequential"}
    collection = read_expression(form.mi_collection)
    cardinality = read_expression(form.mi_cardinality)
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
        text = read_expression(getattr(form, name))
        if text:
            multi[key] = text
    config["multiInstance"] = multi


def _read_loop(form: MultiInstanceFields, config: dict[str, Any]) -> None:
    """The submitted standard loop as `loop`: a condition, a maximum or both."""
    loop: dict[str, Any] = {"testBefore": bool(form.loop_test_before.data)}
    condition = read_expression(form.loop_condition)
    if condition:
        loop["condition"] = condition
    if form.loop_maximum.data is not None and not form.loop_maximum.errors:
        loop["maximum"] = form.loop_maximum.data
    if not condition and "maximum" not in loop and not form.loop_condition.errors:
        form.loop_condition.errors.append(
            Missing("Enter a loop condition or a maximum number of runs.")
        )
    config["loop"] = loop


class RunsMultiInstance(MultiInstanceFields, PanelForm):
    """The multi-instance section after whatever the rest of the panel loads and writes (for
    panels with no field of their own placed after it)."""

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        multi = multi_instance_data(config.get("multiInstance"), config.get("loop"))
        return {**super().load(config), **multi}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        read_multi_instance(self, config)


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
    save_to = save_to_field("Save the result as", "the tool's result")
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


def tool_data(config: Mapping[str, Any]) -> dict[str, Any]:
    """The tool section's form data: tool, inputs, result name, retries, backoff and timeout."""
    return {
        "tool": as_text(config.get("tool")),
        "save_to": as_text(config.get("saveTo")),
        "inputs": as_rows(config.get("inputs")),
        **{
            k: number_text(config.get(k, TOOL_DEFAULTS[k]))
            for k in ("retries", "backoff", "timeout")
        },
    }


def read_tool(form: ToolFields, config: dict[str, Any]) -> None:
    """The submitted tool call: tool, inputs, result name and the retry settings."""
    tool_name = (form.tool.data or "").strip()
    if tool_name:
        if tool_name not in {c.value for c in form.tool.choices}:
            form.tool.errors.append(f"There is no tool called '{tool_name}'.")
        config["tool"] = tool_name
    inputs = {}
    for entry in form.inputs.entries:
        name = (entry.form.name.data or "").strip()
        text = read_expression(entry.form.expression)
        if text and not is_identifier(name):
            entry.form.expression.errors.append(
                "Name the input with letters, digits and _, not starting with a digit."
            )
        elif name and text:
            inputs[name] = text
    config["inputs"] = inputs
    save_to = read_save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to
    for name in ("retries", "backoff", "timeout"):
        value = getattr(form, name).data
        if value is not None:
            config[name] = number_text(value)


def input_rows(tool: ToolSpec | None, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mapping rows: one per input the tool declares, then any other input already mapped."""
    given = {row.get("name"): row.get("expression") or "" for row in rows if row.get("name")}
    declared = [item.name for item in tool.inputs] if tool else []
    names = declared + [name for name in given if name not in declared and given[name]]
    return [{"name": name, "expression": given.get(name, "")} for name in names]


class MessageNameField:
    message = StringField(
        "Message name",
        validators=[Optional(), Length(max=200)],
        description="Pick a name used in this process or type a new one.",
    )


class SignalFields:
    signal = StringField(
        "Signal name",
        validators=[Optional(), Length(max=200)],
        description="Pick a name used in this process or type a new one; a signal is "
        "broadcast by name to every instance of the partition waiting for it.",
    )


class PayloadFields:
    payload = FieldList(FormField(MappingRow), max_entries=100)


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
