"""Recovery: enqueue again the jobs whose delivery was lost, whose worker died, or whose time came.

Delivery is at least once: a job enqueued twice is harmless, because applying it checks that the
job is still pending for its token. The sweep only reads the database; it never changes instances.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from redis.exceptions import RedisError
from rq import Queue
from rq.job import Job as RQJob
from rq.registry import ScheduledJobRegistry
from rq.utils import utcparse
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from webapp.engine.dispatch import JobRef, enqueue, rq_job_id
from webapp.engine.runtime import entry_point
from webapp.models import Job
from webapp.models.base import utcnow

log = logging.getLogger(__name__)

BATCH = 500
MAX_BATCHES = 20


@dataclass
class SweepReport:
    examined: int = 0
    enqueued: int = 0


def sweep(
    session: Session, queue: Queue, *, grace: float, now: datetime | None = None
) -> SweepReport:
    """Enqueue due pending jobs that no live delivery will run; jobs due less than `grace`
    seconds ago are left alone (their own enqueue may still be on its way)."""
    now = now or utcnow()
    report = SweepReport()
    after = 0
    for _ in range(MAX_BATCHES):
        rows = session.execute(
            select(Job.id, Job.instance_id, Job.kind, Job.tool, Job.attempt, Job.timeout)
            .where(
                Job.status == "pending",
                Job.due_at <= now - timedelta(seconds=grace),
                or_(Job.lease_until.is_(None), Job.lease_until <= now),
                Job.id > after,
            )
            .order_by(Job.id)
            .limit(BATCH)
        ).all()
        session.rollback()
        report.examined += len(rows)
        if rows:
            try:
                report.enqueued += _enqueue_lost(queue, rows, now, grace)
            except RedisError as error:
                log.warning("sweep could not reach Redis: %s", error)
                break
            after = rows[-1].id
        if len(rows) < BATCH:
            break
    if report.enqueued:
        log.info("sweep enqueued %d job(s) again", report.enqueued)
    return report


def _enqueue_lost(queue: Queue, rows: Sequence[Any], now: datetime, grace: float) -> int:
    with queue.connection.pipeline(transaction=False) as pipe:
        for row in rows:
            pipe.hmget(RQJob.key_for(rq_job_id(row.id, row.attempt)), "status", "started_at")
        states = pipe.execute()
    refs: list[JobRef] = []
    late: list[str] = []
    for row, (status, started_at) in zip(rows, states, strict=True):
        state = status.decode() if status else None
        if not _lost(row, state, started_at, now, grace):
            continue
        ref = JobRef(row.id, row.instance_id, entry_point(row.kind, row.tool), now, row.attempt)
        refs.append(ref)
        if state == "scheduled":
            late.append(ref.rq_id)
    if late:
        queue.connection.zrem(ScheduledJobRegistry(queue=queue).key, *late)
    return len(refs) if refs and enqueue(queue, refs, now=now) else 0


def _lost(row, state: str | None, started_at: bytes | None, now: datetime, grace: float) -> bool:
    """Whether no live delivery will run this due job.

    The RQ id follows the job's attempt, so after a lease expired (its worker died or hung) the
    id looked up is the next attempt's, which does not exist until the sweep enqueues it.
    """
    if state is None or state in ("finished", "failed", "stopped", "canceled"):
        return True
    if state == "scheduled":
        return True  # due for longer than the grace: the scheduler is late or gone
    if state == "started":
        try:
            began = utcparse(started_at.decode()) if started_at else None
        except ValueError:
            began = None
        if began is None:
            return True
        began = began if began.tzinfo else began.replace(tzinfo=now.tzinfo)
        return began < now - timedelta(seconds=row.timeout + grace)
    return False
