"""API tokens: a named, scoped credential of a user or a service account, stored as a hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from webapp.models.auth import User
from webapp.models.base import Model, UTCDateTime, utcnow


class ApiToken(Model):
    """One token; `key` (public, indexed) finds the row, `secret_hash` (SHA-256) proves it."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(64))
    scopes: Mapped[str] = mapped_column(String(200))  # space-separated scope names
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"), nullable=True
    )
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    user: Mapped[User] = relationship(foreign_keys=[user_id], lazy="joined")

    @property
    def scope_set(self) -> set[str]:
        return set(self.scopes.split())

    def status(self, now: datetime) -> str:
        """`revoked`, `expired` or `active`."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def __repr__(self) -> str:
        return f"<ApiToken {self.key} {self.name}>"
