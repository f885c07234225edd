"""Named inbox filters per user: saving one under a name again replaces it."""

from __future__ import annotations

from sqlalchemy import func, select

from webapp.extensions import db
from webapp.models import SavedFilter, User

MAX_NAME = 100
MAX_FILTERS = 50


class FilterError(ValueError):
    """A filter that cannot be saved; the message is for the person saving it."""


def saved_filters(user: User) -> list[SavedFilter]:
    return list(
        db.session.scalars(
            select(SavedFilter).where(SavedFilter.user_id == user.id).order_by(SavedFilter.name)
        )
    )


def save_filter(user: User, name: str, query: str) -> SavedFilter:
    """Keep `query` (an inbox query string built by the app) under `name`; commits."""
    name = " ".join((name or "").split())
    if not name:
        raise FilterError("Give the filter a name.")
    if len(name) > MAX_NAME:
        raise FilterError(f"Use at most {MAX_NAME} characters for the name.")
    if len(query) > 1000:
        raise FilterError("This filter is too long to save.")
    existing = db.session.scalar(
        select(SavedFilter).where(SavedFilter.user_id == user.id, SavedFilter.name == name)
    )
    if existing is None:
        total = db.session.scalar(
            select(func.count(SavedFilter.id)).where(SavedFilter.user_id == user.id)
        )
        if (total or 0) >= MAX_FILTERS:
            raise FilterError(f"You can keep at most {MAX_FILTERS} filters; delete one first.")
        existing = SavedFilter(user_id=user.id, name=name)
        db.session.add(existing)
    existing.query = query
    db.session.commit()
    return existing


def delete_filter(user: User, filter_id: int) -> bool:
    """Delete one of the user's filters; False when there is no such filter of theirs."""
    found = db.session.get(SavedFilter, filter_id)
    if found is None or found.user_id != user.id:
        return False
    db.session.delete(found)
    db.session.commit()
    return True
