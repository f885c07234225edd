"""API tokens and service accounts: make, check, list and revoke bearer credentials.

A token is `fdp_` (a person's) or `fds_` (a service account's), a 12-character public key that
finds its row, and a 43-character random secret of which only the SHA-256 is stored: the secret
has 256 bits of entropy, so a fast hash is right and checking costs no password hash.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Select, or_, select, update
from sqlalchemy.orm import joinedload

from webapp.extensions import db
from webapp.infra.database import begin_write, transactional
from webapp.models import ApiToken, Partition, Role, User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.services.accounts import AccountError, check_username, find_user

#: What a token may be used for; every API endpoint needs one (webapp/api/scopes.py).
SCOPES: dict[str, str] = {
    "read": "Read instances, their history, signals and migrations",
    "start": "Start process instances",
    "messages": "Send messages and broadcast signals",
    "tasks": "Work tasks",
    "operate": "Cancel, retry, suspend, resume, modify and migrate instances",
    "admin": "Administer Flowdesk through the API (webhooks and other admin endpoints)",
}
PERSONAL_PREFIX = "fdp_"
SERVICE_PREFIX = "fds_"
KEY_LENGTH = 12
SECRET_LENGTH = 43  # secrets.token_urlsafe(32)
TOKEN_LENGTH = len(PERSONAL_PREFIX) + KEY_LENGTH + SECRET_LENGTH
NAME_LENGTH = 64
#: Last use is written at most this often per token, so reads do not write on every request.
LAST_USED_EVERY = timedelta(minutes=1)
#: The expiry choices of the forms, in days (0: never).
EXPIRY_DAYS = (30, 90, 365, 0)
STATUSES = ("active", "expired", "revoked")
_DUMMY_HASH = hashlib.sha256(b"no such token").hexdigest()


@dataclass(frozen=True)
class TokenCheck:
    """The outcome of checking a bearer token: its owner and row, or why it is refused."""

    user: User | None
    token: ApiToken | None = None
    error: str | None = None


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def _check_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > NAME_LENGTH:
        raise AccountError("name", f"Give the token a name of 1-{NAME_LENGTH} characters.")
    return name


def _check_scopes(scopes: list[str]) -> str:
    unknown = sorted(set(scopes) - set(SCOPES))
    if unknown:
        raise AccountError("scopes", f"Unknown scopes: {', '.join(unknown)}.")
    if not scopes:
        raise AccountError("scopes", "Pick at least one scope.")
    return " ".join(name for name in SCOPES if name in scopes)


def _check_expiry(days: int) -> datetime | None:
    if days not in EXPIRY_DAYS:
        raise AccountError("expires", "Pick one of the offered expiry times.")
    return utcnow() + timedelta(days=days) if days else None


@transactional
def create_token(
    owner: User, name: str, scopes: list[str], expires_in_days: int, *, created_by: User
) -> tuple[ApiToken, str]:
    """A new token of `owner`; returns the row and the whole token, which is shown only now."""
    if not owner.active:
        raise AccountError("name", f"{owner.username} is deactivated: it cannot get tokens.")
    row = ApiToken(
        name=_check_name(name),
        scopes=_check_scopes(scopes),
        expires_at=_check_expiry(expires_in_days),
        user_id=owner.id,
        created_by_id=created_by.id,
    )
    key = secrets.token_hex(KEY_LENGTH // 2)
    secret = secrets.token_urlsafe(32)
    row.key = key
    row.secret_hash = _hash(secret)
    db.session.add(row)
    prefix = SERVICE_PREFIX if owner.service_account else PERSONAL_PREFIX
    return row, f"{prefix}{key}{secret}"


@transactional
def revoke(token: ApiToken) -> ApiToken:
    """Stop `token` working from now on (kept, so lists and history still name it)."""
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    return token


def _split(raw: str) -> tuple[str, str] | None:
    if len(raw) != TOKEN_LENGTH or not raw.isascii():
        return None
    if not raw.startswith((PERSONAL_PREFIX, SERVICE_PREFIX)):
        return None
    start = len(PERSONAL_PREFIX)
    return raw[start : start + KEY_LENGTH], raw[start + KEY_LENGTH :]


def check(raw: str) -> TokenCheck:
    """Who `raw` (the text after `Bearer `) belongs to, or why it is refused; never counts a
    sign-in failure. Writes last use when it is more than a minute old."""
    parts = _split(raw.strip())
    row = None
    if parts is not None:
        row = (
            db.session.execute(
                select(ApiToken)
                .where(ApiToken.key == parts[0])
                .options(
                    joinedload(ApiToken.user).joinedload(User.roles).joinedload(Role.grants),
                    joinedload(ApiToken.user).joinedload(User.partitions),
                )
            )
            .unique()
            .scalar_one_or_none()
        )
    expected = row.secret_hash if row is not None else _DUMMY_HASH
    given = _hash(parts[1]) if parts is not None else _hash(raw)
    if not hmac.compare_digest(given, expected) or row is None:
        return TokenCheck(None, error="token not recognised")
    now = utcnow()
    status = row.status(now)
    if status != "active":
        return TokenCheck(None, row, f"token {status}")
    if not row.user.active:
        return TokenCheck(None, row, "token's account deactivated")
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_EVERY:
        _mark_used(row, now)
    return TokenCheck(row.user, row)


def _mark_used(row: ApiToken, now: datetime) -> None:
    """Record use in its own short transaction; a concurrent request may have done it already."""
    begin_write(db_session())
    db.session.execute(
        update(ApiToken)
        .where(
            ApiToken.id == row.id,
            or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at <= now - LAST_USED_EVERY),
        )
        .values(last_used_at=now)
        .execution_options(synchronize_session=False)
    )
    db.session.commit()


def tokens_of(user: User) -> list[ApiToken]:
    """A person's or service account's tokens, newest first."""
    return list(
        db.session.scalars(
            select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.id.desc())
        )
    )


def find_token(token_id: int) -> ApiToken | None:
    return db.session.get(ApiToken, token_id)


def token_query(*, owner: str = "", kind: str = "", status: str = "") -> Select:
    """Every token, newest first, filtered by owner's username (a part of it), kind
    (`personal` or `service`) and status (`active`, `expired`, `revoked`)."""
    now = utcnow()
    query = select(ApiToken).join(User, User.id == ApiToken.user_id).order_by(ApiToken.id.desc())
    if owner:
        query = query.where(User.username.ilike(f"%{owner.strip().lower()}%"))
    if kind == "personal":
        query = query.where(User.service_account.is_(False))
    elif kind == "service":
        query = query.where(User.service_account.is_(True))
    not_expired = or_(ApiToken.expires_at.is_(None), ApiToken.expires_at > now)
    if status == "revoked":
        query = query.where(ApiToken.revoked_at.is_not(None))
    elif status == "expired":
        query = query.where(ApiToken.revoked_at.is_(None), ApiToken.expires_at <= now)
    elif status == "active":
        query = query.where(ApiToken.revoked_at.is_(None), not_expired)
    return query


# --- service accounts -------------------------------------------------------------------------


def service_account_query() -> Select:
    return select(User).where(User.service_account.is_(True)).order_by(User.username)


@transactional
def create_service_account(
    username: str,
    *,
    display_name: str = "",
    roles: list[Role],
    partitions: list[Partition],
) -> User:
    """A service account: roles and partitions like a person, no password, no sign-in."""
    username = check_username(username)
    if find_user(username) is not None:
        raise AccountError("username", f"The username {username!r} is taken.")
    account = User(
        username=username,
        display_name=display_name.strip(),
        email="",
        password_hash="",
        service_account=True,
    )
    account.roles = list(roles)
    account.partitions = list(partitions)
    db.session.add(account)
    return account
