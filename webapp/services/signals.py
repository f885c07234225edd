"""Signal broadcasts for workers, the API and the operations page.

RQ entry points (`plan_broadcast`, `run_batch`) bind the engine's signal steps to the app: each
instance's delivery is its own transaction, committed and then followed by its jobs; the batch's
lease is renewed as it goes, so the sweep hands a batch whose worker died to another worker.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from webapp.engine import EngineError, signals
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.infra.logs import about_job
from webapp.models import (
    Instance,
    MessageSubscription,
    Partition,
    Process,
    SignalBroadcast,
    SignalReceipt,
    User,
)
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.permissions import can, partition_filter
from webapp.services import webhooks
from webapp.services.instances import (
    IDEMPOTENCY_HEADER,
    InstanceError,
    clean_idempotency_key,
    invalid,
    request_digest,
    reused,
)
from webapp.services.jobs import add_entry_points, commit_and_follow_on, send
from webapp.services.operations import labels

log = logging.getLogger(__name__)


def _lease() -> float:
    """Seconds a batch stays with its worker without a heartbeat (JOB_LEASE_GRACE, at least 1)."""
    return max(1.0, float(current_app.config["JOB_LEASE_GRACE"]))


@about_job
def plan_broadcast(broadcast_id: int, _unused: int = 0) -> str:
    """Split a broadcast into batches and enqueue them."""
    session = db_session()
    try:
        attempt = signals.claim_broadcast(session, broadcast_id, utcnow())
        session.commit()
        if attempt is None:
            return "not pending"
        size = int(current_app.config["SIGNAL_BATCH"])
        now = utcnow()
        refs = signals.plan(session, broadcast_id, size, now)
        webhooks.broadcast_finished(session.connection(), broadcast_id, now)
    except BaseException:
        session.rollback()
        raise
    commit_refs(refs)
    return f"{len(refs)} batch(es)"


def commit_refs(refs: list) -> None:
    db.session.commit()
    if refs:
        send(refs)


@about_job
def run_batch(batch_id: int, _unused: int = 0) -> str:
    """Deliver the broadcast to the batch's instances (or start its processes), one step each."""
    session = db_session()
    lease = _lease()
    try:
        batch = signals.claim_batch(session, batch_id, utcnow(), lease)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    if batch is None:
        return "not claimed"
    beat = time.monotonic()
    done = 0
    for work in _work(batch):
        _one(work, batch)
        done += 1
        if time.monotonic() - beat > lease / 3:
            beat = time.monotonic()
            kept = signals.heartbeat(session, batch, utcnow(), lease)
            session.commit()
            if not kept:
                return f"lease lost after {done}"
    now = utcnow()
    signals.finish_batch(session, batch, now)
    webhooks.broadcast_finished(session.connection(), batch.broadcast_id, now)
    session.commit()
    return f"{done} done"


add_entry_points({"signal": plan_broadcast, "signal_batch": run_batch})


def _work(batch: signals.Batch) -> list[Any]:
    if batch.kind == "start":
        return signals.pending_starts(db_session(), batch)
    return signals.batch_instances(db_session(), batch)


def _one(work: Any, batch: signals.Batch) -> None:
    """One instance's delivery or one process's start, committed on its own."""
    session = db_session()
    try:
        if batch.kind == "start":
            result = signals.start_one(session, batch, work, utcnow())
        else:
            result = signals.deliver(session, batch, work, utcnow())
    except (EngineError, IntegrityError) as error:
        # A start refused (a suspended version, say), or a concurrent attempt wrote this
        # receipt first.
        session.rollback()
        if isinstance(error, EngineError):
            log.info("signal '%s' started nothing: %s", batch.name, error.message)
        return
    except BaseException:
        session.rollback()
        raise
    if result is None:
        session.rollback()
        return
    commit_and_follow_on(result)


# --- the API ----------------------------------------------------------------------------------


def broadcast_once(
    user: User, payload: Mapping[str, Any], idempotency_key: str | None
) -> tuple[SignalBroadcast, bool]:
    """`POST /api/signals` with an optional Idempotency-Key: the broadcast and whether it was
    made now. A key this user sent before with the same body returns that broadcast; with
    another body, 422. Keys are the user's own: another user's key is never looked at."""
    key = clean_idempotency_key(idempotency_key)
    if key is None:
        return broadcast_from_request(user, payload), True
    return _once(
        user,
        key,
        request_digest(payload),
        lambda once: _record(user, _checked(user, payload), once),
    )


