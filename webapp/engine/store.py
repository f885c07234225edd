"""How a step reads and writes its rows: plain records and a few prepared Core statements.

A step touches one instance, its open tokens and usually one job. Reading them takes two
statements after the lock; writing them is one statement per table, with no ORM unit of work, so a
step costs little more than the round trips it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, delete, func, insert, or_, select, update
from sqlalchemy.engine import Connection

from webapp.engine import tree
from webapp.models import (
    Instance,
    Job,
    MessageSubscription,
    ProcessVersion,
    SignalBroadcast,
    SignalReceipt,
    Task,
    TaskCandidate,
    Token,
)
from webapp.models.statuses import (
    LIVE_TOKEN,
    OPEN_TOKEN,
    UNFINISHED_INSTANCE,
    BroadcastStatus,
    JobStatus,
    TaskStatus,
)

INSTANCES = Instance.__table__
TOKENS = Token.__table__
JOBS = Job.__table__
SUBSCRIPTIONS = MessageSubscription.__table__
BROADCASTS = SignalBroadcast.__table__
RECEIPTS = SignalReceipt.__table__
TASKS = Task.__table__
CANDIDATES = TaskCandidate.__table__


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
    # Set while an operator has it suspended: steps then leave their work waiting.
    suspended_at: datetime | None = None


@dataclass(eq=False)
class TokenRow:
    """A token as a step sees it; `parent` is the scope's token object (also before insert).

    `locals` is replaced, never changed in place: the saved state keeps the loaded object and a
    token whose `locals` is another object is written again (no copy, no deep comparison).
    """

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
        return (self.node_id, self.arrived_via, self.status, self.step, self.locals)

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
        saved = self.saved
        return (
            not saved
            or saved[4] is not self.locals
            or saved[:4] != (self.node_id, self.arrived_via, self.status, self.step)
        )

    @property
    def listener(self) -> bool:
        """A token that only listens for an event sub-process's start; it keeps no scope alive."""
        return tree.is_listener(self.locals)


# What steps change on an existing job (`wake_at` follows `status` and `due_at`: `hold`).
JOB_STATE = ("status", "due_at", "attempt", "lease_until", "last_error", "wake_at")


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
    wake_at: datetime | None = None
    saved: tuple = field(default=(), repr=False)

    def snapshot(self) -> tuple:
        return tuple(getattr(self, name) for name in JOB_STATE)

    @property
    def changed(self) -> bool:
        return self.snapshot() != self.saved

    def hold(self, now: datetime, waiting: int | None = None) -> None:
        """A pending job due later waits in the database for a worker's clock (`wake_at`);
        any other is delivered after the commit, or not at all. A job of the suspended
        instance `waiting` has no wake time: resuming sends it."""
        due_later = self.status == JobStatus.PENDING and self.due_at > now
        self.wake_at = self.due_at if due_later and not self.waits(waiting) else None

    def waits(self, suspended: int | None) -> bool:
        """Whether this job waits for the resume of the suspended instance `suspended`
        (cancelling a call is never held back)."""
        return suspended is not None and self.instance_id == suspended and self.kind != "cancel"

    @property
    def held(self) -> bool:
        """Whether the clock delivers it (webapp/engine/clock.py), not the step's commit."""
        return self.wake_at is not None


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
# The same for the instance of a task, found in the same statement (a task never changes instance).
LOCK_OF_TASK = (
    select(*_INSTANCE_COLUMNS, ProcessVersion.__table__.c.content_hash)
    .join(ProcessVersion.__table__, ProcessVersion.__table__.c.id == INSTANCES.c.version_id)
    .where(
        INSTANCES.c.id
        == select(TASKS.c.instance_id).where(TASKS.c.id == bindparam("task_id")).scalar_subquery()
    )
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
    .where(TOKENS.c.instance_id == bindparam("instance_id"), TOKENS.c.status.in_(OPEN_TOKEN))
    .order_by(TOKENS.c.id)
)


