"""Recovery: enqueue again the jobs whose delivery was lost, whose worker died, or whose time came.

No RQ state is trusted for ever: `started` only until the job should have been leased (a pure tool:
until its timeout), `scheduled` (left in RQ's scheduler by an earlier version) until the job is
due, `queued` only while the id waits in the queue list. A job due later waits in the database for
a worker's clock (engine/clock.py); one whose clock died between its claim and the enqueue has no
RQ record, and is sent again like any lost delivery. Delivery is at least once: a job enqueued
twice is harmless, because applying it checks that the job is still pending for its token. The
sweep only reads the database; it never changes instances. The jobs of a suspended instance
are left alone: its resume sends them.
"""

from __future__ import annotations

import logging
import time
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

from webapp.engine import signals
from webapp.engine.dispatch import EntryPoints, JobRef, enqueue, rq_job_id
from webapp.engine.runtime import entry_point
from webapp.models import Instance, Job
from webapp.models.base import utcnow
from webapp.models.statuses import JobStatus

log = logging.getLogger(__name__)

BATCH = 500
MAX_BATCHES = 20
# RQ states after which no delivery is under way, or whose own clock the sweep reads; any other
# (queued, deferred, ...) is trusted only while the id waits in the queue list.
SETTLED = frozenset({"finished", "failed", "stopped", "canceled", "scheduled", "started"})
# Seconds a live worker may take between taking a job from the queue list and marking it started.
HANDOVER = 0.25
# A queue list longer than this is not read at each sweep (see `_stranded`).
QUEUE_READ_LIMIT = 50_000


@dataclass
class SweepReport:
    examined: int = 0
    enqueued: int = 0


def sweep(
    session: Session,
    queue: Queue,
    entry_points: EntryPoints,
    *,
    grace: float,
    now: datetime | None = None,
    handover: float = HANDOVER,
) -> SweepReport:
    """Enqueue due pending jobs that no live delivery will run; jobs due less than `grace`
    seconds ago are left alone (their own enqueue may still be on its way). `entry_points`: the
    function each kind of delivery goes to (services/jobs.py)."""
    now = now or utcnow()
    report = SweepReport()
    waiting: list[tuple[Any, bytes]] = []
    after = 0
    try:
        for _ in range(MAX_BATCHES):
            rows = session.execute(
                select(Job.id, Job.instance_id, Job.kind, Job.tool, Job.attempt, Job.timeout)
                .where(
                    Job.status == JobStatus.PENDING,
                    Job.due_at <= now - timedelta(seconds=grace),
                    or_(Job.lease_until.is_(None), Job.lease_until <= now),
                    Job.id > after,
                    or_(Job.kind == "cancel", ~_suspended(Job.instance_id)),
                )
                .order_by(Job.id)
                .limit(BATCH)
            ).all()
            session.rollback()
            report.examined += len(rows)
            if rows:
                lost = _classify(queue, rows, now, grace, waiting)
                report.enqueued += _send_again(queue, lost, now, entry_points)
                after = rows[-1].id
            if len(rows) < BATCH:
                break
        stranded = _stranded(queue, waiting, handover)
        report.enqueued += _send_again(queue, stranded, now, entry_points)
        report.enqueued += _signals_again(session, queue, now, grace, entry_points)
    except RedisError as error:
        log.warning("sweep could not reach Redis: %s", error)
    if report.enqueued:
        log.info("sweep enqueued %d job(s) again", report.enqueued)
    return report


def _suspended(instance_id: Any) -> Any:
    """The instance is suspended: its jobs wait for the resume, which sends them again (a
    called child's cancel job still goes)."""
    return (
        select(Instance.id)
        .where(Instance.id == instance_id, Instance.suspended_at.is_not(None))
        .exists()
    )


def _signals_again(
    session: Session, queue: Queue, now: datetime, grace: float, entry_points: EntryPoints
) -> int:
    """Signal broadcasts and batches whose delivery was lost or whose worker died."""
    refs = signals.lost(session, queue, grace=grace, now=now)
    return len(refs) if refs and enqueue(queue, refs, entry_points) else 0


