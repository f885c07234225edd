"""Timer start schedules: one row per process-level timer start of a process's latest published
version, and one row per tick started (its unique key makes a tick start exactly one instance).

`last_instance_id` and `schedule_ticks.instance_id` have no foreign key: the record of a run
outlives the instances that retention deletes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.process import Process, ProcessVersion
from webapp.models.types import OrderedJSON


class Schedule(Model):
    """When a timer start of a published process runs next; `paused` ones do not run."""

    __tablename__ = "schedules"
    __table_args__ = (
        UniqueConstraint("process_id", "node_id"),
        Index("ix_schedules_paused_next_run_at", "paused", "next_run_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[int] = mapped_column(ForeignKey("processes.id", ondelete="CASCADE"))
    version_id: Mapped[int] = mapped_column(
        ForeignKey("process_versions.id", ondelete="CASCADE"), index=True
    )
    node_id: Mapped[str] = mapped_column(String(255))
    settings: Mapped[dict[str, Any]] = mapped_column(OrderedJSON)
    anchor_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    next_run_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    last_tick_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_instance_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    process: Mapped[Process] = relationship(lazy="joined")
    version: Mapped[ProcessVersion] = relationship(lazy="joined")


class ScheduleTick(Model):
    """One tick of a timer start that started an instance: at most one per (version, node, tick)."""

    __tablename__ = "schedule_ticks"
    __table_args__ = (UniqueConstraint("version_id", "node_id", "tick_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    version_id: Mapped[int] = mapped_column(ForeignKey("process_versions.id", ondelete="CASCADE"))
    node_id: Mapped[str] = mapped_column(String(255))
    tick_at: Mapped[datetime] = mapped_column(UTCDateTime())
    instance_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
