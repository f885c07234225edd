"""The import report: what the last file import did, what the draft still needs from a person,
and the one edit the report itself makes: mapping imported groups to roles (or creating them)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from webapp.database import transactional
from webapp.extensions import db
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
    store_draft,
)

#: A group mapped to "create" becomes a role with this permission, so its members work tasks.
CREATED_ROLE_PERMISSIONS = ["tasks.work"]
CREATE = "+create"
ROLE_NAME_MAX = 64


@dataclass
class Group:
    """A role name user tasks are offered to that no role has, with the tasks offered to it."""

    name: str
    tasks: list[str]


@dataclass
class ImportReport:
    """The stored summary of the last import plus what the current draft needs from a person."""

    process: Process
    stored: dict[str, Any] | None
    needs: dict[str, list[Problem]]
    groups: list[Group]
    roles: list[str] = field(default_factory=list)
    may_create_roles: bool = False

    @property
    def blocking(self) -> int:
        return sum(len(items) for items in self.needs.values())


def build(process: Process, user: User) -> ImportReport:
    """The report as the page shows it, for `user` (who may or may not create roles)."""
    problems = check_draft(process)
    names = set(db.session.scalars(select(Role.name)))
    doc = process.draft_document or {}
    groups = [
        Group(name, tasks) for name, tasks in report.role_groups(doc).items() if name not in names
    ]
    workers = db.session.scalars(select(Role).order_by(Role.name))
    roles = [r.name for r in workers if r.permissions & {"tasks.work", "admin"}]
    return ImportReport(
        process,
        process.import_report,
        report.needs_a_person(problems),
        groups,
        roles,
        can(user, "admin"),
    )


def _refused(code: str, message: str, status: int) -> ProcessError:
    error = ProcessError(code, message)
    error.status = status
    return error


@transactional
def map_groups(
    process: Process, choices: dict[str, str], *, base_revision: int, actor: User
) -> SaveResult:
    """Offer the tasks of each group to the role chosen for it, or to a new role of the group's
    name (`CREATE`, admins only); one draft revision for all of them."""
    check_revision(process, base_revision)
    existing = set(db.session.scalars(select(Role.name)))
    renamed: dict[str, str] = {}
    for group, choice in choices.items():
        if choice == CREATE:
            if not can(actor, "admin"):
                raise _refused("forbidden", "Only administrators may create roles.", 403)
            if len(group) > ROLE_NAME_MAX:
                raise _refused(
                    "invalid", f"'{group[:40]}…' is too long for a role name; map it instead.", 422
                )
            accounts.ensure_role(group, CREATED_ROLE_PERMISSIONS, "Created by an import report")
        elif choice in existing:
            renamed[group] = choice
        else:
            raise _refused("invalid", f"There is no role '{choice}' for group '{group}'.", 422)
    doc = report.rename_roles(copy.deepcopy(process.draft_document or {}), renamed)
    problems = store_draft(process, doc, actor)
    return SaveResult(process.draft_revision, problems)
