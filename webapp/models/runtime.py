"""Runtime state of process instances: tokens, jobs, message subscriptions, tasks, history.

The engine (`webapp/engine/`) changes these rows only inside a transaction that first locks the
instance row; history is append-only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from webapp.models.auth import Partition, Role, User
from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.process import ProcessVersion
from webapp.models.statuses import LIVE_TOKEN, InstanceStatus, JobStatus, TaskStatus, TokenStatus
from webapp.models.types import JSONType

# SQLite only auto-numbers an INTEGER PRIMARY KEY; PostgreSQL gets 64-bit ids for history.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Instance(Model):
    """One run of a published version; it stays on that version until it ends.

    `idempotency_key` (unique per starter) and `request_hash` are the API start request's
    Idempotency-Key and a digest of its body, so a retried start returns this instance.
    """

    __tablename__ = "instances"
    __table_args__ = (
        Index(
            "uq_instances_started_by_id_idempotency_key",
            "started_by_id",
            "idempotency_key",
            unique=True,
        ),
        Index(
            "ix_instances_suspended_at",
            "suspended_at",
            postgresql_where=text("suspended_at IS NOT NULL"),
            sqlite_where=text("suspended_at IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(
        ForeignKey("process_versions.id", ondelete="RESTRICT"), index=True
    )
    process_key: Mapped[str] = mapped_column(String(100), index=True)
    version: Mapped[int] = mapped_column(Integer)
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="RESTRICT"), index=True, nullable=True
    )
    status: Mapped[str] = mapped_column(String(16), default=InstanceStatus.RUNNING, index=True)
    input: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    vars: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    nodes: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    business_key: Mapped[str | None] = mapped_column(String(200), index=True, nullable=True)
    started_via: Mapped[str] = mapped_column(String(16), default="api")
    started_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    error: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    idempotency_key: Mapped[str | None] = mapped_column(String(255), nullable=True)
    request_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # A child started by a call activity: the calling instance and its waiting token.
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="SET NULL"), index=True, nullable=True
    )
    parent_token_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    parent_node_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    parent_step: Mapped[int | None] = mapped_column(Integer, nullable=True)
    call_depth: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # Suspended by an operator (the status stays as it was): nothing moves until resumed.
    suspended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    suspended_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    suspend_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)

    process_version: Mapped[ProcessVersion] = relationship(lazy="select")
    partition: Mapped[Partition | None] = relationship(lazy="select")
    started_by: Mapped[User | None] = relationship(lazy="select", foreign_keys=[started_by_id])
    suspended_by: Mapped[User | None] = relationship(lazy="select", foreign_keys=[suspended_by_id])

    def __repr__(self) -> str:
        return f"<Instance {self.id} {self.process_key} v{self.version} {self.status}>"


class Token(Model):
    """A marker of where an instance is: at a node, active (engine work) or waiting."""

    __tablename__ = "tokens"
    __table_args__ = (Index("ix_tokens_instance_id_status", "instance_id", "status"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(255))
    arrived_via: Mapped[str | None] = mapped_column(String(255), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=TokenStatus.ACTIVE)
    step: Mapped[int] = mapped_column(Integer, default=0)
    # The token of the enclosing scope (a sub-process or multi-instance body); None at the top.
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("tokens.id", ondelete="CASCADE"), index=True, nullable=True
    )
    # A scope's own values: a multi-instance element and counters, an event listener's mark.
    locals: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @property
    def live(self) -> bool:
        return self.status in LIVE_TOKEN

    def __repr__(self) -> str:
        return f"<Token {self.id} at {self.node_id} {self.status}>"


class Job(Model):
    """Work a worker does for a token: a tool call (with retries) or a timer; `key` is unique.

    `wake_at` is set (to `due_at`) while a pending job waits for its time in the database; a
    worker's clock clears it as it claims the job and hands it to RQ (webapp/engine/clock.py)."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_status_due_at", "status", "due_at"),
        Index(
            "ix_jobs_wake_at",
            "wake_at",
            postgresql_where=text("wake_at IS NOT NULL"),
            sqlite_where=text("wake_at IS NOT NULL"),
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    # None for a hand-over to another instance (a called child's start, resume or cancel).
    token_id: Mapped[int | None] = mapped_column(
        ForeignKey("tokens.id", ondelete="CASCADE"), index=True, nullable=True
    )
    node_id: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(8))
    key: Mapped[str] = mapped_column(String(300), unique=True)
    tool: Mapped[str | None] = mapped_column(String(200), nullable=True)
    inputs: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    actor: Mapped[str | None] = mapped_column(String(64), nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=JobStatus.PENDING)
    due_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    max_attempts: Mapped[int] = mapped_column(Integer, default=1)
    backoff: Mapped[float] = mapped_column(Float, default=2.0)
    timeout: Mapped[float] = mapped_column(Float, default=30.0)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_error: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    wake_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    def __repr__(self) -> str:
        return f"<Job {self.id} {self.kind} {self.node_id} {self.status}>"


