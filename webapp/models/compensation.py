"""The completed activities of an instance that compensation may undo (`engine/compensation.py`).

One row per completion of an activity with a compensation handler, of a sub-process (or a
transaction) holding such activities, and of each inner instance of a multi-instance one: the
scope it completed in (the scope token and that token's step, so a scope entered again is a new
one), its own token and step, and a snapshot of the data its handler will see.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.statuses import CompensationStatus
from webapp.models.types import JSONType

BigId = BigInteger().with_variant(Integer(), "sqlite")


class Compensation(Model):
    """An activity completed in a scope, kept until a compensation throw undoes it."""

    __tablename__ = "compensations"
    __table_args__ = (
        Index("ix_compensations_scope", "instance_id", "scope_token_id", "scope_step", "status"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    instance_id: Mapped[int] = mapped_column(ForeignKey("instances.id", ondelete="CASCADE"))
    scope_token_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    scope_step: Mapped[int] = mapped_column(Integer, default=0)
    node_id: Mapped[str] = mapped_column(String(255))
    token_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    token_step: Mapped[int] = mapped_column(Integer, default=0)
    data: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default=CompensationStatus.COMPLETED)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
