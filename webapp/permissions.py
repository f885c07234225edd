"""Permissions, granted through roles and scoped by partition.

One helper, `can`, answers every question of the form "may this user do X to something in
partition P"; views and the API use only it (or the decorator and query filter built on it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import abort
from flask_login import current_user
from sqlalchemy import ColumnElement, or_, true

PERMISSIONS: dict[str, str] = {
    "processes.edit": "Model processes: create, edit and import drafts",
    "processes.publish": "Publish process versions",
    "instances.start": "Start process instances",
    "instances.read": "See instances, their diagrams and history",
    "instances.manage": "Cancel, retry and change running instances",
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
        ["instances.read", "instances.manage", "instances.start"],
        "Watches running instances and fixes incidents.",
    ),
    "clerk": (["tasks.work", "instances.start"], "Works tasks and starts requests."),
    "approver": (["tasks.work"], "Approves or rejects requests."),
}

F = TypeVar("F", bound=Callable[..., Any])


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


def partition_filter(column: ColumnElement[Any], user: Any) -> ColumnElement[bool]:
    """A WHERE clause keeping rows in no partition or in one of the user's partitions."""
    ids = visible_partition_ids(user)
    if ids is None:
        return true()
    if not ids:
        return column.is_(None)
    return or_(column.is_(None), column.in_(sorted(ids)))


def permission_required(permission: str) -> Callable[[F], F]:
    """View decorator: sign-in required, then 403 unless the user holds the permission."""

    def decorator(view: F) -> F:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            from webapp.extensions import login_manager

            if not current_user.is_authenticated:
                return login_manager.unauthorized()
            if not can(current_user, permission, scoped=False):
                abort(403)
            return view(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorator


def require(permission: str, partition_id: int | None) -> None:
    """Abort with 404 when the current user may not act on an object in that partition.

    404 rather than 403, so guessing ids does not reveal what exists in other partitions.
    """
    if not can(current_user, permission, partition_id):
        abort(404)
