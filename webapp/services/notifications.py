"""Notifications to people: e-mail when a task is assigned or offered to someone, when it is due
soon or overdue, and to the requester when their request completes or fails.

`observe_history` learns the events from the history (in the step's or action's transaction)
and inserts one row per (user, event), unique by key. The worker's periodic `tick` adds due-soon
and overdue rows, sends the pending ones through services/mail.py (the row's key is the mail's,
so a retry never mails twice) and the daily digests.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Boolean, Integer, bindparam, delete, or_, select, text, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webapp.engine.tools import ToolError
from webapp.models import Instance, Task, User
from webapp.models.base import UTCDateTime
from webapp.models.notifications import (
    Notification,
    NotificationDefault,
    NotificationDigest,
    NotificationPreference,
    NotificationStatus,
)
from webapp.models.statuses import HistoryKind, InstanceStatus, TaskStatus
from webapp.services import mail

log = logging.getLogger(__name__)

#: The kinds a user can choose for, in the order the forms show them.
KINDS: dict[str, str] = {
    "assigned": "A task is assigned to you",
    "offered": "A task is offered to your role",
    "due_soon": "A task of yours is due soon",
    "overdue": "A task of yours is overdue",
    "request_completed": "Your request completed",
    "request_failed": "Your request failed",
}
MODES: dict[str, str] = {
    "immediately": "Immediately",
    "digest": "Daily digest",
    "none": "None",
}
#: What applies when neither the user nor the admin chose.
BUILT_IN_MODE = "immediately"

TASK_KINDS = ("assigned", "offered", "due_soon", "overdue")
BATCH = 100
#: How long a claimed row is a worker's before another may take it over (a crash mid-send).
LEASE = timedelta(minutes=2)
#: How long a mail that failed for a passing reason waits before the next try.
RETRY_AFTER = timedelta(minutes=1)
MAX_ATTEMPTS = 20


class PreferenceError(ValueError):
    """A preference form named a kind or a mode that does not exist."""


# --- learning events (inside the step's transaction) -------------------------------------------

_ACTIVE = "u.email <> '' AND u.active = :active"
_INSERT = (
    "INSERT INTO notifications (user_id, kind, task_id, instance_id, key, status, attempts, "
    "created_at) "
)
_PENDING = f"'{NotificationStatus.PENDING.value}'"


def _people_sql(assigned: str, offered: str, where: str) -> str:
    """One row per person a task concerns, in one statement: its assignee (kind `assigned`), or
    while nobody holds it the members of its roles and its candidate users (kind `offered`)."""
    held = f"t.status = '{TaskStatus.OPEN.value}' AND t.assignee_id IS NOT NULL AND {where}"
    unclaimed = f"t.status = '{TaskStatus.OPEN.value}' AND t.assignee_id IS NULL AND {where}"
    candidates = "JOIN task_candidates tc ON tc.task_id = t.id"
    key = "x.kind || ':' || CAST(x.task_id AS VARCHAR(20)) || ':' || CAST(x.user_id AS VARCHAR(20))"
    return (
        f"{_INSERT}SELECT x.user_id, x.kind, x.task_id, x.instance_id, {key}, "
        f"{_PENDING}, 0, :now FROM ("
        f"SELECT t.assignee_id AS user_id, '{assigned}' AS kind, t.id AS task_id, "
        f"t.instance_id AS instance_id FROM tasks t WHERE {held}"
        f" UNION SELECT ur.user_id, '{offered}', t.id, t.instance_id FROM tasks t "
        f"JOIN user_roles ur ON ur.role_id = t.candidate_role_id WHERE {unclaimed}"
        f" UNION SELECT ur.user_id, '{offered}', t.id, t.instance_id FROM tasks t {candidates} "
        f"JOIN user_roles ur ON ur.role_id = tc.role_id WHERE {unclaimed}"
        f" UNION SELECT tc.user_id, '{offered}', t.id, t.instance_id FROM tasks t {candidates} "
        f"WHERE tc.user_id IS NOT NULL AND {unclaimed}"
        f") x JOIN users u ON u.id = x.user_id WHERE {_ACTIVE} ON CONFLICT (key) DO NOTHING"
    )


def _statement(sql: str, *expanding: str) -> Any:
    params = [
        bindparam("now", type_=UTCDateTime()),
        bindparam("active", type_=Boolean()),
        *(bindparam(name, expanding=True) for name in expanding),
    ]
    return text(sql).bindparams(*params)


NEW_TASKS = "t.token_id IN :tokens"
PEOPLE_OF_NEW_TASKS = _statement(_people_sql("assigned", "offered", NEW_TASKS), "tokens")


# Due soon: due within the window; overdue: due already. Each once per task and user (the key);
# a task already noted for the kind is passed over by its index, so a repeated pass stays cheap.
def _not_noted(kind: str) -> str:
    return (
        f"NOT EXISTS (SELECT 1 FROM notifications n WHERE n.task_id = t.id AND n.kind = '{kind}')"
    )


DUE_SOON_WHERE = f"t.due_at > :now AND t.due_at <= :soon AND {_not_noted('due_soon')}"
OVERDUE_WHERE = f"t.due_at <= :now AND {_not_noted('overdue')}"


def _due_statements(kind: str, where: str) -> list[Any]:
    extra = [bindparam("soon", type_=UTCDateTime())] if ":soon" in where else []
    return [_statement(_people_sql(kind, kind, where)).bindparams(*extra)]


DUE_SOON = _due_statements("due_soon", DUE_SOON_WHERE)
OVERDUE = _due_statements("overdue", OVERDUE_WHERE)


def _request_sql(kind: str, suffix: str) -> str:
    key = f"'{kind}:' || CAST(i.id AS VARCHAR(20)){suffix}"
    return (
        f"{_INSERT}SELECT i.started_by_id, '{kind}', NULL, i.id, {key}, {_PENDING}, 0, :now "
        "FROM instances i JOIN users u ON u.id = i.started_by_id "
        f"WHERE i.id IN :instances AND i.parent_id IS NULL AND {_ACTIVE} "
        "ON CONFLICT (key) DO NOTHING"
    )


REQUEST_COMPLETED = _statement(_request_sql("request_completed", ""), "instances")
# An instance may fail, be retried and fail again: each failure is its own event.
REQUEST_FAILED = _statement(
    _request_sql("request_failed", " || ':' || :stamp"), "instances"
).bindparams(bindparam("stamp", type_=None))


def observe_history(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Insert the notifications the history entries call for: a few statements a step at most,
    whatever the number of tasks (role members come in the same statement)."""
    created: list[int] = []
    completed: list[int] = []
    failed: list[int] = []
    reassigned: list[dict[str, Any]] = []
    now = None
    for row in rows:
        kind = row["kind"]
        if kind == HistoryKind.TASK_CREATED and row["token_id"] is not None:
            created.append(row["token_id"])
        elif kind == HistoryKind.COMPLETED:
            completed.append(row["instance_id"])
        elif kind == HistoryKind.ERROR:
            failed.append(row["instance_id"])
        elif kind == HistoryKind.TASK_REASSIGNED:
            reassigned.append(row)
        else:
            continue
        now = row["created_at"]
    if now is None:
        return
    base = {"now": now, "active": True}
    if created:
        conn.execute(PEOPLE_OF_NEW_TASKS, {**base, "tokens": created})
    if completed:
        conn.execute(REQUEST_COMPLETED, {**base, "instances": completed})
    if failed:
        stamp = now.strftime("%Y%m%dT%H%M%S%f")
        conn.execute(REQUEST_FAILED, {**base, "instances": sorted(set(failed)), "stamp": stamp})
    for row in reassigned:
        _reassigned(conn, row, base)


