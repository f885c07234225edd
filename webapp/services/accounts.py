"""Accounts: users, roles, partitions, and sign-in with throttling.

The changes an admin makes are each one transaction (`transactional`); `ensure_role` and
`ensure_partition` leave committing to their caller, so the demo seed is one transaction.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from flask import current_app
from sqlalchemy import delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import joinedload
from werkzeug.security import check_password_hash, generate_password_hash

from webapp.extensions import db
from webapp.infra.database import transactional
from webapp.models import LoginFailure, Partition, Role, User, UserSession
from webapp.models.base import utcnow
from webapp.permissions import PERMISSIONS

# A signed-in user's roles, their permissions and the user's partitions, read with the user in
# one statement: every request checks them, and selectin loading takes one statement for each.
WITH_ACCESS = (joinedload(User.roles).joinedload(Role.grants), joinedload(User.partitions))
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
    retry_after: int = 0  # seconds, when locked


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
    query = select(User).where(User.username == username.strip().lower()).options(*WITH_ACCESS)
    return db.session.execute(query).unique().scalar_one_or_none()


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


FIRST_WAIT = 15  # seconds to wait after the allowed failures; each further failure doubles it


def _throttle_key(kind: str, *parts: str) -> str:
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()
    return f"{kind}:{digest}"


def _failure_row(key: str) -> LoginFailure:
    """The failure row for `key`, created if missing and locked until the commit."""
    insert = pg_insert if db.session.get_bind().dialect.name == "postgresql" else sqlite_insert
    db.session.execute(
        insert(LoginFailure)
        .values(key=key, count=0, last_at=utcnow())
        .on_conflict_do_nothing(index_elements=["key"])
    )
    return db.session.scalars(
        select(LoginFailure)
        .where(LoginFailure.key == key)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).one()


def _locked_seconds(row: LoginFailure | None, now: datetime) -> int:
    if row is None or row.locked_until is None or row.locked_until <= now:
        return 0
    return math.ceil((row.locked_until - now).total_seconds())


def _count_failure(row: LoginFailure, allowed: int, now: datetime) -> None:
    """One more failure; from the `allowed`-th on, the key waits FIRST_WAIT, then twice as long
    each time, up to LOGIN_LOCKOUT_SECONDS. Failures are forgotten after that long in quiet."""
    longest = current_app.config["LOGIN_LOCKOUT_SECONDS"]
    quiet_since = max(row.last_at, row.locked_until or row.last_at)
    if row.count and now - quiet_since > timedelta(seconds=longest):
        row.count = 0
    row.count += 1
    row.last_at = now
    if row.count >= allowed:
        wait = min(longest, FIRST_WAIT * 2 ** min(row.count - allowed, 32))
        row.locked_until = now + timedelta(seconds=wait)


def _wait_message(seconds: int) -> str:
    if seconds < 60:
        amount = f"{seconds} second{'s' if seconds != 1 else ''}"
    else:
        minutes = math.ceil(seconds / 60)
        amount = f"{minutes} minute{'s' if minutes != 1 else ''}"
    return f"Too many failed sign-in attempts. Try again in {amount}."


@functools.cache
def _dummy_hash(method: str) -> str:
    return generate_password_hash(secrets.token_urlsafe(16), method=method)


def _hash_method() -> str:
    return str(current_app.config.get("PASSWORD_HASH_METHOD", "scrypt"))


def _verify(user: User | None, password: str) -> bool:
    """Check the password, doing the same hashing work whether or not the user can sign in."""
    dummy = _dummy_hash(_hash_method())
    if user is None or not user.active or not user.password_hash or user.service_account:
        check_password_hash(dummy, password)
        return False
    if not user.check_password(password):
        return False
    if user.password_hash.split("$", 1)[0] != dummy.split("$", 1)[0]:
        user.set_password(password)  # an older method or cost: bring it to the current one
    return True


def authenticate(username: str, password: str, address: str | None) -> SignIn:
    """Check credentials, throttled per (username, client address) and per address.

    Failures of one username from one address make only that pair wait, so an attacker
    elsewhere cannot lock a user out; many failures from one address (any usernames) make the
    whole address wait. Unknown users, inactive users and wrong passwords get the same answer
    after the same work.
    """
    config = current_app.config
    now = utcnow()
    name = username.strip().lower()
    address = address or ""
    pair_key = _throttle_key("pair", name, address)
    address_key = _throttle_key("addr", address)
    pair = db.session.scalars(
        select(LoginFailure).where(LoginFailure.key == pair_key).with_for_update()
    ).one_or_none()
    from_address = db.session.get(LoginFailure, address_key)
    wait = max(_locked_seconds(pair, now), _locked_seconds(from_address, now))
    if wait:
        db.session.commit()
        return SignIn(None, _wait_message(wait), locked=True, retry_after=wait)

    user = find_user(name) if USERNAME.match(name) else None
    if _verify(user, password):
        if pair is not None:
            db.session.delete(pair)
        db.session.commit()
        return SignIn(user)

    _count_failure(_failure_row(pair_key), config["LOGIN_MAX_FAILURES"], now)
    _count_failure(_failure_row(address_key), config["LOGIN_ADDRESS_MAX_FAILURES"], now)
    db.session.commit()
    return SignIn(None, "Invalid username or password.")


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _session_cutoff() -> datetime:
    return utcnow() - timedelta(days=current_app.config["SESSION_DAYS"])


def start_session(user: User) -> str:
    """A new sign-in for `user` (a fresh token, so every sign-in gets new cookie values);
    sets `user.session_token`, leaves committing to the caller."""
    token = secrets.token_urlsafe(32)
    db.session.execute(
        delete(UserSession).where(
            UserSession.user_id == user.id, UserSession.created_at < _session_cutoff()
        )
    )
    db.session.add(UserSession(user_id=user.id, token_hash=_token_hash(token)))
    user.session_token = token
    return token


@transactional
def sign_in(user: User) -> User:
    """Record a new sign-in of `user`; pass the user to Flask-Login's `login_user` next."""
    start_session(user)
    return user


