"""A suspended process version starts nothing: every start path asks here first.

The API, the inbox start form, message, signal and timer starts and call activities read the
version's `suspended_at` (the row they already hold, or one indexed read) and refuse with a
message naming the version.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from webapp.engine.errors import EngineError
from webapp.models import Process, ProcessVersion

VERSIONS = ProcessVersion.__table__


def refusal(key: str, number: int, reason: str | None) -> EngineError:
    """The refusal of a start of version `number` of process `key` (HTTP 409)."""
    why = f" ({reason})" if reason else ""
    return EngineError(
        "version_suspended",
        f"Version {number} of process '{key}' is suspended{why}: it starts no instance until "
        "an operator resumes it.",
        status=409,
    )


def check_startable(version: ProcessVersion) -> None:
    """Raise the refusal (409) when `version` is suspended."""
    if version.suspended_at is not None:
        raise refusal(version.process.key, version.number, version.suspend_reason)


def suspension_of(conn: Connection, version_id: int) -> EngineError | None:
    """The refusal to start the version `version_id`, or None when it may start."""
    row = conn.execute(
        select(VERSIONS.c.number, VERSIONS.c.suspend_reason, Process.__table__.c.key)
        .join(Process.__table__, Process.__table__.c.id == VERSIONS.c.process_id)
        .where(VERSIONS.c.id == version_id, VERSIONS.c.suspended_at.is_not(None))
    ).first()
    return refusal(row.key, row.number, row.suspend_reason) if row is not None else None
