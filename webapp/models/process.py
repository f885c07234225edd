"""Processes (an editable draft) and their published, immutable, numbered versions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from webapp.models.auth import Partition, User
from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.types import OrderedJSON


class Process(Model):
    """A process the modellers edit: one draft, many published versions."""

    __tablename__ = "processes"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(100), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="RESTRICT"), index=True, nullable=True
    )
    # The draft's large columns load together, when first read: a start or a list needs none.
    draft_xml: Mapped[str | None] = mapped_column(
        Text, nullable=True, deferred=True, deferred_group="draft"
    )
    draft_document: Mapped[dict[str, Any] | None] = mapped_column(
        OrderedJSON, nullable=True, deferred=True, deferred_group="draft"
    )
    draft_hash: Mapped[str | None] = mapped_column(String(64), nullable=True)
    draft_revision: Mapped[int] = mapped_column(Integer, default=0)
    draft_problems: Mapped[list[dict[str, Any]]] = mapped_column(OrderedJSON, default=list)
    #: What the last file import mapped, approximated, kept and left out (the import report).
    import_report: Mapped[dict[str, Any] | None] = mapped_column(
        OrderedJSON, nullable=True, deferred=True
    )
    #: The nodes and flows the scenarios walked when last all run, keyed by draft and scenarios.
    scenario_coverage: Mapped[dict[str, Any] | None] = mapped_column(
        OrderedJSON, nullable=True, deferred=True
    )
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    partition: Mapped[Partition | None] = relationship(lazy="joined")
    updated_by: Mapped[User | None] = relationship(foreign_keys=[updated_by_id], lazy="joined")
    versions: Mapped[list[ProcessVersion]] = relationship(
        back_populates="process", order_by="ProcessVersion.number", lazy="select"
    )

    def __repr__(self) -> str:
        return f"<Process {self.key}>"


class ProcessVersion(Model):
    """A published version: the BPMN XML, the compiled document the engine runs, its hash."""

    __tablename__ = "process_versions"
    __table_args__ = (UniqueConstraint("process_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[int] = mapped_column(
        ForeignKey("processes.id", ondelete="CASCADE"), index=True
    )
    number: Mapped[int] = mapped_column(Integer)
    document: Mapped[dict[str, Any]] = mapped_column(OrderedJSON)
    bpmn_xml: Mapped[str] = mapped_column(Text, deferred=True)  # only diagrams and downloads
    content_hash: Mapped[str] = mapped_column(String(64))
    change_note: Mapped[str] = mapped_column(String(500), default="")
    published_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    published_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A suspended version starts no instance (its running ones may be suspended too).
    suspended_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    suspended_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    suspend_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    # Why it was published although test scenarios failed (None: all passed, or none ran).
    scenarios_override: Mapped[str | None] = mapped_column(String(500), nullable=True)

    process: Mapped[Process] = relationship(back_populates="versions", lazy="joined")
    published_by: Mapped[User | None] = relationship(lazy="joined", foreign_keys=[published_by_id])
    suspended_by: Mapped[User | None] = relationship(lazy="select", foreign_keys=[suspended_by_id])

    def __repr__(self) -> str:
        return f"<ProcessVersion {self.process_id} v{self.number}>"
