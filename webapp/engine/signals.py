"""Signal broadcasts: how a thrown signal reaches every waiting instance and signal start.

A throw (`signal_events`) or the API records a broadcast row (with a receipt for the thrower when
its own catchers caught it); after commit a worker plans it into batches of the other waiting
instances and signal-started processes. Each of those instances receives it in a step of its
own, which writes a receipt (unique per broadcast and instance): a batch run again after its
worker died skips the instances that have it. Only subscriptions that existed when the broadcast
was made (ids up to its `high_water`) receive it, so a non-interrupting event that subscribes
again after firing waits for the next broadcast. Caller and called child are different
instances: a caller's resume step and a child's cancel step first receive the broadcasts still
on their way (`catching.receive_missed`), so neither a call nor a child ends before its catchers
ran.

Scope: a broadcast reaches the instances of its partition only (no partition: the instances in
no partition), and starts processes of that partition or of none, in its partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from rq.job import Job as RQJob
from sqlalchemy import ColumnElement, func, insert, or_, select, true, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webapp.engine import catching, definitions, held, interpreter, steps, store
from webapp.engine.catching import KIND, same_partition
from webapp.engine.dispatch import JobRef
from webapp.engine.runtime import StepResult
from webapp.engine.store import BROADCASTS, INSTANCES, RECEIPTS, SUBSCRIPTIONS
from webapp.engine.suspended_versions import check_startable
from webapp.infra.database import begin_write
from webapp.models import (
    EventStart,
    Process,
    ProcessVersion,
    SignalBatch,
    User,
)
from webapp.models.statuses import BatchStatus, BroadcastStatus, HeldKind

BATCHES = SignalBatch.__table__
MAX_NAME = 200


def record(
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
) -> JobRef:
    """Write a pending broadcast (with its sender's idempotency key and body digest, if any);
    the returned ref, enqueued after commit, has a worker plan it."""
    broadcast_id = store.insert_broadcast(
        conn,
        name=name,
        payload=payload,
        partition_id=partition_id,
        now=now,
        instance_id=instance_id,
        node_id=node_id,
        actor=actor,
        covers=covers,
        idempotency=idempotency,
    )
    return JobRef(broadcast_id, 0, "signal", now, 0)


# --- planning a broadcast ---------------------------------------------------------------------


def _others(thrower: int | None) -> Any:
    """Not the throwing instance: its own catchers received the signal in the throwing step."""
    return true() if thrower is None else SUBSCRIPTIONS.c.instance_id != thrower


def _not_reached(broadcast_id: int) -> Any:
    """No receipt yet: a caller's resume may have handed the instance the broadcast already."""
    return ~(
        select(RECEIPTS.c.id)
        .where(
            RECEIPTS.c.broadcast_id == broadcast_id,
            RECEIPTS.c.instance_id == SUBSCRIPTIONS.c.instance_id,
        )
        .exists()
    )


def claim_broadcast(session: Session, broadcast_id: int, now: datetime) -> int | None:
    """Count an attempt at planning a pending broadcast (so a sweep after a crash sends the
    next attempt); None when it is no longer pending."""
    begin_write(session)
    conn = session.connection()
    row = conn.execute(
        select(BROADCASTS.c.status, BROADCASTS.c.attempt)
        .where(BROADCASTS.c.id == broadcast_id)
        .with_for_update()
    ).first()
    if row is None or row.status != BroadcastStatus.PENDING:
        return None
    conn.execute(
        update(BROADCASTS)
        .where(BROADCASTS.c.id == broadcast_id)
        .values(attempt=row.attempt + 1, updated_at=now)
    )
    return row.attempt + 1


def plan(session: Session, broadcast_id: int, batch_size: int, now: datetime) -> list[JobRef]:
    """Split a pending broadcast into batches of the instances waiting for it (and one batch of
    signal starts), in one transaction; the refs to enqueue after commit."""
    begin_write(session)
    conn = session.connection()
    broadcast = conn.execute(
        select(BROADCASTS).where(BROADCASTS.c.id == broadcast_id).with_for_update()
    ).first()
    if broadcast is None or broadcast.status != BroadcastStatus.PENDING:
        return []
    targets = list(
        conn.scalars(
            select(SUBSCRIPTIONS.c.instance_id)
            .join(INSTANCES, INSTANCES.c.id == SUBSCRIPTIONS.c.instance_id)
            .where(
                SUBSCRIPTIONS.c.kind == KIND,
                SUBSCRIPTIONS.c.name == broadcast.name,
                SUBSCRIPTIONS.c.id <= broadcast.high_water,
                same_partition(INSTANCES.c.partition_id, broadcast.partition_id),
                _others(broadcast.instance_id),
                _not_reached(broadcast_id),
            )
            .distinct()
            .order_by(SUBSCRIPTIONS.c.instance_id)
        )
    )
    # Receipts written before planning: the thrower's (its own catchers), and those of callers
    # whose resume handed them the signal.
    reached = int(
        conn.scalar(
            select(func.count())
            .select_from(RECEIPTS)
            .where(RECEIPTS.c.broadcast_id == broadcast_id)
        )
        or 0
    )
    stamp = {"broadcast_id": broadcast_id, "status": BatchStatus.PENDING, "attempt": 0}
    stamp.update(created_at=now, updated_at=now)
    batches = []
    after = 0
    for first in range(0, len(targets), batch_size):
        chunk = targets[first : first + batch_size]
        batches.append({**stamp, "kind": "deliver", "after": after, "upto": chunk[-1]})
        batches[-1]["size"] = len(chunk)
        after = chunk[-1]
    if starts(conn, broadcast.name, broadcast.partition_id):
        batches.append({**stamp, "kind": "start", "after": 0, "upto": 0, "size": 0})
    done = {} if batches else {"status": BroadcastStatus.DONE, "finished_at": now}
    conn.execute(
        update(BROADCASTS)
        .where(BROADCASTS.c.id == broadcast_id)
        .values(
            {
                "status": BroadcastStatus.RUNNING,
                "total": len(targets) + reached,
                "delivered": reached,
                "updated_at": now,
                **done,
            }
        )
    )
    if not batches:
        return []
    ids = conn.execute(insert(BATCHES).returning(BATCHES.c.id), batches).scalars().all()
    return [JobRef(batch_id, 0, "signal_batch", now, 0) for batch_id in ids]


def starts(conn: Connection, name: str, partition_id: int | None) -> list[Any]:
    """Signal starts of that name in the latest versions of processes in the partition or none."""
    events = EventStart.__table__
    processes = Process.__table__
    visible: ColumnElement[bool] = processes.c.partition_id.is_(None)
    if partition_id is not None:
        visible = or_(visible, processes.c.partition_id == partition_id)
    return list(
        conn.execute(
            select(events.c.process_id, events.c.version_id, events.c.node_id)
            .join(processes, processes.c.id == events.c.process_id)
            .where(events.c.event == KIND, events.c.name == name, visible)
            .order_by(events.c.process_id, events.c.id)
        ).all()
    )


# --- batches ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Batch:
    """A claimed batch with what its steps need from the broadcast."""

    id: int
    attempt: int
    kind: str
    after: int
    upto: int
    broadcast_id: int
    name: str
    payload: Any
    partition_id: int | None
    high_water: int
    actor: str | None
    thrower: int | None


def claim_batch(session: Session, batch_id: int, now: datetime, lease: float) -> Batch | None:
    """Lease a pending batch for this worker; None when it is done or another worker holds it."""
    begin_write(session)
    conn = session.connection()
    row = conn.execute(select(BATCHES).where(BATCHES.c.id == batch_id).with_for_update()).first()
    if row is None or row.status != BatchStatus.PENDING:
        return None
    if row.lease_until is not None and row.lease_until > now:
        return None
    attempt = row.attempt + 1
    conn.execute(
        update(BATCHES)
        .where(BATCHES.c.id == batch_id)
        .values(attempt=attempt, lease_until=now + timedelta(seconds=lease), updated_at=now)
    )
    broadcast = conn.execute(select(BROADCASTS).where(BROADCASTS.c.id == row.broadcast_id)).one()
    return Batch(
        id=batch_id,
        attempt=attempt,
        kind=row.kind,
        after=row.after,
        upto=row.upto,
        broadcast_id=broadcast.id,
        name=broadcast.name,
        payload=broadcast.payload,
        partition_id=broadcast.partition_id,
        high_water=broadcast.high_water,
        actor=broadcast.actor,
        thrower=broadcast.instance_id,
    )


def batch_instances(session: Session, batch: Batch) -> list[int]:
    """The batch's instances that still hold a subscription the broadcast covers."""
    ids = list(
        session.scalars(
            select(SUBSCRIPTIONS.c.instance_id)
            .join(INSTANCES, INSTANCES.c.id == SUBSCRIPTIONS.c.instance_id)
            .where(
                SUBSCRIPTIONS.c.kind == KIND,
                SUBSCRIPTIONS.c.name == batch.name,
                SUBSCRIPTIONS.c.id <= batch.high_water,
                SUBSCRIPTIONS.c.instance_id > batch.after,
                SUBSCRIPTIONS.c.instance_id <= batch.upto,
                same_partition(INSTANCES.c.partition_id, batch.partition_id),
                _others(batch.thrower),
                _not_reached(batch.broadcast_id),
            )
            .distinct()
            .order_by(SUBSCRIPTIONS.c.instance_id)
        )
    )
    session.rollback()
    return ids


def heartbeat(session: Session, batch: Batch, now: datetime, lease: float) -> bool:
    """Extend the lease and publish progress; False when the batch is no longer this worker's
    (its lease ran out and another attempt took it)."""
    begin_write(session)
    conn = session.connection()
    kept = conn.execute(
        update(BATCHES)
        .where(
            BATCHES.c.id == batch.id,
            BATCHES.c.attempt == batch.attempt,
            BATCHES.c.status == BatchStatus.PENDING,
        )
        .values(lease_until=now + timedelta(seconds=lease), updated_at=now)
    ).rowcount
    _progress(conn, batch.broadcast_id, now)
    return bool(kept)


def finish_batch(session: Session, batch: Batch, now: datetime) -> None:
    """Mark the batch done and update the broadcast's progress; the last batch ends it."""
    begin_write(session)
    conn = session.connection()
    conn.execute(
        update(BATCHES)
        .where(BATCHES.c.id == batch.id, BATCHES.c.status == BatchStatus.PENDING)
        .values(status=BatchStatus.DONE, lease_until=None, updated_at=now)
    )
    # The broadcast's row lock comes first, so of two last batches the later one sees both done.
    _progress(conn, batch.broadcast_id, now)
    left = conn.scalar(
        select(func.count())
        .select_from(BATCHES)
        .where(
            BATCHES.c.broadcast_id == batch.broadcast_id, BATCHES.c.status == BatchStatus.PENDING
        )
    )
    if not left:
        conn.execute(
            update(BROADCASTS)
            .where(
                BROADCASTS.c.id == batch.broadcast_id,
                BROADCASTS.c.status == BroadcastStatus.RUNNING,
            )
            .values(status=BroadcastStatus.DONE, finished_at=now)
        )


def _progress(conn: Connection, broadcast_id: int, now: datetime) -> None:
    counted = conn.execute(
        select(RECEIPTS.c.started, func.count())
        .where(RECEIPTS.c.broadcast_id == broadcast_id)
        .group_by(RECEIPTS.c.started)
    ).all()
    by_kind = {bool(started): count for started, count in counted}
    conn.execute(
        update(BROADCASTS)
        .where(BROADCASTS.c.id == broadcast_id)
        .values(delivered=by_kind.get(False, 0), started=by_kind.get(True, 0), updated_at=now)
    )


# --- one instance's step ----------------------------------------------------------------------


def deliver(session: Session, batch: Batch, instance_id: int, now: datetime) -> StepResult:
    """The broadcast reaches one instance: every token holding a covered subscription fires,
    in one step that also writes the receipt; an instance that has it already is skipped."""
    step, _ = steps.open_step(session, instance_id, now)
    conn = step.conn
    seen = conn.scalar(
        select(RECEIPTS.c.id).where(
            RECEIPTS.c.broadcast_id == batch.broadcast_id, RECEIPTS.c.instance_id == instance_id
        )
    )
    if (
        seen is not None
        or instance_id == batch.thrower
        or step.instance.partition_id != batch.partition_id
    ):
        return steps.dropped(
            step, "the instance has this broadcast, threw it, or is not in its partition"
        )
    if steps.suspended(step):
        return _keep_for_suspended(step, batch, instance_id, now)
    woken = catching.deliver_saved(
        step, batch.broadcast_id, batch.name, batch.payload, batch.actor, batch.high_water
    )
    if not woken:
        return steps.dropped(step, "no token waits for this signal")
    step.starter = steps.starter_of(step)
    interpreter.run(step)
    result = step.finish()
    store.insert_receipt(conn, batch.broadcast_id, instance_id, now)
    return result


def _keep_for_suspended(step: Any, batch: Batch, instance_id: int, now: datetime) -> StepResult:
    """A suspended instance with a covered subscription keeps the broadcast for its resume, with
    the receipt written now (it counts as reached, and no later delivery hands it over again)."""
    covered = step.conn.execute(
        select(SUBSCRIPTIONS.c.id)
        .where(
            SUBSCRIPTIONS.c.instance_id == instance_id,
            SUBSCRIPTIONS.c.kind == KIND,
            SUBSCRIPTIONS.c.name == batch.name,
            SUBSCRIPTIONS.c.id <= batch.high_water,
        )
        .limit(1)
    ).first()
    if covered is None:
        return steps.dropped(step, "no token waits for this signal")
    data = {
        "broadcast": batch.broadcast_id,
        "name": batch.name,
        "payload": batch.payload,
        "actor": batch.actor,
        "high_water": batch.high_water,
    }
    held.keep(step.conn, instance_id, HeldKind.SIGNAL, data, now)
    result = step.finish()
    result.note = held.SUSPENDED_NOTE
    store.insert_receipt(step.conn, batch.broadcast_id, instance_id, now)
    return result


def pending_starts(session: Session, batch: Batch) -> list[Any]:
    """The signal starts this broadcast has not started an instance for yet."""
    conn = session.connection()
    done = set(
        conn.scalars(
            select(RECEIPTS.c.process_id).where(
                RECEIPTS.c.broadcast_id == batch.broadcast_id, RECEIPTS.c.started.is_(True)
            )
        )
    )
    listening = starts(conn, batch.name, batch.partition_id)
    session.rollback()
    first: dict[int, Any] = {}
    for row in listening:
        first.setdefault(row.process_id, row)
    return [row for process_id, row in first.items() if process_id not in done]


def start_one(session: Session, batch: Batch, start: Any, now: datetime) -> StepResult | None:
    """Start the process of `start` with the payload as input, and write its receipt in the same
    transaction (unique per broadcast and process); None when the version is gone."""
    begin_write(session)
    version = session.get(ProcessVersion, start.version_id)
    if version is None:
        return None
    check_startable(version)
    actor = None
    if batch.actor:
        actor = session.scalar(select(User).where(User.username == batch.actor))
    payload = batch.payload if isinstance(batch.payload, dict) else {}
    result = steps.start_instance(
        session,
        definitions.for_version(version),
        input=payload,
        partition_id=batch.partition_id,
        actor=actor,
        via="signal",
        now=now,
        start_node=start.node_id,
    )
    session.connection().execute(
        insert(RECEIPTS),
        {
            "broadcast_id": batch.broadcast_id,
            "instance_id": result.instance.id,
            "process_id": start.process_id,
            "started": True,
            "created_at": now,
        },
    )
    return result


# --- recovery ---------------------------------------------------------------------------------

# RQ states after which no delivery of that id will run (a started one lost its worker: its
# lease ran out, or it never took one).
GONE = frozenset({"finished", "failed", "stopped", "canceled", "started"})


def lost(session: Session, queue: Any, *, grace: float, now: datetime) -> list[JobRef]:
    """Broadcasts not planned and batches not leased for `grace` seconds whose current delivery
    is not waiting in RQ: the sweep enqueues them again (the next attempt's id after a claim)."""
    stale = now - timedelta(seconds=grace)
    refs = [
        JobRef(row.id, 0, "signal", now, row.attempt)
        for row in session.execute(
            select(BROADCASTS.c.id, BROADCASTS.c.attempt)
            .where(BROADCASTS.c.status == BroadcastStatus.PENDING, BROADCASTS.c.updated_at <= stale)
            .order_by(BROADCASTS.c.id)
            .limit(500)
        )
    ]
    refs += [
        JobRef(row.id, 0, "signal_batch", now, row.attempt)
        for row in session.execute(
            select(BATCHES.c.id, BATCHES.c.attempt)
            .where(
                BATCHES.c.status == BatchStatus.PENDING,
                BATCHES.c.updated_at <= stale,
                or_(BATCHES.c.lease_until.is_(None), BATCHES.c.lease_until <= now),
            )
            .order_by(BATCHES.c.id)
            .limit(500)
        )
    ]
    session.rollback()
    if not refs:
        return []
    with queue.connection.pipeline(transaction=False) as pipe:
        for ref in refs:
            pipe.hget(RQJob.key_for(ref.rq_id), "status")
        states = pipe.execute()
    return [
        ref for ref, state in zip(refs, states, strict=True) if not state or state.decode() in GONE
    ]
