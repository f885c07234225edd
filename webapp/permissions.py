"""Permissions, granted through roles and scoped by partition.

One helper, `can`, answers every question of the form "may this user do X to something in
partition P"; views and the API use only it (or the query filter here and the view checks in
`webapp.web.access`, built on it). No Flask here: the policy is the same for every caller.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, SQLColumnExpression, or_, true

PERMISSIONS: dict[str, str] = {
    "processes.edit": "Model processes: create, edit and import drafts",
    "processes.publish": "Publish process versions",
    "instances.start": "Start process instances",
    "instances.read": "See instances, their diagrams and history",
    "instances.manage": "Cancel and retry running instances",
    "instances.modify": "Suspend, resume, move tokens of and migrate running instances",
    "tasks.work": "Work tasks in the inbox",
    "admin": "Administer users, roles and partitions (implies every permission)",
}

# The roles every installation starts with (migration 0009 creates them); admins may add more.
BUILT_IN_ROLES: dict[str, tuple[list[str], str]] = {
    "admin": (["admin"], "Administers Flowdesk."),
    "designer": (
        ["processes.edit", "processes.publish", "instances.start", "instances.read"],
        "Models and publishes processes.",
    ),
    "operator": (
        ["instances.read", "instances.manage", "instances.modify", "instances.start"],
        "Watches running instances and fixes incidents.",
    ),
    "clerk": (["tasks.work", "instances.start"], "Works tasks and starts requests."),
    "approver": (["tasks.work"], "Approves or rejects requests."),
}


def can(
    user: Any, permission: str, partition_id: int | None = None, *, scoped: bool = True
) -> bool:
    """True when `user` holds `permission` for an object in `partition_id`.

    An object in no partition (None) is open to every holder of the permission; an object in a
    partition needs the user to belong to it. `admin` implies every permission everywhere.
    With scoped=False only the permission itself is checked (for lists that filter by partition).
    """
    if permission not in PERMISSIONS:
        raise ValueError(f"unknown permission {permission!r}")
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    held = user.permissions
    if "admin" in held:
        return True
    if permission not in held:
        return False
    if not scoped or partition_id is None:
        return True
    return partition_id in user.partition_ids


def visible_partition_ids(user: Any) -> set[int] | None:
    """The partitions whose objects `user` may see; None means all of them (admins)."""
    if "admin" in user.permissions:
        return None
    return set(user.partition_ids)


def partition_filter(column: SQLColumnExpression[Any], user: Any) -> ColumnElement[bool]:
    """A WHERE clause keeping rows in no partition or in one of the user's partitions."""
    ids = visible_partition_ids(user)
    if ids is None:
        return true()
    if not ids:
        return column.is_(None)
    return or_(column.is_(None), column.in_(sorted(ids)))