def _once(
    user: User,
    key: str,
    digest: str,
    record: Callable[[tuple[str, str]], SignalBroadcast],
) -> tuple[SignalBroadcast, bool]:
    """The broadcast this user made with `key` before, else `record` it with the key: at most
    one broadcast per key, also when two requests with it arrive at once."""
    begin_write(db_session())
    earlier = _sent_with(user, key, digest)
    if earlier is not None:
        return earlier, False
    try:
        return record((key, digest)), True
    except IntegrityError:
        db.session.rollback()
        winner = _sent_with(user, key, digest)
        if winner is None:
            raise
        return winner, False


def _sent_with(user: User, key: str, digest: str) -> SignalBroadcast | None:
    broadcast = db.session.scalar(
        select(SignalBroadcast).where(
            SignalBroadcast.actor == user.username, SignalBroadcast.idempotency_key == key
        )
    )
    if broadcast is not None and broadcast.request_hash != digest:
        raise reused(IDEMPOTENCY_HEADER, "broadcast (name, payload or partition)")
    return broadcast


def broadcast_from_request(
    user: User, payload: Mapping[str, Any], *, idempotency: tuple[str, str] | None = None
) -> SignalBroadcast:
    """Check every field, record the broadcast, commit, enqueue it.

    The broadcast's partition is the body's `partition` (a key; none: instances and processes
    in no partition); the user must be allowed to start instances there. `idempotency` (key,
    body digest) is stored with it in the same transaction."""
    return _record(user, _checked(user, payload), idempotency)


@dataclass(frozen=True)
class Planned:
    """A broadcast that passed every check, not yet recorded."""

    name: str
    payload: dict[str, Any]
    partition_id: int | None