def _with_ancestors(seed: Any) -> Any:
    """Open tokens picked by `seed` (a condition on TOKENS) and their open enclosing scopes,
    each joined to the jobs among `job_ids` it owns, in creation order."""
    start = select(TOKENS.c.id, TOKENS.c.parent_id).where(
        TOKENS.c.instance_id == bindparam("instance_id"), TOKENS.c.status.in_(OPEN_TOKEN), seed
    )
    chain = start.cte("chain", recursive=True)
    scope = TOKENS.alias("scope")
    chain = chain.union(
        select(scope.c.id, scope.c.parent_id).where(
            scope.c.id == chain.c.parent_id, scope.c.status.in_(OPEN_TOKEN)
        )
    )
    return (
        select(*_TOKEN_COLUMNS, *[c.label(f"job_{c.name}") for c in _JOB_COLUMNS])
        .select_from(
            TOKENS.join(chain, chain.c.id == TOKENS.c.id).outerjoin(
                JOBS,
                and_(
                    JOBS.c.token_id == TOKENS.c.id,
                    JOBS.c.id.in_(bindparam("job_ids", expanding=True)),
                ),
            )
        )
        .order_by(TOKENS.c.id)
    )


# The open tokens owning the jobs `job_ids` (with those jobs) and the scopes around them.
JOB_TOKENS = _with_ancestors(
    TOKENS.c.id.in_(
        select(JOBS.c.token_id).where(JOBS.c.id.in_(bindparam("job_ids", expanding=True)))
    )
)
# The open token `token_id` and the scopes around it.
TOKEN_CHAIN = _with_ancestors(TOKENS.c.id == bindparam("token_id"))
# The open tokens directly inside one scope (a parent of NULL: the process level).
_INSIDE = (TOKENS.c.instance_id == bindparam("instance_id"), TOKENS.c.status.in_(OPEN_TOKEN))
CHILDREN = (
    select(*_TOKEN_COLUMNS)
    .where(*_INSIDE, TOKENS.c.parent_id == bindparam("parent_id"))
    .order_by(TOKENS.c.id)
)
TOP_LEVEL = select(*_TOKEN_COLUMNS).where(*_INSIDE, TOKENS.c.parent_id.is_(None))
TOP_LEVEL = TOP_LEVEL.order_by(TOKENS.c.id)
# How many saved tokens directly inside a scope are live, leaving out the step's own.
LIVE_CHILDREN = select(func.count()).where(
    TOKENS.c.parent_id == bindparam("parent_id"),
    TOKENS.c.status.in_(LIVE_TOKEN),
    TOKENS.c.id.not_in(bindparam("loaded", expanding=True)),
)

UPDATE_TOKEN = _update(
    TOKENS, "token_id", ("node_id", "arrived_via", "status", "step", "locals", "updated_at")
)
UPDATE_INSTANCE = _update(INSTANCES, "instance_id", ("status", "error", "ended_at", "updated_at"))
UPDATE_INSTANCE_DATA = _update(
    INSTANCES, "instance_id", ("status", "error", "ended_at", "updated_at", "vars", "nodes")
)
UPDATE_JOB = _update(JOBS, "job_id", (*JOB_STATE, "updated_at"))
_LEASABLE = (
    JOBS.c.kind == "tool",
    JOBS.c.status == JobStatus.PENDING,
    JOBS.c.due_at <= bindparam("due_by"),
    or_(JOBS.c.lease_until.is_(None), JOBS.c.lease_until <= bindparam("now")),
    # A suspended instance starts no tool call (resuming sends its jobs again).
    ~select(INSTANCES.c.id)
    .where(INSTANCES.c.id == JOBS.c.instance_id, INSTANCES.c.suspended_at.is_not(None))
    .exists(),
)
_LEASE = {
    "attempt": JOBS.c.attempt + 1,
    "lease_until": bindparam("until"),
    "updated_at": bindparam("now"),
}
# Lease a due, pending tool job nobody holds, for one attempt; returns the row when it did.
LEASE_JOB = (
    update(JOBS)
    .where(JOBS.c.id == bindparam("job_id"), *_LEASABLE)
    .values(_LEASE)
    .returning(*_JOB_COLUMNS)
)
# The same for several jobs with the same lease (the quick parallel calls of one step).
LEASE_JOBS = (
    update(JOBS)
    .where(JOBS.c.id.in_(bindparam("job_ids", expanding=True)), *_LEASABLE)
    .values(_LEASE)
    .returning(*_JOB_COLUMNS)
)
INSERT_TOKENS = TOKENS.insert().returning(TOKENS.c.id, sort_by_parameter_order=True)
INSERT_INSTANCE = INSTANCES.insert().returning(INSTANCES.c.id)
INSERT_JOBS = JOBS.insert().returning(JOBS.c.id, sort_by_parameter_order=True)
# SQLite: the same in one statement (SQLAlchemy would insert row by row to keep the order).
_SQLITE_INSERTS = {
    id(INSERT_TOKENS): TOKENS.insert().returning(TOKENS.c.id),
    id(INSERT_JOBS): JOBS.insert().returning(JOBS.c.id),
}