def _reassigned(conn: Connection, row: dict[str, Any], base: dict[str, Any]) -> None:
    """A person gave a task to a user or a role: the same rows as a new task would get. The
    session may not have flushed the task's new assignee yet, so the details say who."""
    details = row.get("details") or {}
    task_id = details.get("task")
    if not isinstance(task_id, int):
        return
    if details.get("to_user"):
        user_id = conn.scalar(select(User.id).where(User.username == details["to_user"]))
        if user_id is not None:
            _insert_direct(conn, "assigned", task_id, row["instance_id"], user_id, base["now"])
    elif details.get("to_role"):
        conn.execute(
            text(
                f"{_INSERT}SELECT u.id, 'offered', :task, :instance, "
                "'offered:' || CAST(:task AS VARCHAR(20)) || ':' || CAST(u.id AS VARCHAR(20)), "
                f"{_PENDING}, 0, :now FROM users u JOIN user_roles ur ON ur.user_id = u.id "
                f"JOIN roles r ON r.id = ur.role_id WHERE r.name = :role AND {_ACTIVE} "
                "ON CONFLICT (key) DO NOTHING"
            ).bindparams(
                bindparam("now", type_=UTCDateTime()),
                bindparam("active", type_=Boolean()),
                bindparam("task", type_=Integer()),
                bindparam("instance", type_=Integer()),
            ),
            {**base, "task": task_id, "instance": row["instance_id"], "role": details["to_role"]},
        )


