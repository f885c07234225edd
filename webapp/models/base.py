"""Column helpers shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

from webapp.extensions import Base, db

# The models subclass db.Model, which Flask-SQLAlchemy builds at run time from Base's body and
# its own mixins; type checkers see Base, whose mapped attributes are the same.
if TYPE_CHECKING:
    Model = Base
else:
    Model = db.Model


def utcnow() -> datetime:
    """Aware UTC now; every timestamp in Flowdesk is UTC."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator):
    """A timestamp stored as UTC and always read back timezone-aware, on SQLite too."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
