"""Worker and queue health, read from RQ's registries in Redis and the jobs table."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis.exceptions import RedisError
from rq import Queue, Worker
from sqlalchemy import func, select

from webapp.extensions import db
from webapp.infra.queue import get_queue
from webapp.models import Job
from webapp.models.base import utcnow
from webapp.models.statuses import JobStatus


@dataclass
class WorkerInfo:
    name: str
    state: str
    host: str
    pid: int | None
    last_heartbeat: datetime | None
    current_job: str | None
    successful: int
    failed: int


@dataclass
class Health:
    redis_error: str | None = None
    workers: list[WorkerInfo] = field(default_factory=list)
    queued: int = 0
    started: int = 0
    failed: int = 0
    pending_jobs: int = 0
    overdue_jobs: int = 0
    # Timers and retries waiting in the database for their time (a worker's clock sends them).
    waiting_jobs: int = 0
    expired_leases: int = 0

    @property
    def alive(self) -> int:
        return len(self.workers)


def read(now: datetime | None = None) -> Health:
    """Everything the health page shows; a Redis outage is reported, not raised."""
    now = now or utcnow()
    health = Health()
    _database(health, now)
    try:
        queue = get_queue()
        _queue(health, queue)
        health.workers = [_worker(worker) for worker in Worker.all(queue=queue)]
    except (RedisError, OSError) as error:
        health.redis_error = str(error) or type(error).__name__
    health.workers.sort(key=lambda worker: worker.name)
    return health


def _queue(health: Health, queue: Queue) -> None:
    health.queued = queue.count
    health.started = queue.started_job_registry.count
    health.failed = queue.failed_job_registry.count


def _worker(worker: Any) -> WorkerInfo:
    job_id = worker.get_current_job_id()
    return WorkerInfo(
        name=worker.name,
        state=str(worker.get_state()),
        host=worker.hostname or "",
        pid=worker.pid,
        last_heartbeat=_aware(worker.last_heartbeat),
        current_job=job_id.decode() if isinstance(job_id, bytes) else job_id,
        successful=worker.successful_job_count,
        failed=worker.failed_job_count,
    )


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _database(health: Health, now: datetime) -> None:
    pending = Job.status == JobStatus.PENDING
    health.pending_jobs = db.session.scalar(select(func.count()).where(pending)) or 0
    health.overdue_jobs = (
        db.session.scalar(
            select(func.count()).where(pending, Job.due_at < now, Job.lease_until.is_(None))
        )
        or 0
    )
    health.waiting_jobs = (
        db.session.scalar(select(func.count()).where(Job.wake_at.is_not(None), pending)) or 0
    )
    health.expired_leases = (
        db.session.scalar(select(func.count()).where(pending, Job.lease_until < now)) or 0
    )