def insert_ids(conn: Connection, statement: Any, rows: list[dict[str, Any]]) -> list[int]:
    """Insert `rows` with INSERT_TOKENS or INSERT_JOBS; their ids, in the order of `rows`.

    SQLite returns a RETURNING's rows in no set order, so SQLAlchemy inserts one row per
    statement when asked to keep it. Instead, one multi-row INSERT: while the step holds the
    write lock, SQLite gives its rows consecutive rowids in the order of the VALUES, so the ids
    sorted are the rows' (checked to be consecutive; anything else fails the step).
    """
    if conn.dialect.name != "sqlite" or len(rows) < 2:
        return list(conn.execute(statement, rows).scalars().all())
    ids = sorted(conn.execute(_SQLITE_INSERTS[id(statement)], rows).scalars().all())
    if len(ids) != len(rows) or ids[-1] - ids[0] != len(rows) - 1:
        raise RuntimeError(f"SQLite gave {len(rows)} inserted rows the ids {ids}")
    return ids


def lock(conn: Connection, instance_id: int) -> tuple[InstanceRow, str] | None:
    """Lock the instance row (FOR UPDATE; SQLite already holds the write lock) and read it."""
    return _locked(conn.execute(LOCK, {"instance_id": instance_id}).first())


def lock_of_task(conn: Connection, task_id: int) -> tuple[InstanceRow, str] | None:
    """`lock` for the instance of task `task_id`; None when there is no such task."""
    return _locked(conn.execute(LOCK_OF_TASK, {"task_id": task_id}).first())


def _locked(row: Any) -> tuple[InstanceRow, str] | None:
    if row is None:
        return None
    values = row._mapping
    instance = InstanceRow(**{f.name: values[f.name] for f in fields(InstanceRow)})
    return instance, values["content_hash"]


def open_tokens(
    conn: Connection, instance_id: int, job_id: int | None = None
) -> tuple[list[TokenRow], JobRow | None]:
    """The instance's open tokens (in creation order) and the job `job_id` if a token owns it."""
    rows = conn.execute(TOKENS_AND_JOB, {"instance_id": instance_id, "job_id": job_id or 0})
    tokens, jobs = _tokens_and_jobs(rows)
    return tokens, jobs.get(job_id) if job_id else None


def _tokens_and_jobs(rows: Any) -> tuple[list[TokenRow], dict[int, JobRow]]:
    """Tokens and jobs from rows of a token joined to its jobs (a token once per job), each
    token linked to its scope's token when that is among them."""
    tokens, jobs = unlinked(rows)
    by_id = {token.id: token for token in tokens}
    for token in tokens:
        if token.parent_id is not None:
            token.parent = by_id.get(token.parent_id)
    return tokens, jobs


def unlinked(rows: Any) -> tuple[list[TokenRow], dict[int, JobRow]]:
    """Tokens and jobs from rows of a token (joined to its jobs, if any), scopes not linked."""
    tokens: list[TokenRow] = []
    jobs: dict[int, JobRow] = {}
    for row in rows:
        values = row._mapping
        if not tokens or tokens[-1].id != values["id"]:
            token = TokenRow(**{name: values[name] for name in _TOKEN_FIELDS})
            token.saved = token.snapshot()
            tokens.append(token)
        if values.get("job_id") is not None:
            job = JobRow(**{c.name: values[f"job_{c.name}"] for c in _JOB_COLUMNS})
            job.saved = job.snapshot()
            jobs[saved_id(job.id)] = job
    return tokens, jobs


def job_tokens(
    conn: Connection, instance_id: int, job_ids: list[int]
) -> tuple[list[TokenRow], dict[int, JobRow]]:
    """The open tokens owning the jobs `job_ids` and the scopes around them, unlinked, and by
    id the jobs among `job_ids` that open tokens own (one statement)."""
    rows = conn.execute(JOB_TOKENS, {"instance_id": instance_id, "job_ids": job_ids})
    return unlinked(rows)


def token_chain(conn: Connection, instance_id: int, token_id: int) -> list[TokenRow]:
    """The open token `token_id` (none if it is closed) and the scopes around it, unlinked."""
    params = {"instance_id": instance_id, "token_id": token_id, "job_ids": []}
    return unlinked(conn.execute(TOKEN_CHAIN, params))[0]


