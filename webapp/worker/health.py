"""Small jobs that are not engine steps."""

from __future__ import annotations

from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import User


def healthcheck() -> dict[str, int]:
    """Proves a worker can reach the database: returns the number of users."""
    return {"users": db.session.scalar(select(func.count()).select_from(User)) or 0}