def _insert_direct(
    conn: Connection, kind: str, task_id: int, instance_id: int, user_id: int, now: datetime
) -> None:
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    conn.execute(
        insert(Notification.__table__)
        .values(
            user_id=user_id,
            kind=kind,
            task_id=task_id,
            instance_id=instance_id,
            key=f"{kind}:{task_id}:{user_id}",
            status=NotificationStatus.PENDING,
            attempts=0,
            created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["key"])
    )


# --- preferences ---------------------------------------------------------------------------------


def defaults(session: Session) -> dict[str, str]:
    """The admin's mode of every kind (the built-in one where the admin chose none)."""
    chosen = dict(session.execute(select(NotificationDefault.kind, NotificationDefault.mode)).all())
    return {kind: chosen.get(kind, BUILT_IN_MODE) for kind in KINDS}


def own_choices(session: Session, user_id: int) -> dict[str, str]:
    """The kinds the user chose a mode for themselves."""
    rows = session.execute(
        select(NotificationPreference.kind, NotificationPreference.mode).where(
            NotificationPreference.user_id == user_id
        )
    ).all()
    return {kind: mode for kind, mode in rows if kind in KINDS}


def mode_of(session: Session, user_id: int, kind: str) -> str:
    """What applies to the user for `kind`: their own choice, else the admin's default."""
    own = session.get(NotificationPreference, (user_id, kind))
    if own is not None:
        return own.mode
    default = session.get(NotificationDefault, kind)
    return default.mode if default is not None else BUILT_IN_MODE


def _check_choices(choices: Mapping[str, str], *, allow_default: bool) -> None:
    allowed = set(MODES) | ({"default"} if allow_default else set())
    for kind, mode in choices.items():
        if kind not in KINDS:
            raise PreferenceError(f"There is no notification kind {kind!r}.")
        if mode not in allowed:
            raise PreferenceError(f"{KINDS[kind]}: choose one of the listed options.")


def set_preferences(session: Session, user_id: int, choices: Mapping[str, str]) -> None:
    """Keep the user's choice per kind; "default" drops their own choice (the admin's applies).
    Raises PreferenceError, changing nothing, when a kind or mode is unknown."""
    _check_choices(choices, allow_default=True)
    session.execute(
        delete(NotificationPreference).where(
            NotificationPreference.user_id == user_id,
            NotificationPreference.kind.in_(list(choices)),
        )
    )
    for kind, mode in choices.items():
        if mode != "default":
            session.add(NotificationPreference(user_id=user_id, kind=kind, mode=mode))
    session.commit()


def set_defaults(session: Session, choices: Mapping[str, str]) -> None:
    """Keep the admin's mode per kind, for users without their own choice."""
    _check_choices(choices, allow_default=False)
    session.execute(delete(NotificationDefault).where(NotificationDefault.kind.in_(list(choices))))
    session.add_all(NotificationDefault(kind=kind, mode=mode) for kind, mode in choices.items())
    session.commit()


# --- the worker's periodic pass ------------------------------------------------------------------


def tick(session: Session, config: Mapping[str, Any], now: datetime) -> int:
    """Due-soon and overdue rows, then the pending mails, then the digests whose hour came;
    how many mails went out (or into the outbox)."""
    scan_due(session, config, now)
    return deliver_pending(session, config, now) + send_digests(session, config, now)


def scan_due(session: Session, config: Mapping[str, Any], now: datetime) -> None:
    """Rows for open tasks due within NOTIFY_DUE_SOON hours, and for overdue ones: once per task,
    user and kind (the key)."""
    conn = session.connection()
    base = {"now": now, "active": True}
    hours = int(config.get("NOTIFY_DUE_SOON") or 0)
    if hours:
        for statement in DUE_SOON:
            conn.execute(statement, {**base, "soon": now + timedelta(hours=hours)})
    for statement in OVERDUE:
        conn.execute(statement, base)
    session.commit()


def _claimable(model: Any, now: datetime) -> Any:
    return or_(model.claimed_until.is_(None), model.claimed_until <= now)


