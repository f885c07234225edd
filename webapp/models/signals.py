"""Signal broadcasts, their batches and receipts; process-level message and signal starts; the
message ids that started an instance.

A broadcast is a row the throwing step (or `POST /api/signals`) writes; workers plan it into
batches of instances and deliver it to each instance in its own step, writing one receipt per
(broadcast, instance) in that step, so a broadcast recovered after a worker died reaches no
instance twice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.statuses import BatchStatus, BroadcastStatus
from webapp.models.types import JSONType


class SignalBroadcast(Model):
    """One broadcast of a signal name in a partition (None: instances in no partition).

    `high_water` is the largest subscription id when it was made: only subscriptions up to it
    receive it. `total` (instances waiting then) is counted when a worker plans it; `delivered`
    and `started` grow as batches finish; `lease_until` belongs to the worker planning it.
    """

    __tablename__ = "signal_broadcasts"
    __table_args__ = (
        Index("ix_signal_broadcasts_status_id", "status", "id"),
        Index(
            "uq_signal_broadcasts_actor_idempotency_key", "actor", "idempotency_key", unique=True
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    payload: Mapped[Any] = mapped_column(JSONType, nullable=True)
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="RESTRICT"), index=True, nullable=True
    )
    # Who threw it: an instance's node, or a user through the API.
    instance_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="SET NULL"), nullable=True
    )
    node_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    actor: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # `POST /api/signals` with an Idempotency-Key: the key and a digest of the body.
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=BroadcastStatus.PENDING)
    high_water: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int | None] = mapped_column(Integer, nullable=True)
    delivered: Mapped[int] = mapped_column(Integer, default=0)
    started: Mapped[int] = mapped_column(Integer, default=0)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class SignalBatch(Model):
    """One worker job of a broadcast: `kind` "deliver", the waiting instances with ids in
    (`after`, `upto`]; "start", the processes a signal start of that name starts."""

    __tablename__ = "signal_batches"
    __table_args__ = (Index("ix_signal_batches_status_id", "status", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    broadcast_id: Mapped[int] = mapped_column(
        ForeignKey("signal_broadcasts.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(8), default="deliver")
    after: Mapped[int] = mapped_column(Integer)
    upto: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default=BatchStatus.PENDING)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class SignalReceipt(Model):
    """A broadcast reached an instance (`started`: the instance it started, for `process_id`).
    Written in the instance's step; unique per (broadcast, instance) and (broadcast, process)."""

    __tablename__ = "signal_receipts"
    __table_args__ = (
        Index(
            "uq_signal_receipts_broadcast_id_instance_id",
            "broadcast_id",
            "instance_id",
            unique=True,
        ),
        Index(
            "uq_signal_receipts_broadcast_id_process_id", "broadcast_id", "process_id", unique=True
        ),
        Index("ix_signal_receipts_instance_id", "instance_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    broadcast_id: Mapped[int] = mapped_column(
        ForeignKey("signal_broadcasts.id", ondelete="CASCADE")
    )
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    process_id: Mapped[int | None] = mapped_column(
        ForeignKey("processes.id", ondelete="CASCADE"), nullable=True
    )
    started: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EventStart(Model):
    """A process-level message or signal start event of a process's latest published version,
    kept by publish. `message` repeats `name` for message starts: unique, so one message name
    starts one process."""

    __tablename__ = "event_starts"
    __table_args__ = (
        Index("ix_event_starts_event_name", "event", "name"),
        Index("uq_event_starts_message", "message", unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[int] = mapped_column(
        ForeignKey("processes.id", ondelete="CASCADE"), index=True
    )
    version_id: Mapped[int] = mapped_column(ForeignKey("process_versions.id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(255))
    event: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(200))
    message: Mapped[str | None] = mapped_column(String(200), nullable=True)


class MessageStart(Model):
    """A message id that started an instance through a message start: the same id never starts
    a second one. `request_hash` digests the message, to refuse the id reused for another."""

    __tablename__ = "message_starts"
    __table_args__ = (
        Index(
            "uq_message_starts_message_id_partition_scope",
            "message_id",
            "partition_scope",
            unique=True,
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255))
    # The started instance's partition (0: none): an id is once-only within one partition.
    partition_scope: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    request_hash: Mapped[str] = mapped_column(String(64))
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
