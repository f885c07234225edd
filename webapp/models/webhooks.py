"""Webhooks out: the registered receivers and every delivery of an event to one of them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow
from webapp.models.types import JSONType

DELIVERY_PENDING = text("status = 'pending'")


class Webhook(Model):
    """A receiver: its URL, the event types it wants (optionally only of one process or
    partition) and its `whsec_` secret; during a rotation the previous secret signs too until
    `previous_until`. `paused_at` is set when it kept failing (deliveries then wait)."""

    __tablename__ = "webhooks"

    id: Mapped[int] = mapped_column(primary_key=True)
    url: Mapped[str] = mapped_column(String(2000))
    description: Mapped[str] = mapped_column(String(200), default="")
    events: Mapped[list[str]] = mapped_column(JSONType, default=list)
    process_key: Mapped[str | None] = mapped_column(String(100), nullable=True)
    partition_id: Mapped[int | None] = mapped_column(
        ForeignKey("partitions.id", ondelete="CASCADE"), nullable=True
    )
    secret: Mapped[str] = mapped_column(String(200))
    previous_secret: Mapped[str | None] = mapped_column(String(200), nullable=True)
    previous_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    active: Mapped[bool] = mapped_column(default=True)
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    paused_reason: Mapped[str | None] = mapped_column(String(500), nullable=True)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    failing_since: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_by: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WebhookDelivery(Model):
    """One event for one webhook. `message_id` is the stable `webhook-id`; `body` the JSON sent
    on every attempt; `next_attempt_at` when a worker may try (again); `retry_until` when it
    gives up. Deliveries of one instance to one webhook go out in `id` order."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index(
            "ix_webhook_deliveries_due",
            "next_attempt_at",
            postgresql_where=DELIVERY_PENDING,
            sqlite_where=DELIVERY_PENDING,
        ),
        Index("ix_webhook_deliveries_order", "webhook_id", "instance_id", "id"),
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    webhook_id: Mapped[int] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(String(64), unique=True)
    event_type: Mapped[str] = mapped_column(String(40))
    instance_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    body: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    response_code: Mapped[int | None] = mapped_column(Integer, nullable=True)
    last_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    next_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    retry_until: Mapped[datetime] = mapped_column(UTCDateTime())
    last_attempt_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