def children(conn: Connection, instance_id: int, parent_id: int | None) -> list[TokenRow]:
    """The open tokens directly inside the scope `parent_id` (None: the process level),
    unlinked, in creation order."""
    if parent_id is None:
        return unlinked(conn.execute(TOP_LEVEL, {"instance_id": instance_id}))[0]
    params = {"instance_id": instance_id, "parent_id": parent_id}
    return unlinked(conn.execute(CHILDREN, params))[0]


def live_children(conn: Connection, parent_id: int, loaded: list[int]) -> int:
    """How many saved tokens directly inside the scope `parent_id` are live, not counting the
    tokens `loaded` (a step counts those from memory)."""
    params = {"parent_id": parent_id, "loaded": loaded}
    return int(conn.execute(LIVE_CHILDREN, params).scalar_one())


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
        "status": BroadcastStatus.PENDING,
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


# --- a step's write-out -----------------------------------------------------------------------


def save_instance(
    conn: Connection, instance: InstanceRow, now: datetime, *, data_changed: bool
) -> None:
    """Insert a new instance, or update its status (with `vars` and `nodes` when they changed)."""
    instance.updated_at = now
    values = {
        "instance_id": instance.id,
        "status": instance.status,
        "error": instance.error,
        "ended_at": instance.ended_at,
        "updated_at": now,
    }
    if data_changed or instance.id is None:
        values.update(vars=instance.vars, nodes=instance.nodes)
    if instance.id is None:
        row = values_of(instance, exclude=("id",))
        instance.id = conn.execute(INSERT_INSTANCE, row).scalar_one()
    elif data_changed:
        conn.execute(UPDATE_INSTANCE_DATA, values)
    else:
        conn.execute(UPDATE_INSTANCE, values)


def save_tokens(conn: Connection, tokens: list[TokenRow], instance_id: int, now: datetime) -> None:
    """Update the changed tokens and insert the new ones (each scope before the tokens in it)."""
    changed = [
        {"token_id": t.id, "updated_at": now, **t.values()}
        for t in tokens
        if t.id is not None and t.changed
    ]
    if changed:
        conn.execute(UPDATE_TOKEN, changed)
    stamp = {"instance_id": instance_id, "created_at": now, "updated_at": now}
    new = [t for t in tokens if t.id is None]
    while new:
        # A scope's token is inserted before the tokens inside it, which need its id.
        ready = [t for t in new if t.parent is None or t.parent.id is not None]
        rows = [
            {**stamp, **t.values(), "parent_id": t.parent.id if t.parent else None} for t in ready
        ]
        ids = insert_ids(conn, INSERT_TOKENS, rows)
        for token, token_id in zip(ready, ids, strict=True):
            token.id = token_id
            token.parent_id = token.parent.id if token.parent else None
        new = [t for t in new if t.id is None]
    for token in tokens:
        token.saved = token.snapshot()


def withdraw(
    conn: Connection,
    instance_id: int,
    closed: list[tuple[TokenRow, tuple[str, ...] | None]],
    held: list[JobRow],
    now: datetime,
) -> list[int]:
    """Cancel the saved jobs, subscriptions and tasks of closed tokens (only at the given nodes,
    if any; `held` are the step's jobs, changed in memory); the called children to cancel."""
    whole = sorted({saved_id(t.id) for t, nodes in closed if nodes is None})
    partial = [(saved_id(t.id), nodes) for t, nodes in closed if nodes]
    for job in held:  # the jobs the step holds are saved from memory, not by the SQL
        closing = job.token_id in whole or any(
            job.token_id == token_id and job.node_id in nodes for token_id, nodes in partial
        )
        if closing and job.status == JobStatus.PENDING:
            job.status = JobStatus.CANCELLED
            job.lease_until = None
    tracked = {job.id for job in held}
    pending = (JOBS.c.status == JobStatus.PENDING, JOBS.c.id.not_in(tracked or [0]))
    cancel = {"status": JobStatus.CANCELLED, "lease_until": None, "updated_at": now}
    for token_id, nodes in partial:
        conn.execute(
            update(JOBS)
            .where(JOBS.c.token_id == token_id, JOBS.c.node_id.in_(nodes), *pending)
            .values(cancel)
        )
        conn.execute(
            delete(SUBSCRIPTIONS).where(
                SUBSCRIPTIONS.c.token_id == token_id, SUBSCRIPTIONS.c.node_id.in_(nodes)
            )
        )
    if not whole:
        return []
    conn.execute(update(JOBS).where(JOBS.c.token_id.in_(whole), *pending).values(cancel))
    conn.execute(delete(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.token_id.in_(whole)))
    conn.execute(
        update(TASKS)
        .where(TASKS.c.token_id.in_(whole), TASKS.c.status == TaskStatus.OPEN)
        .values(status=TaskStatus.CANCELLED)
    )
    return list(
        conn.execute(
            select(INSTANCES.c.id).where(
                INSTANCES.c.parent_id == instance_id,
                INSTANCES.c.parent_token_id.in_(whole),
                INSTANCES.c.status.in_(UNFINISHED_INSTANCE),
            )
        ).scalars()
    )


