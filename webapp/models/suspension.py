"""What waits for a suspended instance: the events that reached it, applied in order on resume."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.types import JSONType


class HeldEvent(Model):
    """A message, signal or tool outcome that reached a suspended instance; `id` is the arrival
    order, `data` what applying it needs (HeldKind says which)."""

    __tablename__ = "held_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    instance_id: Mapped[int] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(16))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
