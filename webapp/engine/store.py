"""How a step reads and writes its rows: plain records and a few prepared Core statements.

A step touches one instance, its open tokens and usually one job. Reading them takes two
statements after the lock; writing them is one statement per table, with no ORM unit of work, so a
step costs little more than the round trips it needs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from webapp.engine import tree
from webapp.models import (
    Instance,
    Job,
    MessageSubscription,
    ProcessVersion,
    SignalBroadcast,
    SignalReceipt,
    Token,
)

INSTANCES = Instance.__table__
TOKENS = Token.__table__
JOBS = Job.__table__
SUBSCRIPTIONS = MessageSubscription.__table__
BROADCASTS = SignalBroadcast.__table__
RECEIPTS = SignalReceipt.__table__

OPEN = ("active", "waiting", "failed")


def saved_id(row_id: int | None) -> int:
    """The id of a row the step has inserted; ids are None only before that insert."""
    if row_id is None:
        raise RuntimeError("a row was used before it was inserted")
    return row_id


@dataclass(eq=False)
class InstanceRow:
    """The instance as a step sees it; `finish` writes back what changed."""

    id: int | None
    version_id: int
    process_key: str
    version: int
    partition_id: int | None
    status: str
    input: dict[str, Any]
    vars: dict[str, Any]
    nodes: dict[str, Any]
    business_key: str | None = None
    started_via: str = "api"
    started_by_id: int | None = None
    error: dict[str, Any] | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    ended_at: datetime | None = None
    parent_id: int | None = None
    parent_token_id: int | None = None
    parent_node_id: str | None = None
    parent_step: int | None = None
    call_depth: int = 0


@dataclass(eq=False)
class TokenRow:
    """A token as a step sees it; `parent` is the scope's token object (also before insert)."""

    id: int | None
    node_id: str
    arrived_via: str | None
    status: str
    step: int = 0
    parent_id: int | None = None
    locals: dict[str, Any] | None = None
    saved: tuple = field(default=(), repr=False)
    parent: TokenRow | None = field(default=None, repr=False)

    def snapshot(self) -> tuple:
        kept = copy.deepcopy(self.locals) if self.locals is not None else None
        return (self.node_id, self.arrived_via, self.status, self.step, kept)

    def values(self) -> dict[str, Any]:
        return {
            "node_id": self.node_id,
            "arrived_via": self.arrived_via,
            "status": self.status,
            "step": self.step,
            "locals": self.locals,
        }

    @property
    def changed(self) -> bool:
        return self.snapshot() != self.saved

    @property
    def listener(self) -> bool:
        """A token that only listens for an event sub-process's start; it keeps no scope alive."""
        return tree.is_listener(self.locals)


# What steps change on an existing job.
JOB_STATE = ("status", "due_at", "attempt", "lease_until", "last_error")


@dataclass(eq=False)
class JobRow:
    id: int | None
    instance_id: int
    token_id: int
    node_id: str
    kind: str
    key: str
    actor: str | None
    status: str
    due_at: datetime
    attempt: int
    tool: str | None = None
    inputs: dict[str, Any] | None = None
    max_attempts: int = 1
    backoff: float = 2.0
    timeout: float = 30.0
    lease_until: datetime | None = None
    last_error: dict[str, Any] | None = None
    saved: tuple = field(default=(), repr=False)

    def snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in JOB_STATE)

    @property
    def changed(self) -> bool:
        return self.snapshot() != self.saved


_INSTANCE_COLUMNS = [INSTANCES.c[f.name] for f in fields(InstanceRow)]
_TOKEN_FIELDS = ("id", "node_id", "arrived_via", "status", "step", "parent_id", "locals")
_TOKEN_COLUMNS = [TOKENS.c[name] for name in _TOKEN_FIELDS]
JOB_FIELDS = [f.name for f in fields(JobRow) if f.name != "saved"]
_JOB_COLUMNS = [JOBS.c[name] for name in JOB_FIELDS]


def _update(table: Any, key: str, columns: tuple[str, ...]) -> Any:
    """UPDATE table SET <columns> = :<column> WHERE id = :<key>, built once."""
    values: dict[str, Any] = {name: bindparam(name) for name in columns}
    return update(table).where(table.c.id == bindparam(key)).values(values)