def insert_jobs(
    conn: Connection,
    instance_id: int | None,
    new: list[tuple[TokenRow | None, dict[str, Any]]],
    *,
    actor: str | None,
    now: datetime,
    waiting: int | None = None,
) -> list[JobRow]:
    """Insert the step's new jobs: a token's at its node (keyed by token, node and step), or a
    hand-over job whose instance, node and key are given (`waiting`: see `JobRow.hold`)."""
    jobs = []
    for token, options in new:
        if token is None:
            values = {"token_id": None, "actor": actor, **options}
            jobs.append(JobRow(id=None, status=JobStatus.PENDING, attempt=0, **values))
            continue
        node_id = options.pop("node_id", None) or token.node_id
        jobs.append(
            JobRow(
                id=None,
                instance_id=saved_id(instance_id),
                token_id=saved_id(token.id),
                node_id=node_id,
                key=f"{token.id}:{node_id}:{token.step}",
                actor=actor,
                status=JobStatus.PENDING,
                attempt=0,
                **options,
            )
        )
    for job in jobs:
        job.hold(now, waiting)
    rows = [
        {**values_of(job, exclude=("id", "saved")), "created_at": now, "updated_at": now}
        for job in jobs
    ]
    ids = insert_ids(conn, INSERT_JOBS, rows)
    for job, job_id in zip(jobs, ids, strict=True):
        job.id = job_id
        job.saved = job.snapshot()
    return jobs


def save_jobs(
    conn: Connection, jobs: list[JobRow], now: datetime, waiting: int | None = None
) -> None:
    """Write the changed state of the jobs the step holds (`waiting`: see `JobRow.hold`)."""
    changed = []
    for job in jobs:
        if job.changed:
            job.hold(now, waiting)
            changed.append({"job_id": job.id, "updated_at": now, **values_of(job, JOB_STATE)})
    if changed:
        conn.execute(UPDATE_JOB, changed)
    for job in jobs:
        job.saved = job.snapshot()


def insert_waits(
    conn: Connection,
    instance: InstanceRow,
    tasks: list[tuple[TokenRow, dict[str, Any]]],
    subscriptions: list[tuple[TokenRow, str, str, str, str, bool | None]],
    now: datetime,
) -> None:
    """Insert the step's new tasks (with their further candidates) and subscriptions."""
    stamp = {"instance_id": instance.id, "created_at": now}
    if tasks:
        offers = {token.id: values.pop("candidates", None) for token, values in tasks}
        rows = [
            {**stamp, "token_id": token.id, "status": TaskStatus.OPEN, **values}
            for token, values in tasks
        ]
        for row in rows:
            row.setdefault("partition_id", instance.partition_id)
        conn.execute(TASKS.insert(), rows)
        _insert_candidates(conn, {token: found for token, found in offers.items() if found})
    if subscriptions:
        rows = [
            {
                **stamp,
                "token_id": t.id,
                "node_id": node,
                "name": n,
                "correlation_key": k,
                "kind": kind,
                "satisfied": satisfied,
            }
            for t, n, k, node, kind, satisfied in subscriptions
        ]
        conn.execute(SUBSCRIPTIONS.insert(), rows)


def _insert_candidates(conn: Connection, offers: dict[Any, list[tuple[str, int, str]]]) -> None:
    """The further roles and users of the tasks just inserted (found by their tokens)."""
    if not offers:
        return
    task_ids: dict[Any, int] = dict(
        conn.execute(
            select(TASKS.c.token_id, TASKS.c.id).where(
                TASKS.c.token_id.in_(list(offers)), TASKS.c.status == TaskStatus.OPEN
            )
        ).all()
    )
    rows = [
        {
            "task_id": task_ids[token],
            "role_id": found_id if kind == "role" else None,
            "user_id": found_id if kind == "user" else None,
        }
        for token, found in offers.items()
        for kind, found_id, _ in found
    ]
    conn.execute(CANDIDATES.insert(), rows)
