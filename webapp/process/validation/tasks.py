"""Checks of task settings: user task assignees, candidates and forms (also a start
event's form), the tool a service task calls with its inputs, and script tasks."""

from __future__ import annotations

from typing import Any

from webapp.process import scripts
from webapp.process.document import is_identifier
from webapp.process.forms import field_expressions, iter_fields, validate_form_spec
from webapp.process.kinds import ASSIGNEE_TYPES, EMPTY_SCRIPT, SCRIPT_LANGUAGES
from webapp.process.validation.base import Checks, Site, has_text

#: Where a person reads how to add a tool (named by `tool.unknown` and a Java implementation).
TOOL_DOCS = "docs/engine.md#writing-a-tool"


#: Expressions that give a user task's further candidates when it is created, with their names.
CANDIDATE_EXPRESSIONS = {
    "rolesFrom": "candidate roles expression",
    "usersFrom": "candidate users expression",
}


class TaskChecks(Checks):
    """Checks of user, service, send and script tasks and of forms."""

    def check_start_form(self, index: int, node_id: str, name: str, config: dict) -> None:
        """The form a start event asks for, if any."""
        self.check_form(index, node_id, name, config.get("form"))

    def check_user_task(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A user task's assignee, candidates, form and due time."""
        assignee = config.get("assignee")
        if assignee is None or (isinstance(assignee, dict) and not assignee.get("value")):
            pass  # no assignee: open to everyone who may work tasks in the partition
        elif assignee.get("type") not in ASSIGNEE_TYPES or not isinstance(assignee["value"], str):
            self.error(
                "config.invalid",
                node_id,
                f"{name}: 'assignee' must have a type (user, role or expression) and a value.",
            )
        elif assignee["type"] == "expression":
            self.sites.append(Site(node_id, f"The assignee of {name}", assignee["value"], index))
        elif assignee["type"] == "user" and self.users is not None:
            if assignee["value"].strip().lower() not in self.users:
                self.warning(
                    "task.user_unknown",
                    node_id,
                    f"{name} is assigned to '{assignee['value']}', who is not a Flowdesk user: "
                    "the task will wait for an operator to reassign it.",
                )
        elif assignee["type"] == "role" and not self.role_exists(assignee["value"]):
            self.error(
                "task.role_unknown",
                node_id,
                f"{name} is offered to '{assignee['value']}', which is not a Flowdesk role: "
                "map it to a role or create the role.",
            )
        self.check_candidates(index, node_id, name, config.get("candidates"))
        self.check_form(index, node_id, name, config.get("form"))
        self.check_duration(node_id, name, "dueIn", config.get("dueIn"))

    def check_candidates(self, index: int, node_id: str, name: str, candidates: Any) -> None:
        """Further roles and users a user task is offered to: lists of names that exist, and
        expressions (`rolesFrom`, `usersFrom`) that give more names when the task is created."""
        if candidates is None:
            return
        lists = [candidates.get(key) for key in ("roles", "users")]
        computed = [candidates.get(key) for key in CANDIDATE_EXPRESSIONS]
        shaped = (
            isinstance(candidates, dict)
            and set(candidates) <= {"roles", "users", *CANDIDATE_EXPRESSIONS}
            and all(
                value is None
                or (isinstance(value, list) and all(isinstance(v, str) for v in value))
                for value in lists
            )
            and all(value is None or isinstance(value, str) for value in computed)
        )
        if not shaped:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: 'candidates' must hold lists of names under 'roles' and 'users', and "
                "expressions under 'rolesFrom' and 'usersFrom'.",
            )
            return
        for key, what in CANDIDATE_EXPRESSIONS.items():
            text = candidates.get(key)
            if text and text.strip():
                self.sites.append(Site(node_id, f"The {what} of {name}", text, index))
        for role in candidates.get("roles") or []:
            if not self.role_exists(role):
                self.error(
                    "task.role_unknown",
                    node_id,
                    f"{name} is also offered to '{role}', which is not a Flowdesk role: "
                    "map it to a role or create the role.",
                )
        for user in candidates.get("users") or []:
            if self.users is not None and user.strip().lower() not in self.users:
                self.warning(
                    "task.user_unknown",
                    node_id,
                    f"{name} is also offered to '{user}', who is not a Flowdesk user.",
                )

    def check_form(self, index: int, node_id: str, name: str, form: Any) -> None:
        """A form spec, and the expressions its fields hold."""
        if form is None:
            return
        for problem in validate_form_spec(form):
            self.error(problem.code, node_id, f"Form of {name}: {problem.message}")
        keys = frozenset(f["key"] for f in iter_fields(form) if is_identifier(f.get("key")))
        for field in iter_fields(form):
            for attribute, text in field_expressions(field):
                self.sites.append(
                    Site(
                        node_id,
                        f"Form field '{field.get('key')}' {attribute} of {name}",
                        text,
                        index,
                        form_keys=keys,
                        syntax_reported=True,
                    )
                )

    def check_service_task(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A tool call's inputs, retry settings, and the tool it calls with the inputs it needs."""
        tool_name = config.get("tool")
        inputs = config.get("inputs") or {}
        for input_name, text in inputs.items():
            if not isinstance(text, str):
                self.error("config.invalid", node_id, f"{name}: input '{input_name}' must be text.")
            elif text.strip():
                what = f"Input '{input_name}' of {name}"
                self.sites.append(Site(node_id, what, text, index))
        for key, low, wanted in (
            ("retries", 0, "a whole number of at least 0"),
            ("backoff", None, "a number of seconds above 0"),
            ("timeout", None, "a number of seconds above 0"),
        ):
            value = config.get(key)
            if value is not None and (value < low if low is not None else value <= 0):
                self.error("config.invalid", node_id, f"{name}: '{key}' must be {wanted}.")
        if not tool_name:
            java = config.get("implementation")
            code = [v for k, v in java.items() if k != "vendor"] if isinstance(java, dict) else []
            hint = (
                f" Its Java implementation '{code[0]}' cannot run in Flowdesk: choose a tool "
                f"(see {TOOL_DOCS})."
                if code and isinstance(code[0], str)
                else ""
            )
            self.error("tool.missing", node_id, f"{name} does not say which tool to call.{hint}")
            return
        if self.tools is None:
            return
        tool = self.tools.get(tool_name)
        if tool is None:
            self.error(
                "tool.unknown",
                node_id,
                f"{name} calls unknown tool '{tool_name}': install it on the web and worker "
                f"processes ({TOOL_DOCS}) or choose another.",
            )
            return
        given = {k for k, v in inputs.items() if isinstance(v, str) and v.strip()}
        for required in tool.required_inputs:
            if required not in given:
                self.error(
                    "tool.input_missing",
                    node_id,
                    f"{name} does not provide input '{required}' that tool '{tool_name}' needs.",
                )
        for input_name in inputs:
            if not tool.any_inputs and tool.input_named(input_name) is None:
                self.warning(
                    "tool.input_unknown",
                    node_id,
                    f"{name} provides input '{input_name}' that tool '{tool_name}' does not take.",
                )

    def check_script(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A script task's script: in Flowdesk's language, each line an assignment that parses."""
        text = config.get("script")
        language = config.get("language", "flowdesk")
        if config.get(EMPTY_SCRIPT) and not text:
            return  # imported empty (jBPM, SpiffWorkflow run it as a no-op): does nothing
        if not has_text(text):
            self.error("config.missing", node_id, f"{name} has no script.")
            return
        if language not in SCRIPT_LANGUAGES:
            written = (
                "is in an unspecified language (the file gave no scriptFormat)"
                if language == "unspecified"
                else f"is written in '{language}', which Flowdesk does not run"
            )
            self.error(
                "script.language",
                node_id,
                f"{name} {written}; rewrite it in Flowdesk's language, one "
                "'name = expression' per line.",
            )
            return
        try:
            script = scripts.parse(text)
        except scripts.ScriptError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            self.error("script.syntax", node_id, f"The script of {name}: {where}{exc.message}.")
            return
        lines = text.split("\n")
        assigned: set[str] = set()
        for item in script.assignments:
            source = lines[item.line - 1].partition("=")[2].strip()
            what = f"Line {item.line} of the script of {name}"
            self.sites.append(Site(node_id, what, source, index, assigned=frozenset(assigned)))
            assigned.add(item.name)
        for variable in script.names:
            self.script_writers[variable] = self.script_writers.get(variable, 0) | 1 << index
