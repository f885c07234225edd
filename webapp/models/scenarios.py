"""Test scenarios kept with a process: played on its draft, and before every publish."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.types import OrderedJSON


class TestScenario(Model):
    """One scenario of a process: its name and its JSON form (webapp.process.scenarios)."""

    __tablename__ = "test_scenarios"
    __table_args__ = (UniqueConstraint("process_id", "name"),)
    __test__ = False  # not a pytest class

    id: Mapped[int] = mapped_column(primary_key=True)
    process_id: Mapped[int] = mapped_column(
        ForeignKey("processes.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer, default=0)
    body: Mapped[dict[str, Any]] = mapped_column(OrderedJSON)
    updated_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