@transactional
def end_session(user: User) -> None:
    """End the sign-in `user` was loaded for (sign-out): its cookies stop working."""
    if user.session_token:
        db.session.execute(
            delete(UserSession).where(UserSession.token_hash == _token_hash(user.session_token))
        )


def end_all_sessions(user: User) -> None:
    """End every sign-in of `user`, on every device; leaves committing to the caller."""
    db.session.execute(delete(UserSession).where(UserSession.user_id == user.id))


@transactional
def sign_out_everywhere(user: User) -> None:
    end_all_sessions(user)


def session_count(user: User) -> int:
    return (
        db.session.scalar(
            select(func.count())
            .select_from(UserSession)
            .where(UserSession.user_id == user.id, UserSession.created_at >= _session_cutoff())
        )
        or 0
    )


def session_user(user_id: str) -> User | None:
    """Flask-Login's user loader: `id:token` of a sign-in that has not ended, of an active user."""
    raw_id, _, token = user_id.partition(":")
    if not (raw_id.isascii() and raw_id.isdigit() and len(raw_id) <= 18 and token.isascii()):
        return None
    if not token or len(token) > 100:
        return None
    query = (
        select(User)
        .join(UserSession, UserSession.user_id == User.id)
        .where(
            User.id == int(raw_id),
            User.active.is_(True),
            UserSession.token_hash == _token_hash(token),
            UserSession.created_at >= _session_cutoff(),
        )
        .options(*WITH_ACCESS)
    )
    user = db.session.execute(query).unique().scalar_one_or_none()
    if user is not None:
        user.session_token = token
    return user


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
    if user.active and not active:
        end_all_sessions(user)
    user.active = active
    user.roles = list(roles)
    user.partitions = list(partitions)
    return user


@transactional
def change_email(user: User, email: str) -> None:
    """A user sets their own address, where notifications go (empty: none are sent)."""
    user.email = email.strip()


@transactional
def reset_password(user: User, password: str) -> None:
    """An admin sets a new password: every sign-in of the user ends."""
    check_password_strength(password)
    user.set_password(password)
    end_all_sessions(user)


@transactional
def change_password(user: User, current: str, new: str) -> str:
    """The user changes their own password: every sign-in ends, and this browser gets a new
    one (its token is returned and set on `user`)."""
    if not user.check_password(current):
        raise AccountError("current_password", "This is not your current password.")
    check_password_strength(new)
    user.set_password(new)
    end_all_sessions(user)
    return start_session(user)


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
