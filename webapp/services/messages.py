"""Delivering a message: to the instances waiting for it, else by starting the process whose
start event listens for it. Shared by `POST /api/messages` and the `send_message` tool.

A message id makes both once-only: each instance records the ids it applied (`message_receipts`)
and an id that started an instance is a row unique per partition (`message_starts`), written in
the same transaction as the start; a concurrent delivery of the same id loses on that row and
answers with the winner's instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from webapp.engine import steps
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import EventStart, MessageStart, Process, ProcessVersion, User
from webapp.models.runtime import MessageReceipt
from webapp.services.instances import (
    MAX_BUSINESS_KEY,
    Delivery,
    InstanceError,
    _engine,
    _received,
    _reused,
    request_digest,
)
from webapp.services.jobs import commit


def deliver(
    name: str,
    key: str | None,
    payload: Any,
    *,
    message_id: str | None,
    partitions: set[int] | None,
    actor: User | None,
    may_start: Callable[[Process], bool],
    partition_id: int | None = None,
) -> Delivery:
    """Deliver to the waiting instances in `partitions` (None: all; instances in no partition
    always), else start the listening process if `may_start` allows it (in its partition, or
    `partition_id` for a process in none). 404 `no_match` when neither happens.

    A message id is once-only within the caller's scope: per instance for deliveries, per
    partition of the started instance for starts. The same id in another scope is a new message,
    and no answer names anything the caller may not see."""
    digest = request_digest({"name": name, "correlation_key": key, "payload": payload})
    begin_write(db.session)
    earlier = _received(message_id, digest, partitions) if message_id else set()
    # With a message id the start's scope is needed first, to find a start it made before.
    listener = _listener(name, may_start) if message_id else None
    scope = _start_scope(listener[1], partition_id) if listener else 0
    if message_id and listener:
        started = _started(message_id, digest, scope)
        if started is not None:
            return Delivery(sorted(earlier), message_id, duplicate=True, started=started)
    targets = steps.message_targets(db.session, name, key, partitions) if key is not None else []
    delivered: set[int] = set()
    for instance_id in targets:
        if instance_id in earlier:
            continue
        try:
            result = _engine(
                lambda i=instance_id: steps.deliver_message(
                    db.session, i, name, key, payload, actor=actor
                )
            )
            if result.applied and message_id:
                db.session.add(
                    MessageReceipt(
                        instance_id=instance_id, message_id=message_id, request_hash=digest
                    )
                )
                db.session.flush()
            commit(result)
        except IntegrityError:
            # A concurrent delivery of the same message id reached this instance first.
            db.session.rollback()
            earlier.add(instance_id)
            continue
        if result.applied:
            delivered.add(instance_id)
    if delivered or earlier:
        return Delivery(sorted(delivered | earlier), message_id, duplicate=not delivered)
    if not message_id:
        listener = _listener(name, may_start)
        scope = _start_scope(listener[1], partition_id) if listener else 0
    if listener is None:
        where = f" with correlation key '{key}'" if key is not None else ""
        raise InstanceError(
            "no_match",
            f"No instance waits for message '{name}'{where}, and no published process you may "
            "start listens for it.",
            status=404,
        )
    return _start(listener[0], scope, key, payload, message_id, digest, actor)


def _listener(name: str, may_start: Callable[[Process], bool]) -> tuple[EventStart, Process] | None:
    """The process whose (latest version's) start event listens for `name`, if the caller may
    start it; one message name starts one process (publish refuses a second)."""
    found = db.session.execute(
        select(EventStart, Process)
        .join(Process, Process.id == EventStart.process_id)
        .where(EventStart.event == "message", EventStart.message == name)
    ).first()
    if found is None or not may_start(found.Process):
        return None
    return found.EventStart, found.Process


def _start_scope(process: Process, partition_id: int | None) -> int:
    """The partition a message start would run in (0: none): the scope of its message id."""
    return process.partition_id or partition_id or 0


def _started(message_id: str, digest: str, scope: int) -> int | None:
    """The instance this message id started in `scope`; 422 if the id came there with another
    message."""
    row = db.session.execute(
        select(MessageStart.instance_id, MessageStart.request_hash).where(
            MessageStart.message_id == message_id, MessageStart.partition_scope == scope
        )
    ).first()
    if row is None:
        return None
    if row.request_hash != digest:
        raise _reused("message_id", "message (name, correlation key or payload)")
    return row.instance_id


def _start(
    start: EventStart,
    scope: int,
    key: str | None,
    payload: Any,
    message_id: str | None,
    digest: str,
    actor: User | None,
) -> Delivery:
    """Start the process of `start` in partition `scope`: the payload is its `$input` (a value
    other than an object: `$input.payload`; none: an empty input), the correlation key its
    business key."""
    version = db.session.get(ProcessVersion, start.version_id)
    assert version is not None
    data = payload if isinstance(payload, dict) else {} if payload is None else {"payload": payload}
    business_key = key if key is not None and len(key) <= MAX_BUSINESS_KEY else None
    try:
        result = _engine(
            lambda: steps.start_instance(
                db.session,
                version,
                input=data,
                business_key=business_key,
                partition_id=scope or None,
                actor=actor,
                via="message",
                start_node=start.node_id,
            )
        )
        if message_id:
            db.session.add(
                MessageStart(
                    message_id=message_id,
                    request_hash=digest,
                    instance_id=result.instance.id,
                    partition_scope=scope,
                )
            )
            db.session.flush()
        commit(result)
    except IntegrityError:
        db.session.rollback()
        winner = _started(message_id, digest, scope) if message_id else None
        if winner is None:
            raise
        return Delivery([], message_id, duplicate=True, started=winner)
    return Delivery([], message_id, started=result.instance.id)
