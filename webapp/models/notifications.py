"""Notifications to people: one row per (user, event) to mail, the daily digests that gather
them, and the per-kind choices of users and the admin's defaults."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from webapp.models.base import Model, UTCDateTime, utcnow


class NotificationStatus(StrEnum):
    """Waiting for a worker, waiting for the user's digest, mailed, or dropped (why: `reason`)."""

    PENDING = "pending"
    DIGEST = "digest"
    SENT = "sent"
    SKIPPED = "skipped"
    FAILED = "failed"


class Notification(Model):
    """One event for one user; `key` is unique per (kind, event, user), so an event notifies a
    user once however often it is seen, and the mail's own key is made from it."""

    __tablename__ = "notifications"
    __table_args__ = (Index("ix_notifications_status_id", "status", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    task_id: Mapped[int | None] = mapped_column(
        ForeignKey("tasks.id", ondelete="CASCADE"), index=True, nullable=True
    )
    instance_id: Mapped[int | None] = mapped_column(
        ForeignKey("instances.id", ondelete="CASCADE"), index=True, nullable=True
    )
    key: Mapped[str] = mapped_column(String(200), unique=True)
    status: Mapped[str] = mapped_column(String(16), default=NotificationStatus.PENDING)
    reason: Mapped[str | None] = mapped_column(String(200), nullable=True)
    digest_id: Mapped[int | None] = mapped_column(
        ForeignKey("notification_digests.id", ondelete="SET NULL"), index=True, nullable=True
    )
    claim: Mapped[str | None] = mapped_column(String(32), nullable=True)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    attempts: Mapped[int] = mapped_column(default=0, server_default=text("0"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class NotificationDigest(Model):
    """One user's digest of one day (UTC): the unique pair makes it once a day."""

    __tablename__ = "notification_digests"
    __table_args__ = (UniqueConstraint("user_id", "day"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    day: Mapped[str] = mapped_column(String(10))
    claim: Mapped[str | None] = mapped_column(String(32), nullable=True)
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class NotificationPreference(Model):
    """How a user wants one kind of notification: immediately, in the daily digest, or not."""

    __tablename__ = "notification_preferences"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    mode: Mapped[str] = mapped_column(String(16))


class NotificationDefault(Model):
    """The admin's choice for a kind, for users who made none of their own."""

    __tablename__ = "notification_defaults"

    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    mode: Mapped[str] = mapped_column(String(16))
