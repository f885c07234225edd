"""Panels of the structure: sub-processes, call activities, plain elements and sequence flows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wtforms import (
    BooleanField,
    FieldList,
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
    as_text,
    read_expression,
    read_rows,
    read_save_to,
    save_to_field,
)
from webapp.designer.panels.fields import (
    MappingRow,
    MultiInstanceFields,
    RunsMultiInstance,
    multi_instance_data,
    read_multi_instance,
)
from webapp.process.kinds import CONDITION_GATEWAYS


class SubProcessPanel(RunsMultiInstance):
    """Nothing of its own to set but how often it runs (its contents are drawn inside it)."""


class AdHocSubProcessPanel(PanelForm):
    """Which activities run when it starts, one at a time or not, and when it is done."""

    activate = StringField(
        "Activities to activate when it starts",
        validators=[Optional(), Length(max=2000)],
        description="An expression giving a list of ids of its activities without incoming "
        "flow, such as $vars.plan; empty: none (people and the API activate them).",
    )
    ordering = RadioField(
        "Ordering",
        choices=[
            SelectChoice("parallel", "Any number at once"),
            SelectChoice("sequential", "One at a time"),
        ],
        default="parallel",
    )
    completion = StringField(
        "Completion condition",
        validators=[Optional(), Length(max=2000)],
        description="Read after each activity inside completes, such as $vars.answer != null; "
        "empty: it completes once nothing inside is running.",
    )
    cancel_remaining = BooleanField("When the condition holds, cancel what still runs")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "activate": as_text(config.get("activate")),
            "ordering": "sequential" if config.get("ordering") == "sequential" else "parallel",
            "completion": as_text(config.get("completion")),
            "cancel_remaining": config.get("cancelRemaining") is not False,
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        for key in ("activate", "ordering", "completion", "cancelRemaining"):
            config.pop(key, None)
        activate = read_expression(self.activate)
        if activate:
            config["activate"] = activate
        if self.ordering.data == "sequential":
            config["ordering"] = "sequential"
        completion = read_expression(self.completion)
        if completion:
            config["completion"] = completion
        if not self.cancel_remaining.data:
            config["cancelRemaining"] = False


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
    save_to = save_to_field("Save the result as", "the called process's data")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        inputs = config["inputs"] if isinstance(config.get("inputs"), dict) else {}
        version = config.get("version")
        return {
            "called": as_text(config.get("process")),
            "binding": "version" if config.get("binding") == "version" else "latest",
            "version": version if isinstance(version, int) else None,
            "mappings": [
                {"name": k, "expression": v} for k, v in inputs.items() if isinstance(v, str)
            ],
            "save_to": as_text(config.get("saveTo")),
            **multi_instance_data(config.get("multiInstance"), config.get("loop")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_call(self, config, context)
        read_multi_instance(self, config)


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
    config["inputs"] = read_rows(form.mappings, "input")
    save_to = read_save_to(form.save_to)
    if save_to:
        config["saveTo"] = save_to


class PlainPanel(PanelForm):
    pass


class EventGatewayPanel(PanelForm):
    """Whether its events start the process, and then whether the first or all of them run."""

    instantiate = BooleanField("Starts the process when one of its messages arrives")
    gateway_type = RadioField(
        "When the process starts",
        choices=[
            SelectChoice("exclusive", "Only the event that came first runs"),
            SelectChoice("parallel", "The others wait for their messages in the new instance"),
        ],
        default="exclusive",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        parallel = config.get("gatewayType") == "parallel"
        return {
            "instantiate": config.get("instantiate") is True,
            "gateway_type": "parallel" if parallel else "exclusive",
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.pop("instantiate", None)
        config.pop("gatewayType", None)
        if self.instantiate.data:
            config["instantiate"] = True
            if self.gateway_type.data == "parallel":
                config["gatewayType"] = "parallel"


class ComplexGatewayPanel(PanelForm):
    """The activation condition over the tokens that have arrived ($gateway.arrived,
    $gateway.waiting); empty: it waits for every incoming flow."""

    activation = StringField(
        "Activation condition",
        validators=[Optional(), Length(max=2000)],
        description="Such as $gateway.arrived >= 2 (two branches arrived) or $gateway.waiting == 0"
        " (all of them); empty: all of them.",
    )

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {"activation": config.get("activation") or ""}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        config.pop("activation", None)
        activation = read_expression(self.activation)
        if activation:
            config["activation"] = activation


EXPRESSION_HINT = "An expression, such as $input.amount > 1000 or $vars.review.approved == true."


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

    @classmethod
    def canvas_values(cls, args: Mapping[str, str], config: dict[str, Any]) -> Mapping[str, Any]:
        """A flow's condition, default mark and source kind, which the canvas sends apart."""
        return {
            "condition": args.get("condition", ""),
            "default": args.get("default") in ("1", "true"),
            "source_kind": args.get("source_kind", ""),
        }

    def applied_values(self, values: Mapping[str, Any]) -> Mapping[str, Any]:
        """The applied condition and default mark, from the same source kind."""
        return dict(values, source_kind=self.source_kind.data)

    def read(self, title: str, context: PanelContext) -> dict[str, Any]:
        """A flow's title, condition and whether it is the default (only out of a gateway
        that chooses by conditions; a default flow takes no condition)."""
        default = bool(self.default.data) and self.source_kind.data in CONDITION_GATEWAYS
        condition = None if default else read_expression(self.condition)
        return {"title": title, "condition": condition, "default": default}
