"""Notification tests: starting an instance as someone, running the worker's notification pass
in-process, and the outbox mails one address received. Needs an app context."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def start_as(version_id: int, starter: str = "dee", business_key: str = "REQ-1") -> int:
    """Start an instance of the version as `starter`; its id."""
    from sqlalchemy import select

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import ProcessVersion, User

    user = db.session.scalar(select(User).where(User.username == starter))
    version = db.session.get(ProcessVersion, version_id)
    result = steps.start_instance(db.session, version, actor=user, business_key=business_key)
    db.session.commit()
    return result.instance.id


def notify(config: Any, now: datetime | None = None) -> int:
    """One notification pass of a worker: due scan, pending mails, digests."""
    from webapp.extensions import db
    from webapp.models.base import utcnow
    from webapp.services import notifications

    return notifications.tick(db.session, config, now or utcnow())


def mails_to(address: str) -> list[Any]:
    """The outbox messages to `address`, oldest first."""
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import OutboxMessage

    db.session.rollback()
    return [
        m
        for m in db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
        if address in m.recipients
    ]
