"""Operations data: retention per process, bulk cancel/retry runs with a report per instance,
and the instance indexes the operations lists rely on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from webapp.models.auth import User
from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.process import Process
from webapp.models.runtime import Instance
from webapp.models.statuses import BulkItemStatus, BulkStatus
from webapp.models.types import JSONType


class RetentionPolicy(Model):
    """How long a process's finished instances are kept; `days` None keeps them forever."""

    __tablename__ = "retention_policies"

    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[int] = mapped_column(
        ForeignKey("processes.id", ondelete="CASCADE"), unique=True
    )
    days: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    process: Mapped[Process] = relationship(lazy="joined")


class BulkOperation(Model):
    """One bulk change (cancel, retry, ...): who asked, why, with what settings, and how far the
    worker got."""

    __tablename__ = "bulk_operations"

    id: Mapped[int] = mapped_column(primary_key=True)
    action: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(500), default="")
    scope: Mapped[str] = mapped_column(String(500), default="")
    status: Mapped[str] = mapped_column(String(16), default=BulkStatus.QUEUED)
    total: Mapped[int] = mapped_column(Integer, default=0)
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), index=True, nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    params: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)

    actor: Mapped[User | None] = relationship(lazy="joined")


class BulkItem(Model):
    """One instance of a bulk operation and what happened to it (pending, ok, error).

    `instance_id` has no foreign key: the report outlives instances that retention deletes.
    """

    __tablename__ = "bulk_items"
    __table_args__ = (
        UniqueConstraint("operation_id", "instance_id"),
        Index("ix_bulk_items_operation_id_status", "operation_id", "status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    operation_id: Mapped[int] = mapped_column(ForeignKey("bulk_operations.id", ondelete="CASCADE"))
    instance_id: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default=BulkItemStatus.PENDING)
    message: Mapped[str] = mapped_column(String(500), default="")
    updated_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


# Keyset pages (created_at desc, id desc) under each single filter, retention, and the counts
# per process and status (a covering index);
# declared here (the instances table is the engine's) so the models and migration 0005 agree.
instances = Instance.__table__
Index("ix_instances_created_at_id", instances.c.created_at, instances.c.id)
Index(
    "ix_instances_status_created_at_id",
    instances.c.status,
    instances.c.created_at,
    instances.c.id,
)
Index(
    "ix_instances_process_key_created_at_id",
    instances.c.process_key,
    instances.c.created_at,
    instances.c.id,
)
Index(
    "ix_instances_version_id_created_at_id",
    instances.c.version_id,
    instances.c.created_at,
    instances.c.id,
)
Index(
    "ix_instances_partition_id_created_at_id",
    instances.c.partition_id,
    instances.c.created_at,
    instances.c.id,
)
Index(
    "ix_instances_started_by_id_created_at_id",
    instances.c.started_by_id,
    instances.c.created_at,
    instances.c.id,
)
Index("ix_instances_status_ended_at", instances.c.status, instances.c.ended_at)
Index(
    "ix_instances_process_key_status_partition_id",
    instances.c.process_key,
    instances.c.status,
    instances.c.partition_id,
)