LOCK = (
    select(*_INSTANCE_COLUMNS, ProcessVersion.__table__.c.content_hash)
    .join(ProcessVersion.__table__, ProcessVersion.__table__.c.id == INSTANCES.c.version_id)
    .where(INSTANCES.c.id == bindparam("instance_id"))
    .with_for_update(of=INSTANCES)
)
# Open tokens, with the job asked for when it belongs to one of them (else it is not valid).
TOKENS_AND_JOB = (
    select(*_TOKEN_COLUMNS, *[c.label(f"job_{c.name}") for c in _JOB_COLUMNS])
    .select_from(
        TOKENS.outerjoin(
            JOBS, and_(JOBS.c.token_id == TOKENS.c.id, JOBS.c.id == bindparam("job_id"))
        )
    )
    .where(TOKENS.c.instance_id == bindparam("instance_id"), TOKENS.c.status.in_(OPEN))
    .order_by(TOKENS.c.id)
)
UPDATE_TOKEN = _update(
    TOKENS, "token_id", ("node_id", "arrived_via", "status", "step", "locals", "updated_at")
)
UPDATE_INSTANCE = _update(INSTANCES, "instance_id", ("status", "error", "ended_at", "updated_at"))
UPDATE_INSTANCE_DATA = _update(
    INSTANCES, "instance_id", ("status", "error", "ended_at", "updated_at", "vars", "nodes")
)
UPDATE_JOB = _update(JOBS, "job_id", (*JOB_STATE, "updated_at"))
# Lease a due, pending tool job nobody holds, for one attempt; returns the row when it did.
LEASE_JOB = (
    update(JOBS)
    .where(
        JOBS.c.id == bindparam("job_id"),
        JOBS.c.kind == "tool",
        JOBS.c.status == "pending",
        JOBS.c.due_at <= bindparam("due_by"),
        or_(JOBS.c.lease_until.is_(None), JOBS.c.lease_until <= bindparam("now")),
    )
    .values(
        attempt=JOBS.c.attempt + 1,
        lease_until=bindparam("until"),
        updated_at=bindparam("now"),
    )
    .returning(*_JOB_COLUMNS)
)
INSERT_TOKENS = TOKENS.insert().returning(TOKENS.c.id, sort_by_parameter_order=True)
INSERT_INSTANCE = INSTANCES.insert().returning(INSTANCES.c.id)
INSERT_JOBS = JOBS.insert().returning(JOBS.c.id, sort_by_parameter_order=True)


def lock(conn: Connection, instance_id: int) -> tuple[InstanceRow, str] | None:
    """Lock the instance row (FOR UPDATE; SQLite already holds the write lock) and read it."""
    row = conn.execute(LOCK, {"instance_id": instance_id}).first()
    if row is None:
        return None
    values = row._mapping
    instance = InstanceRow(**{f.name: values[f.name] for f in fields(InstanceRow)})
    return instance, values["content_hash"]


def open_tokens(
    conn: Connection, instance_id: int, job_id: int | None = None
) -> tuple[list[TokenRow], JobRow | None]:
    """The instance's open tokens (in creation order) and the job `job_id` if a token owns it."""
    tokens: list[TokenRow] = []
    job = None
    for row in conn.execute(TOKENS_AND_JOB, {"instance_id": instance_id, "job_id": job_id or 0}):
        values = row._mapping
        token = TokenRow(**{name: values[name] for name in _TOKEN_FIELDS})
        token.saved = token.snapshot()
        tokens.append(token)
        if values["job_id"] is not None:
            job = JobRow(**{c.name: values[f"job_{c.name}"] for c in _JOB_COLUMNS})
            job.saved = job.snapshot()
    by_id = {token.id: token for token in tokens}
    for token in tokens:
        if token.parent_id is not None:
            token.parent = by_id.get(token.parent_id)
    return tokens, job


def jobs_of(conn: Connection, instance_id: int, job_ids: list[int]) -> dict[int, JobRow]:
    """The instance's jobs among `job_ids`, by id (read under the step's lock)."""
    rows = conn.execute(
        select(*_JOB_COLUMNS).where(JOBS.c.instance_id == instance_id, JOBS.c.id.in_(job_ids))
    )
    return {row.id: job_row(row._mapping) for row in rows}


def values_of(
    record: Any, only: tuple[str, ...] | None = None, exclude: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A record's fields (all, or `only` these) as column values."""
    names = only or [f.name for f in fields(record) if f.name not in exclude]
    return {name: getattr(record, name) for name in names}


def job_row(values: Any) -> JobRow:
    job = JobRow(**{c.name: values[c.name] for c in _JOB_COLUMNS})
    job.saved = job.snapshot()
    return job


# --- signal broadcasts ------------------------------------------------------------------------


def high_water(conn: Connection) -> int:
    """The largest subscription id now: the last subscription a broadcast made now covers."""
    return int(conn.scalar(select(func.max(SUBSCRIPTIONS.c.id))) or 0)


def insert_broadcast(
    conn: Connection,
    *,
    name: str,
    payload: Any,
    partition_id: int | None,
    now: datetime,
    instance_id: int | None = None,
    node_id: str | None = None,
    actor: str | None = None,
    covers: int | None = None,
    idempotency: tuple[str, str] | None = None,
) -> int:
    """Write a pending broadcast (with its sender's idempotency key and body digest, if any),
    covering the subscriptions up to `covers` (default: all now); its id."""
    key, digest = idempotency or (None, None)
    values = {
        "name": name,
        "payload": payload,
        "partition_id": partition_id,
        "instance_id": instance_id,
        "node_id": node_id,
        "actor": actor,
        "idempotency_key": key,
        "request_hash": digest,
        "status": "pending",
        "high_water": high_water(conn) if covers is None else covers,
        "delivered": 0,
        "started": 0,
        "attempt": 0,
        "created_at": now,
        "updated_at": now,
    }
    return int(conn.execute(insert(BROADCASTS).returning(BROADCASTS.c.id), values).scalar_one())


def insert_receipt(conn: Connection, broadcast_id: int, instance_id: int, now: datetime) -> None:
    """Record that the broadcast reached the instance: its batch skips the instance."""
    conn.execute(
        insert(RECEIPTS),
        {
            "broadcast_id": broadcast_id,
            "instance_id": instance_id,
            "started": False,
            "created_at": now,
        },
    )