def deliver_pending(session: Session, config: Mapping[str, Any], now: datetime) -> int:
    """Claim a batch of pending rows (so two workers do not take the same) and settle each:
    mail it, keep it for the digest, or skip it saying why."""
    ids = list(
        session.scalars(
            select(Notification.id)
            .where(Notification.status == NotificationStatus.PENDING, _claimable(Notification, now))
            .order_by(Notification.id)
            .limit(BATCH)
        )
    )
    if not ids:
        session.rollback()
        return 0
    claim = uuid.uuid4().hex
    session.execute(
        update(Notification)
        .where(
            Notification.id.in_(ids),
            Notification.status == NotificationStatus.PENDING,
            _claimable(Notification, now),
        )
        .values(claim=claim, claimed_until=now + LEASE)
    )
    session.commit()
    rows = list(
        session.scalars(
            select(Notification)
            .where(Notification.claim == claim, Notification.status == NotificationStatus.PENDING)
            .order_by(Notification.id)
        )
    )
    sent = 0
    for row in rows:
        sent += _settle(session, config, row, now)
    return sent


def _settle(session: Session, config: Mapping[str, Any], row: Notification, now: datetime) -> int:
    user = session.get(User, row.user_id)
    problem = _stale(session, row, user)
    mode = mode_of(session, row.user_id, row.kind) if problem is None else "none"
    if problem is not None or mode == "none":
        row.status = NotificationStatus.SKIPPED
        row.reason = problem or "turned off in the preferences"
        row.claim = None
        session.commit()
        return 0
    if mode == "digest":
        row.status = NotificationStatus.DIGEST
        row.claim = None
        session.commit()
        return 0
    assert user is not None
    subject, body = compose(session, config, row, user)
    key, to = f"notification:{row.key}", [user.email]
    session.commit()  # no transaction (SQLite: no lock) stays open while the mail goes out
    try:
        # Not tied to the instance: its page lists the process's own e-mails, not these.
        mail.send(config, key=key, to=to, subject=subject, body=body)
    except ToolError as error:
        _failed(row, error, now)
        row.claim = None
        session.commit()
        return 0
    row.claim = None
    row.status = NotificationStatus.SENT
    row.sent_at = now
    session.commit()
    return 1


def _failed(row: Notification | NotificationDigest, error: ToolError, now: datetime) -> None:
    """A passing failure waits RETRY_AFTER for the next try; a lasting one ends the row."""
    log.warning("notification mail failed: %s", error.message)
    if isinstance(row, NotificationDigest):
        row.claimed_until = now + RETRY_AFTER
        return
    row.attempts += 1
    if not error.retryable or row.attempts >= MAX_ATTEMPTS:
        row.status = NotificationStatus.FAILED
        row.reason = error.message[:200]
    else:
        row.claimed_until = now + RETRY_AFTER


def _stale(session: Session, row: Notification, user: User | None) -> str | None:
    """Why the row should not be mailed any more (None: it should)."""
    if user is None or not user.active or not user.email:
        return "no e-mail address"
    if row.kind in TASK_KINDS:
        task = session.get(Task, row.task_id) if row.task_id is not None else None
        if task is None or task.status != TaskStatus.OPEN:
            return "the task is closed"
        if row.kind == "assigned" and task.assignee_id != user.id:
            return "the task is assigned to someone else"
        if row.kind == "offered" and task.assignee_id is not None:
            return "the task was claimed"
        if row.kind in ("due_soon", "overdue") and task.assignee_id not in (None, user.id):
            return "the task is assigned to someone else"
        return None
    instance = session.get(Instance, row.instance_id) if row.instance_id is not None else None
    if instance is None:
        return "the request is gone"
    if row.kind == "request_failed" and instance.status != InstanceStatus.FAILED:
        return "the request no longer fails"
    return None


def _url(config: Mapping[str, Any], path: str) -> str:
    return f"{config['PUBLIC_URL']}{path}"


def _request_label(instance: Instance) -> str:
    return instance.business_key or f"{instance.process_key} #{instance.id}"


def item(session: Session, config: Mapping[str, Any], row: Notification) -> tuple[str, str]:
    """One line saying what happened, and the address that opens it."""
    if row.kind in TASK_KINDS:
        task = session.get(Task, row.task_id)
        assert task is not None
        instance = session.get(Instance, task.instance_id)
        about = f"“{task.title}”" + (f" ({_request_label(instance)})" if instance else "")
        what = {
            "assigned": f"Assigned to you: {about}",
            "offered": f"Offered to your role: {about}",
            "due_soon": f"Due soon: {about}",
            "overdue": f"Overdue: {about}",
        }[row.kind]
        if task.due_at is not None:
            what += f", due {task.due_at:%Y-%m-%d %H:%M} UTC"
        return what, _url(config, f"/inbox/tasks/{task.id}")
    instance = session.get(Instance, row.instance_id)
    assert instance is not None
    label = _request_label(instance)
    if row.kind == "request_completed":
        what = f"Your request completed: {label}"
    else:
        message = (instance.error or {}).get("message") or ""
        what = f"Your request failed: {label}" + (f" ({message[:200]})" if message else "")
    return what, _url(config, f"/inbox/instances/{instance.id}")