def _checked(user: User, payload: Mapping[str, Any]) -> Planned:
    """The API body's fields checked as the API checks them (422 naming each, 403 when the
    user may not start instances where the signal would go)."""
    if not can(user, "instances.start", scoped=False):
        raise InstanceError("forbidden", "You may not broadcast signals.", status=403)
    fields: dict[str, str] = {}
    name = payload.get("name")
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > signals.MAX_NAME:
        fields["name"] = f"Give the signal name (1-{signals.MAX_NAME} characters)."
    data = payload.get("payload", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fields["payload"] = "The payload must be a JSON object."
    partition = payload.get("partition")
    if partition is not None and not isinstance(partition, str):
        fields["partition"] = "The partition must be a partition key."
    for unknown in sorted(set(payload) - {"name", "payload", "partition"}):
        fields[unknown] = "Unknown field."
    if fields:
        raise invalid(fields)
    partition_id = None
    if partition:
        partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
        if partition_id is None or not can(user, "instances.start", partition_id):
            raise invalid({"partition": "Unknown partition, or not one you may start in."})
    elif not can(user, "instances.start", None):
        raise InstanceError("forbidden", "You may not broadcast signals.", status=403)
    assert isinstance(name, str)
    return Planned(name.strip(), data, partition_id)


def _record(
    user: User, planned: Planned, idempotency: tuple[str, str] | None = None
) -> SignalBroadcast:
    """Write the broadcast as the user's (with its Idempotency-Key and body digest, if any),
    commit, and enqueue it for a worker to plan."""
    begin_write(db_session())
    ref = signals.record(
        db.session.connection(),
        name=planned.name,
        payload=planned.payload,
        partition_id=planned.partition_id,
        now=utcnow(),
        actor=user.username,
        idempotency=idempotency,
    )
    commit_refs([ref])
    broadcast = db.session.get(SignalBroadcast, ref.id)
    assert broadcast is not None
    return broadcast


# --- the Signals page's form ------------------------------------------------------------------


def check_form(user: User, name: str, payload: str, partition: str) -> Planned:
    """The broadcast form's fields (the payload as JSON text, empty for none; the partition
    key, empty for none) checked like the API's body."""
    fields: dict[str, str] = {}
    data: Any = {}
    if payload.strip():
        try:
            data = json.loads(payload)
        except ValueError as error:
            fields["payload"] = f"The payload is not JSON: {error}."
    body = {"name": name, "payload": data, "partition": partition or None}
    try:
        planned = _checked(user, body)
    except InstanceError as error:
        if error.status != 422 or not fields:
            raise
        raise invalid({**fields, **(error.fields or {})}) from None
    if fields:
        raise invalid(fields)
    return planned


def broadcast_form(
    user: User, name: str, payload: str, partition: str, once: str = ""
) -> tuple[SignalBroadcast, bool]:
    """Check the form again (the confirmation may be old) and record the broadcast, once per
    confirmation page: `once` is that page's key, so a double click or a resent post returns
    the first broadcast (False: not made now)."""
    planned = check_form(user, name, payload, partition)
    key = clean_idempotency_key(once or None, "once")
    if key is None:
        return _record(user, planned), True
    digest = request_digest([planned.name, planned.payload, planned.partition_id])
    return _once(user, key, digest, lambda idempotency: _record(user, planned, idempotency))


def partition_choices(user: User) -> list[tuple[str, str]]:
    """(key, name) of the partitions the user may broadcast to (start instances in), by name."""
    if not can(user, "instances.start", scoped=False):
        return []
    return labels.visible_partitions(user)


def audience(planned: Planned) -> tuple[int, list[str]]:
    """Whom the broadcast would reach now: how many instances of its partition wait for the
    signal, and the names of the processes a signal start event of that name would start."""
    waiting = db.session.scalar(
        select(func.count(func.distinct(MessageSubscription.instance_id)))
        .join(Instance, Instance.id == MessageSubscription.instance_id)
        .where(
            MessageSubscription.kind == signals.KIND,
            MessageSubscription.name == planned.name,
            signals.same_partition(Instance.partition_id, planned.partition_id),
        )
    )
    starting = {
        start.process_id
        for start in signals.starts(db.session.connection(), planned.name, planned.partition_id)
    }
    started = db.session.scalars(
        select(Process.name).where(Process.id.in_(starting)).distinct().order_by(Process.name)
    )
    return int(waiting or 0), list(started)


def visible(user: User) -> Any:
    """Broadcasts the user may see: those of partitions they may read instances in."""
    return partition_filter(SignalBroadcast.partition_id, user)


def get_broadcast(user: User, broadcast_id: int) -> SignalBroadcast:
    found = None
    if can(user, "instances.read", scoped=False) or can(user, "instances.start", scoped=False):
        found = db.session.scalar(
            select(SignalBroadcast).where(SignalBroadcast.id == broadcast_id, visible(user))
        )
    if found is None:
        raise InstanceError(
            "not_found", f"There is no signal broadcast {broadcast_id} you may see.", status=404
        )
    return found


def recent(user: User, limit: int = 50) -> list[SignalBroadcast]:
    """The newest broadcasts the user may see."""
    return list(
        db.session.scalars(
            select(SignalBroadcast)
            .where(visible(user))
            .order_by(SignalBroadcast.id.desc())
            .limit(limit)
        )
    )


def reached(broadcast: SignalBroadcast, limit: int = 100) -> list[SignalReceipt]:
    """The first instances a broadcast reached or started."""
    return list(
        db.session.scalars(
            select(SignalReceipt)
            .where(SignalReceipt.broadcast_id == broadcast.id)
            .order_by(SignalReceipt.id)
            .limit(limit)
        )
    )


def reached_count(broadcast: SignalBroadcast) -> int:
    return int(
        db.session.scalar(
            select(func.count())
            .select_from(SignalReceipt)
            .where(SignalReceipt.broadcast_id == broadcast.id)
        )
        or 0
    )


def as_dict(broadcast: SignalBroadcast) -> dict[str, Any]:
    """The JSON shape of a broadcast and its progress."""
    partition = broadcast.partition_id and db.session.get(Partition, broadcast.partition_id)
    return {
        "id": broadcast.id,
        "name": broadcast.name,
        "payload": broadcast.payload,
        "partition": partition.key if partition else None,
        "status": broadcast.status,
        "total": broadcast.total,
        "delivered": broadcast.delivered,
        "started": broadcast.started,
        "thrown_by": (
            {"instance": broadcast.instance_id, "node": broadcast.node_id}
            if broadcast.node_id
            else {"user": broadcast.actor}
        ),
        "created_at": broadcast.created_at.isoformat(),
        "finished_at": broadcast.finished_at.isoformat() if broadcast.finished_at else None,
    }
