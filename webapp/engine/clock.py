"""Jobs due later wait in the database, not in Redis: a timer, a boundary timer, a retry after its
backoff keeps `wake_at` (its due time) and every worker's clock claims the due ones and enqueues
them (webapp/worker/clock.py).

Two clocks do not claim the same job: the claim is one UPDATE ... RETURNING over rows taken FOR
UPDATE SKIP LOCKED on PostgreSQL, and runs under the write lock (BEGIN IMMEDIATE) on SQLite.
Delivery stays at least once: a clock that dies between its claim and the enqueue leaves a
pending, due job that no RQ delivery will run, which the sweep sends again; applying a job checks
that it is still pending for its token, so a second delivery changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, func, select, update
from sqlalchemy.orm import Session

from webapp.engine.dispatch import JobRef
from webapp.engine.runtime import entry_point
from webapp.engine.store import JOBS
from webapp.infra.database import begin_write
from webapp.models.statuses import JobStatus

# The most jobs one claim takes; a clock claims again at once while more are due.
CLAIM_BATCH = 500

NEXT_WAKE = select(func.min(JOBS.c.wake_at)).where(JOBS.c.wake_at.is_not(None))
_DUE = (
    select(JOBS.c.id)
    .where(JOBS.c.wake_at <= bindparam("now"))
    .order_by(JOBS.c.wake_at)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)
# Withdrawn jobs (cancelled, done) that still had a wake time are cleared too, and not returned
# as pending, so they leave the index.
CLAIM = (
    update(JOBS)
    .where(JOBS.c.id.in_(_DUE.scalar_subquery()))
    .values(wake_at=None)
    .returning(
        JOBS.c.id,
        JOBS.c.instance_id,
        JOBS.c.kind,
        JOBS.c.tool,
        JOBS.c.node_id,
        JOBS.c.status,
        JOBS.c.due_at,
        JOBS.c.attempt,
        JOBS.c.timeout,
    )
)
RELEASE = (
    update(JOBS)
    .where(
        JOBS.c.id.in_(bindparam("job_ids", expanding=True)),
        JOBS.c.status == JobStatus.PENDING,
        JOBS.c.wake_at.is_(None),
    )
    .values(wake_at=JOBS.c.due_at)
)


def next_wake(session: Session) -> datetime | None:
    """When the earliest waiting job is due (read off the partial index, no lock); None when no
    job waits."""
    return session.connection().scalar(NEXT_WAKE)


def claim_due(session: Session, now: datetime, limit: int = CLAIM_BATCH) -> list[JobRef]:
    """Claim up to `limit` jobs whose wake time has come, in the open write transaction (the
    caller commits, then enqueues them); the pending ones, earliest first."""
    begin_write(session)
    rows = session.connection().execute(CLAIM, {"now": now, "limit": limit}).all()
    pending = sorted((row for row in rows if row.status == JobStatus.PENDING), key=_order)
    return [
        JobRef(
            row.id,
            row.instance_id,
            entry_point(row.kind, row.tool),
            row.due_at,
            row.attempt,
            row.timeout,
            row.tool or "",
            row.node_id,
        )
        for row in pending
    ]


def release(session: Session, refs: Sequence[JobRef]) -> None:
    """Give claimed jobs back to the clocks (their enqueue failed: Redis is down), unless a
    step changed them meanwhile."""
    if refs:
        begin_write(session)
        session.connection().execute(RELEASE, {"job_ids": [ref.id for ref in refs]})


def _order(row) -> tuple[datetime, int]:
    return row.due_at, row.id