def compose(
    session: Session, config: Mapping[str, Any], row: Notification, user: User
) -> tuple[str, str]:
    """The subject and plain-text body of one notification's mail."""
    what, link = item(session, config, row)
    subject = what.split(", due ")[0]
    body = (
        f"Hello {user.name},\n\n{what}.\n\nOpen it: {link}\n\n"
        f"Choose what Flowdesk mails you on your account page: {_url(config, '/account')}\n"
    )
    return subject, body


def send_digests(session: Session, config: Mapping[str, Any], now: datetime) -> int:
    """From NOTIFY_DIGEST_HOUR (UTC) on, gather each user's digest rows into that day's digest
    (the unique (user, day) makes it one a day) and mail the digests not yet sent."""
    if now.hour >= int(config.get("NOTIFY_DIGEST_HOUR") or 0):
        _gather_digests(session, now)
    return _send_gathered(session, config, now)


def _gather_digests(session: Session, now: datetime) -> None:
    day = now.date().isoformat()
    waiting = list(
        session.scalars(
            select(Notification.user_id)
            .where(
                Notification.status == NotificationStatus.DIGEST,
                Notification.digest_id.is_(None),
            )
            .distinct()
        )
    )
    session.rollback()
    table = NotificationDigest.__table__
    for user_id in waiting:
        conn = session.connection()
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        digest_id = conn.scalar(
            insert(table)
            .values(user_id=user_id, day=day, created_at=now)
            .on_conflict_do_nothing(index_elements=["user_id", "day"])
            .returning(table.c.id)
        )
        if digest_id is None:  # today's digest is made: these wait for tomorrow's
            session.rollback()
            continue
        session.execute(
            update(Notification)
            .where(
                Notification.user_id == user_id,
                Notification.status == NotificationStatus.DIGEST,
                Notification.digest_id.is_(None),
            )
            .values(digest_id=digest_id)
        )
        session.commit()


def _send_gathered(session: Session, config: Mapping[str, Any], now: datetime) -> int:
    ids = list(
        session.scalars(
            select(NotificationDigest.id)
            .where(NotificationDigest.sent_at.is_(None), _claimable(NotificationDigest, now))
            .order_by(NotificationDigest.id)
            .limit(BATCH)
        )
    )
    if not ids:
        session.rollback()
        return 0
    claim = uuid.uuid4().hex
    session.execute(
        update(NotificationDigest)
        .where(
            NotificationDigest.id.in_(ids),
            NotificationDigest.sent_at.is_(None),
            _claimable(NotificationDigest, now),
        )
        .values(claim=claim, claimed_until=now + LEASE)
    )
    session.commit()
    digests = list(
        session.scalars(select(NotificationDigest).where(NotificationDigest.claim == claim))
    )
    sent = 0
    for digest in digests:
        sent += _send_digest(session, config, digest, now)
    return sent


def _send_digest(
    session: Session, config: Mapping[str, Any], digest: NotificationDigest, now: datetime
) -> int:
    user = session.get(User, digest.user_id)
    rows = list(
        session.scalars(
            select(Notification)
            .where(
                Notification.digest_id == digest.id,
                Notification.status == NotificationStatus.DIGEST,
            )
            .order_by(Notification.id)
        )
    )
    kept = []
    for row in rows:
        problem = _stale(session, row, user)
        if problem is None:
            kept.append(row)
        else:
            row.status = NotificationStatus.SKIPPED
            row.reason = problem
    digest.claim = None
    if not kept or user is None:
        digest.sent_at = now
        session.commit()
        return 0
    lines = []
    for row in kept:
        what, link = item(session, config, row)
        lines.append(f"- {what}\n  {link}")
    key, to = f"digest:{digest.user_id}:{digest.day}", [user.email]
    subject = f"Your Flowdesk digest of {digest.day}: {len(kept)} item{'s' * (len(kept) != 1)}"
    body = (
        f"Hello {user.name},\n\nWhat happened for you since the last digest:\n\n"
        + "\n".join(lines)
        + f"\n\nChoose what Flowdesk mails you on your account page: {_url(config, '/account')}\n"
    )
    session.commit()  # no transaction (SQLite: no lock) stays open while the mail goes out
    try:
        mail.send(config, key=key, to=to, subject=subject, body=body)
    except ToolError as error:
        _failed(digest, error, now)
        session.commit()
        return 0
    for row in kept:
        row.status = NotificationStatus.SENT
        row.sent_at = now
    digest.sent_at = now
    session.commit()
    return 1
