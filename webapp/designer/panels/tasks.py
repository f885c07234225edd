"""Panels of the tasks: user, service, send, receive, script, manual and business rule."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wtforms import (
    BooleanField,
    HiddenField,
    IntegerField,
    RadioField,
    SelectField,
    StringField,
    TextAreaField,
)
from wtforms.fields.choices import SelectChoice
from wtforms.validators import Length, NumberRange, Optional

from webapp.designer.missing import Missing
from webapp.designer.panels.base import (
    PanelContext,
    PanelForm,
    WithForm,
    as_text,
    original_values,
    read_duration,
    read_expression,
    read_name,
    read_save_to,
    save_to_field,
)
from webapp.designer.panels.events import MessagePanel
from webapp.designer.panels.fields import (
    MessageNameField,
    MultiInstanceFields,
    RunsMultiInstance,
    ToolFields,
    multi_instance_data,
    read_multi_instance,
    read_tool,
    tool_data,
)
from webapp.designer.script_check import script_problems


class UserTaskPanel(MultiInstanceFields, WithForm):
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
    save_to = save_to_field("Save the result as", "the submitted form")

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
            **multi_instance_data(config.get("multiInstance"), config.get("loop")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        _read_user_task(self, config)
        read_multi_instance(self, config)

    def kept_state(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """The assignee choice stays as picked (an empty one reads as "anyone")."""
        return {"assignee_type": self.assignee_type.data or data["assignee_type"]}


def _read_user_task(form: UserTaskPanel, config: dict[str, Any]) -> None:
    kind = form.assignee_type.data
    value: str | None
    if kind == "anyone":
        value = ""
    elif kind == "expression":
        value = read_expression(form.assignee_expression)
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
        text = read_expression(typed)
        if text:
            candidates[key] = text
    if candidates:
        config["candidates"] = candidates
    due = read_duration(form.due_in)
    if due:
        config["dueIn"] = due
    save_to = read_save_to(form.save_to)
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


class ServiceTaskPanel(MultiInstanceFields, ToolFields, PanelForm):
    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {
            **tool_data(config),
            "message": as_text(config.get("message")),
            **multi_instance_data(config.get("multiInstance"), config.get("loop")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        read_tool(self, config)
        read_multi_instance(self, config)


class SendTaskPanel(MessageNameField, ServiceTaskPanel):
    """A service task that also names the message it sends (loaded as a service task is)."""

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        read_tool(self, config)
        config.update(read_name(self.message, "message", required=False))
        read_multi_instance(self, config)


class ReceiveTaskPanel(RunsMultiInstance, MessagePanel):
    """A message catch that may run as a multi-instance, or start the process."""

    instantiate = BooleanField("Starts the process when its message arrives (no flow leads to it)")

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().load(config), "instantiate": config.get("instantiate") is True}

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        super().dump(config, context)
        config.pop("instantiate", None)
        if self.instantiate.data:
            config["instantiate"] = True


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
            "script": as_text(config.get("script")),
            "language": as_text(config.get("language")) or "flowdesk",
            **multi_instance_data(config.get("multiInstance"), config.get("loop")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        _read_script(self, config)
        read_multi_instance(self, config)


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


class ManualTaskPanel(RunsMultiInstance):
    """Nothing of its own to set but how often it runs."""


class BusinessRuleTaskPanel(MultiInstanceFields, PanelForm):
    """The decision a business rule task evaluates (a published id, or one still to import)."""

    decision = StringField(
        "Decision",
        validators=[Optional(), Length(max=200)],
        description="The id of a published decision; pick one or type the id of one still to "
        "import.",
    )
    binding = RadioField(
        "Version",
        choices=[
            SelectChoice("latest", "The latest published version when the task runs"),
            SelectChoice("version", "A fixed version"),
        ],
        default="latest",
    )
    version = IntegerField(
        "Version number",
        validators=[Optional(), NumberRange(min=1, message="Use a version number from 1 up.")],
    )
    save_to = save_to_field("Save the result as", "the decision's result")
    required = BooleanField("A rule must match (no match stops the instance with an incident)")
    #: The decision ids published for the process's partition, offered while typing.
    known_decisions: list[str] = []

    @classmethod
    def load(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        version = config.get("version")
        return {
            "decision": as_text(config.get("decision")),
            "binding": "version" if config.get("binding") == "version" else "latest",
            "version": version if isinstance(version, int) else None,
            "save_to": as_text(config.get("saveTo")),
            "required": config.get("required") is True,
            **multi_instance_data(config.get("multiInstance")),
        }

    def dump(self, config: dict[str, Any], context: PanelContext) -> None:
        decision = (self.decision.data or "").strip()
        if decision:
            config["decision"] = decision
        else:
            config.pop("decision", None)
            self.decision.errors.append(Missing("Enter the decision to evaluate."))
        config["binding"] = "version" if self.binding.data == "version" else "latest"
        config.pop("version", None)
        if self.binding.data == "version":
            if self.version.data is None and not self.version.errors:
                self.version.errors.append(Missing("Enter the version number to evaluate."))
            elif self.version.data is not None:
                config["version"] = self.version.data
        config.pop("saveTo", None)
        save_to = read_save_to(self.save_to)
        if save_to:
            config["saveTo"] = save_to
        config.pop("required", None)
        if self.required.data:
            config["required"] = True
        read_multi_instance(self, config)