class MessageSubscription(Model):
    """A token waiting for a message (name and correlation key), for a broadcast of a signal
    name (`kind` "signal", correlation key empty) or for a condition (`kind` "condition").

    Ids only grow, on SQLite too (AUTOINCREMENT): a broadcast covers the subscriptions up to the
    largest id when it was made, so a reused id would hand it to a later subscription."""

    __tablename__ = "message_subscriptions"
    __table_args__ = (
        Index("ix_message_subscriptions_name_key", "name", "correlation_key"),
        Index("ix_message_subscriptions_kind_name", "kind", "name", "instance_id"),
        {"sqlite_autoincrement": True},
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    token_id: Mapped[int] = mapped_column(ForeignKey("tokens.id", ondelete="CASCADE"), index=True)
    node_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(200))
    correlation_key: Mapped[str] = mapped_column(String(500))
    kind: Mapped[str] = mapped_column(String(12), default="message", server_default="message")
    #: A conditional event's subscription (`kind` "condition"): whether its condition held when
    #: last evaluated, so that only a change from false to true fires it.
    satisfied: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class MessageReceipt(Model):
    """A message id an instance has received: the same id delivered again is acknowledged and not
    applied. Written in the step that applied the message; `request_hash` digests the message."""

    __tablename__ = "message_receipts"
    __table_args__ = (
        Index(
            "uq_message_receipts_instance_id_message_id", "instance_id", "message_id", unique=True
        ),
        Index("ix_message_receipts_message_id", "message_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Task(Model):
    """Work for a person at a user task: who may do it, the form to fill in, its due date."""

    __tablename__ = "tasks"
    __table_args__ = (Index("ix_tasks_status_partition_id", "status", "partition_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    token_id: Mapped[int] = mapped_column(ForeignKey("tokens.id", ondelete="CASCADE"), index=True)
    node_id: Mapped[str] = mapped_column(String(255))
    title: Mapped[str] = mapped_column(String(200), default="")
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="RESTRICT"), nullable=True
    )
    assignee_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True, nullable=True
    )
    candidate_role_id: Mapped[int | None] = mapped_column(
        ForeignKey("roles.id", ondelete="SET NULL"), index=True, nullable=True
    )
    #: No assignee in the model: open to everyone who may work tasks in the partition.
    open_to_partition: Mapped[bool] = mapped_column(default=False, server_default=false())
    form: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=TaskStatus.OPEN)
    due_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    completed_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    instance: Mapped[Instance] = relationship(lazy="select")
    assignee: Mapped[User | None] = relationship(foreign_keys=[assignee_id], lazy="select")
    candidate_role: Mapped[Role | None] = relationship(lazy="select")
    candidates: Mapped[list[TaskCandidate]] = relationship(
        lazy="select", cascade="all, delete-orphan", order_by="TaskCandidate.id"
    )


class TaskCandidate(Model):
    """One more role or user a task is offered to, besides its candidate role (a model's
    candidate groups and users beyond the first)."""

    __tablename__ = "task_candidates"

    id: Mapped[int] = mapped_column(primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    role_id: Mapped[int | None] = mapped_column(
        ForeignKey("roles.id", ondelete="CASCADE"), index=True, nullable=True
    )
    user_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True, nullable=True
    )

    role: Mapped[Role | None] = relationship(lazy="joined")
    user: Mapped[User | None] = relationship(lazy="joined")


class HistoryEntry(Model):
    """One append-only line of an instance's history; never updated."""

    __tablename__ = "history"
    __table_args__ = (Index("ix_history_instance_id_id", "instance_id", "id"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    token_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    node_id: Mapped[str | None] = mapped_column(String(255), nullable=True)
    kind: Mapped[str] = mapped_column(String(32))
    actor: Mapped[str | None] = mapped_column(String(64), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class OutboxMessage(Model):
    """An e-mail `email.send` kept instead of sent (no SMTP set up); `key` makes it once-only."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(300), unique=True)
    instance_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="SET NULL"), index=True, nullable=True
    )
    recipients: Mapped[list[str]] = mapped_column(JSONType, default=list)
    subject: Mapped[str] = mapped_column(String(500), default="")
    body: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
