"""Delivering a message: to the instances waiting for it, else by starting the process whose
start event listens for it: `deliver_message` for `POST /api/messages`, `deliver` for it and the
`send_message` tool.

A message id makes both once-only: each instance records the ids it applied (`message_receipts`)
and an id that started an instance is a row unique per partition (`message_starts`), written in
the same transaction as the start; a concurrent delivery of the same id loses on that row and
answers with the winner's instance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple

from sqlalchemy import false, select
from sqlalchemy.exc import IntegrityError

from webapp.engine import definitions, steps
from webapp.engine.suspended_versions import check_startable
from webapp.engine.waits import correlation_text
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import EventStart, Instance, MessageStart, Process, ProcessVersion, User
from webapp.models.runtime import MessageReceipt
from webapp.models.session import db_session
from webapp.permissions import can, visible_partition_ids
from webapp.services.instances import (
    IDEMPOTENCY_HEADER,
    MAX_BUSINESS_KEY,
    InstanceError,
    clean_idempotency_key,
    invalid,
    request_digest,
    reused,
    run_step,
)
from webapp.services.jobs import commit

MAX_NAME = 200


class Delivery(NamedTuple):
    """The instances that received a message (with a message id: now or before), the instance
    a message start started (now or before), and whether this request applied it nowhere new
    because it had been handled already."""

    delivered: list[int]
    message_id: str | None = None
    duplicate: bool = False
    started: int | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"delivered": self.delivered}
        if self.started is not None:
            data["started"] = self.started
        if self.message_id is not None:
            data.update(message_id=self.message_id, duplicate=self.duplicate)
        return data


def deliver_message(
    user: User, payload: Mapping[str, Any], *, idempotency_key: str | None = None
) -> Delivery:
    """Wake every visible instance waiting for the message; one step (and commit) per instance.
    When none waits, a published process whose start event listens for the name starts.

    With a message id (the body's `message_id` or the Idempotency-Key header) each instance
    applies that id once and it starts at most one instance: a second delivery is acknowledged
    with the instances that had it (or the one it started), and goes on only to instances still
    waiting that never got it (the rest of a delivery cut short).
    """
    if not can(user, "instances.manage", scoped=False):
        raise InstanceError("forbidden", "You may not send messages to instances.", status=403)
    message_id = _message_id(payload, idempotency_key)
    fields: dict[str, str] = {}
    name = payload.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        fields["name"] = f"Give the message name (1-{MAX_NAME} characters)."
    raw_key = payload.get("correlation_key")
    if raw_key is not None and (
        isinstance(raw_key, bool) or not isinstance(raw_key, str | int | float)
    ):
        fields["correlation_key"] = "Give the correlation key as text or a number."
    unknown = sorted(set(payload) - {"name", "correlation_key", "payload", "message_id"})
    for field in unknown:
        fields[field] = "Unknown field."
    if fields:
        raise invalid(fields)
    return deliver(
        str(name).strip(),
        correlation_text(raw_key),
        payload.get("payload"),
        message_id=message_id,
        partitions=visible_partition_ids(user),
        actor=user,
        may_start=lambda process: can(user, "instances.start", process.partition_id),
    )


def _message_id(payload: Mapping[str, Any], header: str | None) -> str | None:
    """The message id from the body or the Idempotency-Key header (the same if both)."""
    from_body = clean_idempotency_key(payload.get("message_id"), "message_id")
    from_header = clean_idempotency_key(header)
    if from_body and from_header and from_body != from_header:
        raise invalid({"message_id": f"Differs from the {IDEMPOTENCY_HEADER} header."})
    return from_body or from_header


def _received(message_id: str, digest: str, partitions: set[int] | None) -> set[int]:
    """Visible instances that already applied `message_id`; 422 if it was another message."""
    query = (
        select(MessageReceipt.instance_id, MessageReceipt.request_hash)
        .join(Instance, Instance.id == MessageReceipt.instance_id)
        .where(MessageReceipt.message_id == message_id)
    )
    if partitions is not None:
        allowed = Instance.partition_id.in_(sorted(partitions)) if partitions else false()
        query = query.where(Instance.partition_id.is_(None) | allowed)
    rows = db.session.execute(query).all()
    if any(row.request_hash != digest for row in rows):
        raise reused("message_id", "message (name, correlation key or payload)")
    return {row.instance_id for row in rows}


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
    begin_write(db_session())
    earlier = _received(message_id, digest, partitions) if message_id else set()
    # With a message id the start's scope is needed first, to find a start it made before.
    listener = _listener(name, may_start) if message_id else None
    scope = _start_scope(listener[1], partition_id) if listener else 0
    if message_id and listener:
        started = _started(message_id, digest, scope)
        if started is not None:
            return Delivery(sorted(earlier), message_id, duplicate=True, started=started)
    targets = steps.message_targets(db_session(), name, key, partitions) if key is not None else []
    delivered: set[int] = set()
    for instance_id in targets:
        if instance_id in earlier:
            continue
        try:
            result = run_step(
                # key is set: without one there are no targets.
                partial(
                    steps.deliver_message,
                    db_session(),
                    instance_id,
                    name,
                    key or "",
                    payload,
                    actor=actor,
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
        raise reused("message_id", "message (name, correlation key or payload)")
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
    run_step(lambda: check_startable(version))
    data = payload if isinstance(payload, dict) else {} if payload is None else {"payload": payload}
    business_key = key if key is not None and len(key) <= MAX_BUSINESS_KEY else None
    try:
        result = run_step(
            lambda: steps.start_instance(
                db_session(),
                definitions.for_version(version),
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
