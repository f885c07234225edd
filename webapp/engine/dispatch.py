"""Handing job rows to RQ after the step that wrote them committed.

The database row is the truth; the RQ job is only a wake-up call. If Redis is down the enqueue is
logged and skipped, and the sweep enqueues the row later. RQ job ids are derived from the row and
its attempt, so the sweep can ask RQ whether the current delivery is still queued. A job due
later is not handed to RQ: it waits in the database until a worker's clock claims it when due
(webapp/engine/clock.py) and enqueues it here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from redis.exceptions import RedisError
from rq import Queue

log = logging.getLogger(__name__)

#: The RQ function that runs each kind of delivery (a job row's entry, a signal broadcast or
#: batch); the caller owns the table (services/jobs.py) and passes it in.
EntryPoints = Mapping[str, Callable[..., Any]]
FAILURE_TTL = 7 * 24 * 3600
# No result is kept: the job row holds the outcome, and the worker deletes RQ's record of a
# finished engine job in the same round trip as the rest of its clean-up (webapp/worker.py).
RESULT_TTL = 0


@dataclass(frozen=True)
class JobRef:
    """What a worker needs to pick up a job row: ids, when, and which entry point."""

    id: int
    instance_id: int
    entry: str
    due_at: datetime
    attempt: int
    # A tool job's timeout: a worker leasing it for a follow-on call needs no other read.
    timeout: float = 0.0
    # A tool job's tool and node: a worker keeps quick calls of parallel branches to itself
    # (webapp/services/jobs.py).
    tool: str = ""
    node_id: str = ""
    # Due later: it waits in the database for a worker's clock, which enqueues it when due.
    held: bool = False

    @property
    def rq_id(self) -> str:
        return rq_job_id(self.id, self.attempt, self.entry)


#: The RQ ids of job deliveries begin so; their arguments are (job id, instance id[, timeout]).
JOB_ID_PREFIX = "flowdesk-job-"


def rq_job_id(job_id: int, attempt: int, entry: str = "") -> str:
    """The RQ id of a delivery; signal broadcasts and batches have ids of their own."""
    if entry.startswith("signal"):
        return f"flowdesk-{entry}-{job_id}-{attempt}"
    return f"{JOB_ID_PREFIX}{job_id}-{attempt}"


def delivery_about(rq_id: str, args: tuple[Any, ...]) -> dict[str, Any]:
    """The instance and job a job delivery is about, from its RQ id and arguments; {} for
    anything else (signal broadcasts and batches, other RQ jobs)."""
    if rq_id.startswith(JOB_ID_PREFIX) and len(args) >= 2:
        return {"instance": args[1], "job": args[0]}
    return {}


def enqueue(queue: Queue | None, refs: Iterable[JobRef], entry_points: EntryPoints) -> bool:
    """Enqueue the jobs in one Redis round trip, each to its entry's function in
    `entry_points`, leaving out those held for a worker's clock; False (logged) when Redis
    cannot be reached."""
    refs = [ref for ref in refs if not ref.held]
    if not refs:
        return True
    if queue is None:
        log.warning("no queue: %d job(s) left for the sweep", len(refs))
        return False
    try:
        with queue.connection.pipeline() as pipe:
            # RQ's enqueue_call opens MULTI on a caller's pipeline unless one is open.
            pipe.multi()
            for ref in refs:
                # A tool's delivery carries its timeout: the worker leases it in one statement.
                args: tuple[Any, ...] = (ref.id, ref.instance_id)
                if ref.entry == "tool" and ref.timeout > 0:
                    args = (ref.id, ref.instance_id, ref.timeout)
                queue.enqueue_call(
                    entry_points[ref.entry],
                    args=args,
                    job_id=ref.rq_id,
                    timeout=-1,
                    result_ttl=RESULT_TTL,
                    failure_ttl=FAILURE_TTL,
                    description=f"flowdesk {ref.entry} job {ref.id}",
                    pipeline=pipe,
                )
            pipe.execute()
    except (RedisError, OSError) as error:
        log.warning("could not enqueue %d job(s), the sweep will: %s", len(refs), error)
        return False
    return True
