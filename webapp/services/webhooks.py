"""Webhooks out: registration, the history observer that records deliveries, signing (Standard
Webhooks 1.0), and the bookkeeping of the workers' attempts (docs/webhooks.md)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import and_, exists, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webapp.engine.context import jsonable
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import (
    Instance,
    Partition,
    Role,
    SignalBroadcast,
    Task,
    User,
    Webhook,
    WebhookDelivery,
)
from webapp.models.base import utcnow
from webapp.models.statuses import HistoryKind
from webapp.services.instances import InstanceError, invalid

EVENTS = (
    "instance.started",
    "instance.completed",
    "instance.failed",
    "instance.cancelled",
    "task.created",
    "task.assigned",
    "task.completed",
    "incident.opened",
    "incident.resolved",
    "broadcast.done",
)

#: The event types each history kind raises.
HISTORY_EVENTS: dict[str, tuple[str, ...]] = {
    HistoryKind.STARTED: ("instance.started",),
    HistoryKind.COMPLETED: ("instance.completed",),
    HistoryKind.CANCELLED: ("instance.cancelled",),
    HistoryKind.ERROR: ("instance.failed", "incident.opened"),
    HistoryKind.RETRIED: ("incident.resolved",),
    HistoryKind.TASK_CREATED: ("task.created",),
    HistoryKind.TASK_CLAIMED: ("task.assigned",),
    HistoryKind.TASK_REASSIGNED: ("task.assigned",),
    HistoryKind.TASK_COMPLETED: ("task.completed",),
}
INSTANCE_STATUS_AFTER = {
    "instance.started": "running",
    "instance.completed": "completed",
    "instance.failed": "failed",
    "instance.cancelled": "cancelled",
    "incident.opened": "failed",
    "incident.resolved": "running",
}

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
SECRET_PREFIX = "whsec_"  # noqa: S105  (the Standard Webhooks prefix, not a secret)
MAX_URL = 2000
# The longest retry wait: backoff doubles from WEBHOOK_BACKOFF up to this.
MAX_BACKOFF = 7200.0
# Seconds a claimed delivery is left to its worker before another may try it.
LEASE_GRACE = 30.0
CLAIM_BATCH = 50

SETTINGS: dict[str, Any] = {
    "WEBHOOK_REFRESH": 5.0,
    "WEBHOOK_BACKOFF": 5.0,
    "WEBHOOK_RETRY_FOR": 86400.0,
    "WEBHOOK_PAUSE_AFTER": 20,
    "WEBHOOK_PAUSE_SPAN": 86400.0,
    "WEBHOOK_TIMEOUT": 10.0,
}


def configure(config: Mapping[str, Any]) -> None:
    """Take the WEBHOOK_* settings (called by create_app)."""
    SETTINGS.update({key: config[key] for key in SETTINGS if key in config})
    forget_cache()


# --- the process-wide view of active webhooks --------------------------------------------------


@dataclass(frozen=True)
class ActiveHook:
    id: int
    events: frozenset[str]
    process_key: str | None
    partition_id: int | None

    def wants(self, event: str, process_key: str, partition_id: int | None) -> bool:
        return (
            event in self.events
            and (self.process_key is None or self.process_key == process_key)
            and (self.partition_id is None or self.partition_id == partition_id)
        )


_cache_lock = threading.Lock()
_cache: dict[str, Any] = {"at": None, "hooks": ()}
WEBHOOKS = Webhook.__table__
DELIVERIES = WebhookDelivery.__table__


def forget_cache() -> None:
    """The next history write reads the active webhooks again (this process only)."""
    with _cache_lock:
        _cache["at"] = None


def none_active() -> None:
    """Know that no webhook is active, as of now (after emptying the tables, as tests do)."""
    with _cache_lock:
        _cache.update(at=time.monotonic(), hooks=())


def _active_hooks(conn: Connection) -> tuple[ActiveHook, ...]:
    """The active webhooks, read at most once every WEBHOOK_REFRESH seconds per process: with
    none registered, a step costs no statement."""
    now = time.monotonic()
    with _cache_lock:
        at = _cache["at"]
        if at is not None and now - at < float(SETTINGS["WEBHOOK_REFRESH"]):
            return _cache["hooks"]
    rows = conn.execute(
        select(
            WEBHOOKS.c.id, WEBHOOKS.c.events, WEBHOOKS.c.process_key, WEBHOOKS.c.partition_id
        ).where(WEBHOOKS.c.active.is_(True))
    ).all()
    hooks = tuple(
        ActiveHook(row.id, frozenset(row.events or ()), row.process_key, row.partition_id)
        for row in rows
    )
    with _cache_lock:
        _cache.update(at=now, hooks=hooks)
    return hooks


# --- the history observer ----------------------------------------------------------------------


def record_events(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """History observer: one pending delivery per event and matching active webhook, in the
    transaction that wrote the history entries."""
    wanted = [(row, event) for row in rows for event in HISTORY_EVENTS.get(row["kind"], ())]
    if not wanted:
        return
    hooks = _active_hooks(conn)
    if not hooks:
        return
    instances: dict[int, dict[str, Any] | None] = {}
    deliveries = []
    now = utcnow()
    retry_until = now + timedelta(seconds=float(SETTINGS["WEBHOOK_RETRY_FOR"]))
    for row, event in wanted:
        instance_id = row["instance_id"]
        if instance_id not in instances:
            instances[instance_id] = _instance_shape(conn, instance_id)
        instance = instances[instance_id]
        if instance is None:
            continue
        matching = [
            hook
            for hook in hooks
            if hook.wants(event, instance["process_key"], instance["partition_id"])
        ]
        if not matching:
            continue
        body = _body(event, row, _event_data(conn, event, row, instance))
        for hook in matching:
            deliveries.append(
                {
                    "webhook_id": hook.id,
                    "message_id": f"msg_{uuid.uuid4().hex}",
                    "event_type": event,
                    "instance_id": instance_id,
                    "body": body,
                    "status": PENDING,
                    "attempts": 0,
                    "next_attempt_at": now,
                    "retry_until": retry_until,
                    "created_at": now,
                }
            )
    _insert(conn, deliveries)


def _insert(conn: Connection, deliveries: list[dict[str, Any]]) -> None:
    """Insert the deliveries of webhooks that still exist and are active (the cache may be a few
    seconds old), keeping those webhooks from being deleted until this transaction ends."""
    if not deliveries:
        return
    wanted = {row["webhook_id"] for row in deliveries}
    present = set(
        conn.scalars(
            select(WEBHOOKS.c.id)
            .where(WEBHOOKS.c.id.in_(wanted), WEBHOOKS.c.active.is_(True))
            .with_for_update(read=True, key_share=True)
        )
    )
    kept = [row for row in deliveries if row["webhook_id"] in present]
    if kept:
        conn.execute(DELIVERIES.insert(), kept)


def broadcast_finished(conn: Connection, broadcast_id: int, now: datetime) -> None:
    """Record `broadcast.done` deliveries when this transaction finished the broadcast (its
    `finished_at` is `now`); nothing is read when no webhook wants the event."""
    hooks = [hook for hook in _active_hooks(conn) if "broadcast.done" in hook.events]
    if not hooks:
        return
    table, partitions = SignalBroadcast.__table__, Partition.__table__
    instances = Instance.__table__
    row = conn.execute(
        select(table, partitions.c.key.label("partition_key"), instances.c.process_key)
        .select_from(
            table.outerjoin(partitions, partitions.c.id == table.c.partition_id).outerjoin(
                instances, instances.c.id == table.c.instance_id
            )
        )
        .where(table.c.id == broadcast_id, table.c.status == "done")
    ).first()
    if (
        row is None
        or row.finished_at is None
        or abs((row.finished_at - now).total_seconds()) > 0.001
    ):
        return
    data = {
        "id": row.id,
        "name": row.name,
        "payload": row.payload,
        "partition": row.partition_key,
        "status": row.status,
        "total": row.total,
        "delivered": row.delivered,
        "started": row.started,
        "thrown_by": (
            {"instance": row.instance_id, "node": row.node_id}
            if row.node_id
            else {"user": row.actor}
        ),
        "created_at": _iso(row.created_at),
        "finished_at": _iso(row.finished_at),
    }
    body = _body("broadcast.done", {"created_at": now}, data)
    retry_until = now + timedelta(seconds=float(SETTINGS["WEBHOOK_RETRY_FOR"]))
    rows = [
        {
            "webhook_id": hook.id,
            "message_id": f"msg_{uuid.uuid4().hex}",
            "event_type": "broadcast.done",
            "instance_id": None,
            "body": body,
            "status": PENDING,
            "attempts": 0,
            "next_attempt_at": now,
            "retry_until": retry_until,
            "created_at": now,
        }
        for hook in hooks
        if hook.wants("broadcast.done", row.process_key or "", row.partition_id)
    ]
    _insert(conn, rows)


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _instance_shape(conn: Connection, instance_id: int) -> dict[str, Any] | None:
    """The instance as the API lists it (read on the step's connection, so as of this step)."""
    table = Instance.__table__
    partitions = Partition.__table__
    users = User.__table__
    row = conn.execute(
        select(table, partitions.c.key.label("partition_key"), users.c.username)
        .select_from(
            table.outerjoin(partitions, partitions.c.id == table.c.partition_id).outerjoin(
                users, users.c.id == table.c.started_by_id
            )
        )
        .where(table.c.id == instance_id)
    ).first()
    if row is None:
        return None
    return {
        "partition_id": row.partition_id,
        "process_key": row.process_key,
        "api": {
            "id": row.id,
            "process_key": row.process_key,
            "version": row.version,
            "status": row.status,
            "business_key": row.business_key,
            "partition": row.partition_key,
            "started_via": row.started_via,
            "started_by": row.username,
            "created_at": _iso(row.created_at),
            "ended_at": _iso(row.ended_at),
            "called_by": (
                {"instance": row.parent_id, "node": row.parent_node_id}
                if row.parent_id is not None
                else None
            ),
        },
    }


def _event_data(
    conn: Connection, event: str, row: dict[str, Any], instance: dict[str, Any]
) -> dict[str, Any]:
    shape = dict(instance["api"])
    if event.startswith("task."):
        return {**_task_shape(conn, event, row), "instance": shape}
    shape["status"] = INSTANCE_STATUS_AFTER.get(event, shape["status"])
    details = row.get("details") or {}
    if event.startswith("incident."):
        shape["incident"] = {
            "node": row.get("node_id"),
            "code": details.get("code"),
            "message": details.get("message"),
        }
    elif event == "instance.failed":
        shape["error"] = {"node": row.get("node_id"), "code": details.get("code")}
    return shape


def _task_shape(conn: Connection, event: str, row: dict[str, Any]) -> dict[str, Any]:
    """The task as the API shows it; its assignee as the event left it."""
    tasks, users, roles = Task.__table__, User.__table__, Role.__table__
    details = row.get("details") or {}
    query = select(tasks, users.c.username, roles.c.name.label("role_name")).select_from(
        tasks.outerjoin(users, users.c.id == tasks.c.assignee_id).outerjoin(
            roles, roles.c.id == tasks.c.candidate_role_id
        )
    )
    if details.get("task") is not None:
        query = query.where(tasks.c.id == details["task"])
    else:
        query = query.where(
            tasks.c.instance_id == row["instance_id"], tasks.c.token_id == row["token_id"]
        )
    task = conn.execute(query.order_by(tasks.c.id.desc()).limit(1)).first()
    shape: dict[str, Any] = {"node": row.get("node_id")}
    if task is not None:
        shape.update(
            id=task.id,
            title=task.title,
            status=task.status,
            assignee=task.username,
            role=task.role_name,
            open_to_partition=task.open_to_partition,
            due_at=_iso(task.due_at),
        )
    if event == "task.completed":
        shape.update(status="completed", completed_by=row.get("actor"))
    elif row["kind"] == HistoryKind.TASK_CLAIMED:
        shape["assignee"] = row.get("actor")
    elif row["kind"] == HistoryKind.TASK_REASSIGNED:
        shape["assignee"] = details.get("to_user")
        if details.get("to_role"):
            shape["role"] = details["to_role"]
    return shape


def _body(event: str, row: dict[str, Any], data: dict[str, Any]) -> str:
    created = row.get("created_at")
    stamp = _iso(created) if isinstance(created, datetime) else _iso(utcnow())
    return json.dumps(
        {"type": event, "timestamp": stamp, "data": jsonable(data)},
        separators=(",", ":"),
        ensure_ascii=False,
    )


# --- signing (Standard Webhooks 1.0) -----------------------------------------------------------


def new_secret() -> str:
    """A `whsec_` secret: base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode("ascii")


def sign(secret: str, message_id: str, timestamp: int, body: str) -> str:
    """`v1,` + base64 HMAC-SHA256 of `id.timestamp.body`, keyed with the decoded secret."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.{body}".encode()
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signing_secrets(webhook: Any, now: datetime) -> list[str]:
    """The current secret, and the previous one while its rotation overlap lasts."""
    found = [webhook.secret]
    if webhook.previous_secret and webhook.previous_until and webhook.previous_until > now:
        found.append(webhook.previous_secret)
    return found


def headers(message_id: str, body: str, keys: Sequence[str], timestamp: int) -> dict[str, str]:
    """The Standard Webhooks headers of one attempt."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(sign(key, message_id, timestamp, body) for key in keys),
        "content-type": "application/json",
        "user-agent": "Flowdesk-Webhooks/1",
    }


# --- registration ------------------------------------------------------------------------------


def _clean_url(value: Any) -> str:
    url = value.strip() if isinstance(value, str) else ""
    parts = urlsplit(url)
    if not url or parts.scheme not in ("http", "https") or not parts.hostname:
        raise invalid({"url": "Give an http:// or https:// address."})
    if len(url) > MAX_URL or parts.username or parts.password:
        raise invalid(
            {"url": f"Use at most {MAX_URL} characters and no user name or password in it."}
        )
    return url


def _clean_events(value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(e, str) for e in value):
        raise invalid({"events": "Choose at least one event type."})
    unknown = sorted(set(value) - set(EVENTS))
    if unknown:
        raise invalid(
            {"events": f"Unknown event type {', '.join(unknown)}; use {', '.join(EVENTS)}."}
        )
    return [event for event in EVENTS if event in value]


def _clean_partition(value: Any) -> int | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise invalid({"partition": "Give a partition's key."})
    found = db.session.scalar(select(Partition.id).where(Partition.key == value))
    if found is None:
        raise invalid({"partition": f"There is no partition {value!r}."})
    return found


def _clean_text(data: Mapping[str, Any], name: str, limit: int) -> str | None:
    value = data.get(name)
    if value in (None, ""):
        return None
    if not isinstance(value, str) or len(value.strip()) > limit:
        raise invalid({name: f"Use text of at most {limit} characters."})
    return value.strip() or None


def _apply(webhook: Webhook, data: Mapping[str, Any], *, creating: bool) -> None:
    """Check every given field first (nothing is changed when one is wrong), then set them."""
    changes: dict[str, Any] = {}
    problems: dict[str, str] = {}
    checks = {
        "url": _clean_url,
        "events": _clean_events,
        "partition": _clean_partition,
        "process_key": lambda v: _clean_text(data, "process_key", 100),
        "description": lambda v: _clean_text(data, "description", 200) or "",
        "active": _clean_active,
    }
    unknown = sorted(set(data) - set(checks))
    if unknown:
        problems.update({name: "Not a webhook field." for name in unknown})
    for name, check in checks.items():
        if name not in data:
            if creating and name in ("url", "events"):
                problems[name] = "Required."
            continue
        try:
            changes[name] = check(data[name])
        except InstanceError as error:
            problems.update(error.fields)
    if problems:
        raise invalid(problems)
    if "partition" in changes:
        webhook.partition_id = changes.pop("partition")
    for name, value in changes.items():
        setattr(webhook, name, value)
    webhook.updated_at = utcnow()


def _clean_active(value: Any) -> bool:
    if not isinstance(value, bool):
        raise invalid({"active": "Use true or false."})
    return value


def create(actor: Any, data: Mapping[str, Any]) -> Webhook:
    """Register a webhook with a new secret; 422 naming every wrong field."""
    webhook = Webhook(
        secret=new_secret(), created_by=actor.username, active=True, failures=0, description=""
    )
    _apply(webhook, data, creating=True)
    db.session.add(webhook)
    db.session.commit()
    forget_cache()
    return webhook


def get(webhook_id: int) -> Webhook:
    webhook = db.session.get(Webhook, webhook_id)
    if webhook is None:
        raise InstanceError("not_found", f"There is no webhook {webhook_id}.", status=404)
    return webhook


def update_webhook(webhook_id: int, data: Mapping[str, Any]) -> Webhook:
    webhook = get(webhook_id)
    _apply(webhook, data, creating=False)
    db.session.commit()
    forget_cache()
    return webhook


def delete(webhook_id: int) -> None:
    """Remove a webhook and its delivery log."""
    webhook = get(webhook_id)
    db.session.execute(DELIVERIES.delete().where(DELIVERIES.c.webhook_id == webhook.id))
    db.session.delete(webhook)
    db.session.commit()
    forget_cache()


def rotate(webhook_id: int, overlap_hours: Any = 24) -> Webhook:
    """A new secret; the old one keeps signing too for `overlap_hours` (0: dropped at once)."""
    if isinstance(overlap_hours, bool) or not isinstance(overlap_hours, int | float):
        raise invalid({"overlap_hours": "Use a number of hours from 0 to 168."})
    if not 0 <= overlap_hours <= 168:
        raise invalid({"overlap_hours": "Use a number of hours from 0 to 168."})
    webhook = get(webhook_id)
    now = utcnow()
    if overlap_hours:
        webhook.previous_secret = webhook.secret
        webhook.previous_until = now + timedelta(hours=float(overlap_hours))
    else:
        webhook.previous_secret = webhook.previous_until = None
    webhook.secret = new_secret()
    webhook.updated_at = now
    db.session.commit()
    return webhook


def resume(webhook_id: int) -> Webhook:
    """Unpause: the held deliveries are due at once, each with a new day of retries."""
    webhook = get(webhook_id)
    now = utcnow()
    webhook.paused_at = webhook.paused_reason = webhook.failing_since = None
    webhook.failures = 0
    webhook.updated_at = now
    db.session.execute(
        update(DELIVERIES)
        .where(DELIVERIES.c.webhook_id == webhook.id, DELIVERIES.c.status == PENDING)
        .values(
            next_attempt_at=now,
            retry_until=now + timedelta(seconds=float(SETTINGS["WEBHOOK_RETRY_FOR"])),
        )
    )
    db.session.commit()
    return webhook


def redeliver(webhook_id: int, delivery_id: int) -> WebhookDelivery:
    """Send one delivery again (same webhook-id), with a new day of retries."""
    delivery = db.session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.webhook_id != webhook_id:
        raise InstanceError(
            "not_found", f"Webhook {webhook_id} has no delivery {delivery_id}.", status=404
        )
    now = utcnow()
    delivery.status = PENDING
    delivery.next_attempt_at = now
    delivery.retry_until = now + timedelta(seconds=float(SETTINGS["WEBHOOK_RETRY_FOR"]))
    db.session.commit()
    return delivery


def listing() -> list[Webhook]:
    return list(db.session.scalars(select(Webhook).order_by(Webhook.id)))


def deliveries_query(webhook_id: int):
    return (
        select(WebhookDelivery)
        .where(WebhookDelivery.webhook_id == webhook_id)
        .order_by(WebhookDelivery.id.desc())
    )


def partition_key(webhook: Webhook) -> str | None:
    if webhook.partition_id is None:
        return None
    return db.session.scalar(select(Partition.key).where(Partition.id == webhook.partition_id))


def as_dict(webhook: Webhook, *, with_secret: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": webhook.id,
        "url": webhook.url,
        "description": webhook.description,
        "events": list(webhook.events or ()),
        "process_key": webhook.process_key,
        "partition": partition_key(webhook),
        "active": webhook.active,
        "paused": (
            {"at": _iso(webhook.paused_at), "reason": webhook.paused_reason}
            if webhook.paused_at
            else None
        ),
        "rotation_ends_at": _iso(webhook.previous_until) if webhook.previous_secret else None,
        "created_by": webhook.created_by,
        "created_at": _iso(webhook.created_at),
    }
    if with_secret:
        data["secret"] = webhook.secret
    return data


def delivery_dict(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "id": delivery.id,
        "webhook_id": delivery.message_id,
        "type": delivery.event_type,
        "instance": delivery.instance_id,
        "status": delivery.status,
        "attempts": delivery.attempts,
        "response_code": delivery.response_code,
        "error": delivery.last_error,
        "created_at": _iso(delivery.created_at),
        "last_attempt_at": _iso(delivery.last_attempt_at),
        "next_attempt_at": _iso(delivery.next_attempt_at) if delivery.status == PENDING else None,
    }


# --- the workers' side -------------------------------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """A claimed delivery: where it goes, what it sends, the secrets that sign it."""

    id: int
    message_id: str
    url: str
    body: str
    keys: tuple[str, ...]


EARLIER = DELIVERIES.alias("earlier")
_NEXT_DUE = (
    select(func.min(DELIVERIES.c.next_attempt_at))
    .where(DELIVERIES.c.status == PENDING)
    .where(DELIVERIES.c.next_attempt_at.is_not(None))
)


def next_due(session: Session) -> datetime | None:
    """When the earliest pending delivery may be tried (off the partial index, no lock)."""
    value = session.connection().scalar(_NEXT_DUE)
    if isinstance(value, datetime) and value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value


def claim_due(session: Session, now: datetime, limit: int = CLAIM_BATCH) -> list[Attempt]:
    """Claim the due deliveries of unpaused webhooks whose earlier deliveries for the same
    instance are all done, leasing them for the timeout; the caller commits, then sends."""
    begin_write(session)
    conn = session.connection()
    earlier_pending = exists(
        select(EARLIER.c.id).where(
            EARLIER.c.webhook_id == DELIVERIES.c.webhook_id,
            EARLIER.c.instance_id == DELIVERIES.c.instance_id,
            EARLIER.c.id < DELIVERIES.c.id,
            EARLIER.c.status == PENDING,
        )
    )
    rows = conn.execute(
        select(
            DELIVERIES.c.id,
            DELIVERIES.c.message_id,
            DELIVERIES.c.body,
            WEBHOOKS.c.url,
            WEBHOOKS.c.secret,
            WEBHOOKS.c.previous_secret,
            WEBHOOKS.c.previous_until,
        )
        .select_from(DELIVERIES.join(WEBHOOKS, WEBHOOKS.c.id == DELIVERIES.c.webhook_id))
        .where(
            DELIVERIES.c.status == PENDING,
            DELIVERIES.c.next_attempt_at <= now,
            WEBHOOKS.c.active.is_(True),
            WEBHOOKS.c.paused_at.is_(None),
            ~earlier_pending,
        )
        .order_by(DELIVERIES.c.next_attempt_at, DELIVERIES.c.id)
        .limit(limit)
        .with_for_update(skip_locked=True, of=DELIVERIES)
    ).all()
    if not rows:
        return []
    lease = now + timedelta(seconds=float(SETTINGS["WEBHOOK_TIMEOUT"]) + LEASE_GRACE)
    conn.execute(
        update(DELIVERIES)
        .where(DELIVERIES.c.id.in_([row.id for row in rows]))
        .values(
            next_attempt_at=lease,
            attempts=DELIVERIES.c.attempts + 1,
            last_attempt_at=now,
        )
    )
    return [
        Attempt(row.id, row.message_id, row.url, row.body, tuple(signing_secrets(row, now)))
        for row in rows
    ]


def backoff(attempts: int) -> float:
    """Seconds before the next try after `attempts` failed ones: doubling, at most 2 hours."""
    return min(float(SETTINGS["WEBHOOK_BACKOFF"]) * 2 ** max(attempts - 1, 0), MAX_BACKOFF)


def record_attempt(
    session: Session,
    delivery_id: int,
    *,
    status_code: int | None,
    error: str | None,
    retry: bool = True,
    now: datetime | None = None,
) -> None:
    """Note how an attempt went: delivered on a 2xx; else retried with backoff until its day is
    over (or at once given up when `retry` is false). A webhook failing WEBHOOK_PAUSE_AFTER times
    in a row over WEBHOOK_PAUSE_SPAN seconds is paused."""
    now = now or utcnow()
    begin_write(session)
    delivery = session.get(WebhookDelivery, delivery_id, with_for_update=True)
    if delivery is None or delivery.status != PENDING:
        session.rollback()
        return
    webhook = session.get(Webhook, delivery.webhook_id, with_for_update=True)
    delivery.response_code = status_code
    delivery.last_error = error[:500] if error else None
    ok = status_code is not None and 200 <= status_code < 300
    if ok:
        delivery.status = DELIVERED
        delivery.next_attempt_at = None
        if webhook is not None:
            webhook.failures = 0
            webhook.failing_since = None
        session.commit()
        return
    if retry and now + timedelta(seconds=backoff(delivery.attempts)) <= delivery.retry_until:
        delivery.next_attempt_at = now + timedelta(seconds=backoff(delivery.attempts))
    else:
        delivery.status = FAILED
        delivery.next_attempt_at = None
    if webhook is not None:
        webhook.failures += 1
        webhook.failing_since = webhook.failing_since or now
        _pause_if_failing(webhook, now)
    session.commit()


def _pause_if_failing(webhook: Webhook, now: datetime) -> None:
    span = timedelta(seconds=float(SETTINGS["WEBHOOK_PAUSE_SPAN"]))
    if (
        webhook.paused_at is None
        and webhook.failures >= int(SETTINGS["WEBHOOK_PAUSE_AFTER"])
        and webhook.failing_since is not None
        and now - webhook.failing_since >= span
    ):
        webhook.paused_at = now
        webhook.paused_reason = (
            f"Paused after {webhook.failures} failed attempts in a row since "
            f"{_iso(webhook.failing_since)}; deliveries wait until it is resumed."
        )


def prune(session: Session, now: datetime, days: int) -> int:
    """Delete delivered and failed deliveries older than `days` (0 keeps them); how many."""
    if days <= 0:
        return 0
    begin_write(session)
    done = session.connection().execute(
        DELIVERIES.delete().where(
            DELIVERIES.c.status != PENDING,
            DELIVERIES.c.created_at < now - timedelta(days=days),
        )
    )
    session.commit()
    return int(done.rowcount or 0)


def pending_count(webhook_id: int) -> int:
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(DELIVERIES)
            .where(and_(DELIVERIES.c.webhook_id == webhook_id, DELIVERIES.c.status == PENDING))
        )
        or 0
    )