def _classify(
    queue: Queue,
    rows: Sequence[Any],
    now: datetime,
    grace: float,
    waiting: list[tuple[Any, bytes]],
) -> list[Any]:
    """The rows whose RQ state shows no delivery will run them; rows in a waiting state (queued,
    deferred, ...) go to `waiting` with that state, for `_stranded` to decide."""
    with queue.connection.pipeline(transaction=False) as pipe:
        for row in rows:
            pipe.hmget(RQJob.key_for(rq_job_id(row.id, row.attempt)), "status", "started_at")
        states = pipe.execute()
    lost: list[Any] = []
    late: list[str] = []
    for row, (status, started_at) in zip(rows, states, strict=True):
        state = status.decode() if status else None
        if state is not None and state not in SETTLED:
            waiting.append((row, status))
        elif _lost(row, state, started_at, now, grace):
            lost.append(row)
            if state == "scheduled":
                late.append(rq_job_id(row.id, row.attempt))
    if late:
        queue.connection.zrem(ScheduledJobRegistry(queue=queue).key, *late)
    return lost


def _send_again(queue: Queue, rows: Sequence[Any], now: datetime, entry_points: EntryPoints) -> int:
    """Enqueue fresh deliveries; a copy of the id left in the intermediate list goes first, or
    RQ's clean-up of that list would later mark the fresh delivery (same id) failed."""
    if not rows:
        return 0
    ids = [rq_job_id(row.id, row.attempt) for row in rows]
    with queue.connection.pipeline(transaction=False) as pipe:
        for rq_id in ids:
            pipe.lrem(queue.intermediate_queue_key, 0, rq_id)
        pipe.execute()
    refs = [
        JobRef(
            row.id, row.instance_id, entry_point(row.kind, row.tool), now, row.attempt, row.timeout
        )
        for row in rows
    ]
    return len(refs) if enqueue(queue, refs, entry_points) else 0


def _lost(row, state: str | None, started_at: bytes | None, now: datetime, grace: float) -> bool:
    """Whether no live delivery will run this due job, from an RQ state other than a waiting one.

    The RQ id follows the job's attempt, so after a lease expired (its worker died or hung) the
    id looked up is the next attempt's, which does not exist until the sweep enqueues it. A job
    still `started` under the id of its current attempt has not been leased yet: a tool job is
    leased and a timer fires within moments of starting, so past the grace its worker died
    first; a pure tool runs inside its step, for up to its timeout.
    """
    if state is None or state in ("finished", "failed", "stopped", "canceled"):
        return True
    if state != "started":
        return True  # scheduled in RQ by an earlier version, which no scheduler moves now
    try:
        began = utcparse(started_at.decode()) if started_at else None
    except ValueError:
        began = None
    if began is None:
        return True
    began = began if began.tzinfo else began.replace(tzinfo=now.tzinfo)
    running = row.timeout if entry_point(row.kind, row.tool) == "inline" else 0
    return began < now - timedelta(seconds=running + grace)


def _stranded(queue: Queue, waiting: Sequence[tuple[Any, bytes]], handover: float) -> list[Any]:
    """The jobs RQ calls queued (or deferred, ...) that no worker will take: not in the queue list.

    RQ's worker moves a job's id from the queue list to `<queue>:intermediate` and only then
    marks it started; one killed in between leaves `queued` for good. A live worker takes
    milliseconds over that, so a job found outside the list is looked at again `handover`
    seconds later and sent again only if its state has not moved. A job still in the list is a
    backlog: a second copy would only queue behind the first. A list too long to read at every
    sweep is not read; then only the ids in the intermediate list count as stranded.
    """
    if not waiting:
        return []
    connection = queue.connection
    queued = connection.lrange(queue.key, 0, QUEUE_READ_LIMIT)
    if len(queued) <= QUEUE_READ_LIMIT:
        listed = set(queued)
        outside = [(r, s) for r, s in waiting if _rq_key(r) not in listed]
    else:
        taken = set(connection.lrange(queue.intermediate_queue_key, 0, QUEUE_READ_LIMIT))
        outside = [(r, s) for r, s in waiting if _rq_key(r) in taken]
    if not outside:
        return []
    time.sleep(handover)
    with connection.pipeline(transaction=False) as pipe:
        for row, _ in outside:
            pipe.hget(RQJob.key_for(rq_job_id(row.id, row.attempt)), "status")
        again = pipe.execute()
    return [row for (row, first), then in zip(outside, again, strict=True) if then == first]


def _rq_key(row: Any) -> bytes:
    return rq_job_id(row.id, row.attempt).encode()
