"""Accounts: users, roles, partitions, and sign-in with throttling.

The changes an admin makes are each one transaction (`transactional`); `ensure_role` and
`ensure_partition` leave committing to their caller, so the demo seed is one transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta

from flask import current_app
from sqlalchemy import func, select

from webapp.database import transactional
from webapp.extensions import db
from webapp.models import LoginFailure, Partition, Role, User
from webapp.models.base import utcnow
from webapp.permissions import PERMISSIONS

USERNAME = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
MIN_PASSWORD = 8


class AccountError(ValueError):
    """Invalid account data; `field` names the form field it belongs to."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class SignIn:
    user: User | None
    error: str | None = None
    locked: bool = False


def check_username(username: str) -> str:
    username = username.strip().lower()
    if not USERNAME.match(username):
        raise AccountError(
            "username",
            "Use 2-64 lower-case letters, digits, dots, dashes or underscores, "
            "starting with a letter or digit.",
        )
    return username


def check_password_strength(password: str) -> None:
    if len(password) < MIN_PASSWORD:
        raise AccountError("password", f"Use at least {MIN_PASSWORD} characters.")


def find_user(username: str) -> User | None:
    return db.session.scalar(select(User).where(User.username == username.strip().lower()))


@transactional
def create_user(
    username: str,
    password: str,
    *,
    display_name: str = "",
    email: str = "",
    roles: list[Role] | None = None,
    partitions: list[Partition] | None = None,
    check_strength: bool = True,
) -> User:
    """Add a user; raises AccountError (nothing saved) on bad data."""
    username = check_username(username)
    if check_strength:
        check_password_strength(password)
    if find_user(username) is not None:
        raise AccountError("username", f"The username {username!r} is taken.")
    user = User(username=username, display_name=display_name.strip(), email=email.strip())
    user.set_password(password)
    user.roles = list(roles or [])
    user.partitions = list(partitions or [])
    db.session.add(user)
    return user


def _failure_keys(username: str, address: str | None) -> list[str]:
    keys = [f"user:{username.strip().lower()[:150]}"]
    if address:
        keys.append(f"addr:{address[:150]}")
    return keys


def authenticate(username: str, password: str, address: str | None) -> SignIn:
    """Check credentials with throttling; the same message for unknown users and bad passwords."""
    config = current_app.config
    now = utcnow()
    keys = _failure_keys(username, address)
    failures = {
        f.key: f
        for f in db.session.scalars(
            select(LoginFailure).where(LoginFailure.key.in_(keys)).with_for_update()
        )
    }
    for failure in failures.values():
        if failure.locked_until and failure.locked_until > now:
            minutes = max(1, int((failure.locked_until - now).total_seconds() // 60) + 1)
            db.session.commit()
            return SignIn(
                None,
                "Too many failed sign-in attempts. "
                f"Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                locked=True,
            )

    user = find_user(username)
    if user is not None and user.active and user.check_password(password):
        for failure in failures.values():
            if failure.key.startswith("user:"):
                db.session.delete(failure)
        db.session.commit()
        return SignIn(user)

    window = timedelta(seconds=config["LOGIN_LOCKOUT_SECONDS"])
    limit = config["LOGIN_MAX_FAILURES"]
    for key in keys:
        failure = failures.get(key)
        if failure is None or failure.first_at < now - window:
            if failure is not None:
                db.session.delete(failure)
                db.session.flush()
            failure = LoginFailure(key=key, count=0, first_at=now)
            db.session.add(failure)
        failure.count += 1
        # Addresses are shared (offices, NAT): they get a larger allowance than one username.
        allowed = limit if key.startswith("user:") else limit * 4
        if failure.count >= allowed:
            failure.locked_until = now + window
    db.session.commit()
    return SignIn(None, "Invalid username or password.")


def ensure_role(name: str, permissions: list[str], description: str = "") -> Role:
    unknown = set(permissions) - set(PERMISSIONS)
    if unknown:
        raise AccountError("permissions", f"Unknown permissions: {', '.join(sorted(unknown))}")
    role = db.session.scalar(select(Role).where(Role.name == name))
    if role is None:
        role = Role(name=name, description=description)
        db.session.add(role)
    role.description = description or role.description
    role.set_permissions(permissions)
    return role


def ensure_partition(key: str, name: str) -> Partition:
    partition = db.session.scalar(select(Partition).where(Partition.key == key))
    if partition is None:
        partition = Partition(key=key, name=name)
        db.session.add(partition)
    partition.name = name
    return partition


@transactional
def update_user(
    user: User,
    *,
    display_name: str,
    email: str,
    active: bool,
    roles: list[Role],
    partitions: list[Partition],
) -> User:
    user.display_name = display_name.strip()
    user.email = email.strip()
    user.active = active
    user.roles = list(roles)
    user.partitions = list(partitions)
    return user


@transactional
def reset_password(user: User, password: str) -> None:
    check_password_strength(password)
    user.set_password(password)


@transactional
def create_role(name: str, permissions: list[str], description: str = "") -> Role:
    name = name.strip()
    if db.session.scalar(select(Role.id).where(Role.name == name)) is not None:
        raise AccountError("name", "A role with this name exists.")
    return ensure_role(name, permissions, description)


@transactional
def update_role(role: Role, *, permissions: list[str], description: str) -> Role:
    unknown = set(permissions) - set(PERMISSIONS)
    if unknown:
        raise AccountError("permissions", f"Unknown permissions: {', '.join(sorted(unknown))}")
    role.description = description
    role.set_permissions(permissions)
    return role


@transactional
def create_partition(key: str, name: str) -> Partition:
    if db.session.scalar(select(Partition.id).where(Partition.key == key)) is not None:
        raise AccountError("key", "A partition with this key exists.")
    return ensure_partition(key, name.strip())


def user_count() -> int:
    return db.session.scalar(select(func.count()).select_from(User)) or 0
