"""The import report: what the last file import did, what the draft still needs from a person,
and the edits the report itself makes: mapping the file's groups to roles (or creating them),
its users to Flowdesk users (or leaving their tasks open to everyone) and its tools to
installed tools."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from webapp.extensions import db
from webapp.infra.database import transactional
from webapp.models import Process, Role, User
from webapp.permissions import can
from webapp.process.bpmn import report
from webapp.process.validation import Problem
from webapp.services import accounts
from webapp.services.processes import (
    ProcessError,
    SaveResult,
    check_draft,
    check_revision,
    existing_users,
    role_names,
    store_draft,
    tool_specs,
)

#: A group mapped to CREATE becomes a role with this permission, so its members work tasks.
CREATED_ROLE_PERMISSIONS = ["tasks.work"]
CREATE = "+create"
#: A user mapped to OPEN: their tasks have no assignee (open to everyone in the partition).
OPEN = "+open"
ROLE_NAME_MAX = 64


@dataclass
class Name:
    """A role or user name the draft's user tasks are given to that does not exist here."""

    name: str
    tasks: list[str]


@dataclass
class ImportReport:
    """The stored summary of the last import plus what the current draft needs from a person."""

    process: Process
    stored: dict[str, Any] | None
    needs: dict[str, list[Problem]]
    groups: list[Name]
    users: list[Name]
    roles: list[str] = field(default_factory=list)
    may_create_roles: bool = False
    tools: list[Name] = field(default_factory=list)
    installed: list[str] = field(default_factory=list)
    #: Each node and flow of the draft as a person reads it (report.element_names).
    names: dict[str, str] = field(default_factory=dict)
    #: Elements edited or deleted since the import: what the import said of them is settled.
    settled: set[str] = field(default_factory=set)

    @property
    def blocking(self) -> int:
        return sum(len(items) for items in self.needs.values())

    @property
    def tools_named(self) -> bool:
        """Whether a task names a tool that is not installed (one to register under that name)."""
        return any(item.name for item in self.tools)


#: How the report lists the tasks that name no tool, in the tools' table.
NO_TOOL = ""


def unknown(process: Process, kind: str) -> list[Name]:
    """The roles (`kind` "role"), users ("user") or tools ("tool") the draft names that do not
    exist; tasks that name no tool at all are listed under NO_TOOL."""
    if kind == "tool":
        return _unknown_tools(check_draft(process), process.draft_document or {})
    named = report.assignees(process.draft_document or {}, kind)
    if kind == "role":
        existing = role_names()
        return [Name(name, tasks) for name, tasks in named.items() if name not in existing]
    found = existing_users(named)
    return [Name(name, tasks) for name, tasks in named.items() if name.lower() not in found]


def _unknown_tools(problems: list[Problem], doc: dict[str, Any]) -> list[Name]:
    found: dict[str, list[str]] = {}
    for problem in problems:
        if problem.code in ("tool.unknown", "tool.missing") and problem.element_id:
            config = (doc.get("nodes", {}).get(problem.element_id) or {}).get("config") or {}
            name = config.get("tool") if isinstance(config.get("tool"), str) else NO_TOOL
            tasks = found.setdefault(name or NO_TOOL, [])
            if problem.element_id not in tasks:
                tasks.append(problem.element_id)
    return [Name(name, tasks) for name, tasks in sorted(found.items(), key=lambda i: not i[0])]


def build(process: Process, user: User) -> ImportReport:
    """The report as the page shows it, for `user` (who may or may not create roles)."""
    workers = db.session.scalars(select(Role).order_by(Role.name))
    problems = check_draft(process)
    doc = process.draft_document or {}
    stored = process.import_report or {}
    return ImportReport(
        process,
        process.import_report,
        report.needs_a_person(problems),
        unknown(process, "role"),
        unknown(process, "user"),
        [r.name for r in workers if r.permissions & {"tasks.work", "admin"}],
        can(user, "admin"),
        _unknown_tools(problems, doc),
        list(tool_specs()),
        report.element_names(doc),
        report.changed_since(stored.get("fingerprints") or {}, doc)
        if isinstance(stored.get("fingerprints"), dict)
        else set(),
    )


def _refused(code: str, message: str, status: int) -> ProcessError:
    error = ProcessError(code, message)
    error.status = status
    return error


@transactional
def map_names(
    process: Process, kind: str, choices: dict[str, str], *, base_revision: int, actor: User
) -> SaveResult:
    """Give the tasks of each listed role (`kind` "role") or user ("user") to the name chosen
    for it; a role may instead be created (CREATE, admins only) and a user's tasks left open to
    everyone (OPEN). One draft revision for all of them."""
    check_revision(process, base_revision)
    renamed: dict[str, str | None] = {}
    for name, choice in choices.items():
        if kind == "role" and choice == CREATE:
            _create_role(name, actor)
        elif kind == "user" and choice == OPEN:
            renamed[name] = None
        elif _exists(kind, choice):
            renamed[name] = choice
        else:
            what = {"role": "role", "user": "active user", "tool": "installed tool"}[kind]
            shown = f"'{name}'" if name else "the tasks that name no tool"
            raise _refused("invalid", f"There is no {what} '{choice}' for {shown}.", 422)
    doc = copy.deepcopy(process.draft_document or {})
    if kind == "tool":
        tasks = {item.name: item.tasks for item in unknown(process, "tool")}
        for name, to in renamed.items():
            report.retool(doc, tasks.get(name, []), str(to))
    else:
        doc = report.reassign(doc, kind, renamed)
    problems = store_draft(process, doc, actor)
    return SaveResult(process.draft_revision, problems)


def _exists(kind: str, name: str) -> bool:
    if kind == "tool":
        return name in tool_specs()
    if kind == "role":
        return db.session.scalar(select(Role.id).where(Role.name == name)) is not None
    user = db.session.scalar(select(User).where(User.username == name.strip().lower()))
    return user is not None and user.active


def _create_role(name: str, actor: User) -> None:
    if not can(actor, "admin"):
        raise _refused("forbidden", "Only administrators may create roles.", 403)
    if len(name) > ROLE_NAME_MAX:
        raise _refused("invalid", f"'{name[:40]}…' is too long for a role name; map it.", 422)
    accounts.ensure_role(name, CREATED_ROLE_PERMISSIONS, "Created by an import report")
