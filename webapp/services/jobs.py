"""RQ entry points (module-level, ids only) and the commit-then-enqueue helper.

The engine itself takes a session and knows no Flask; this service binds it to the app: AppWorker
runs these inside the app context, so they take the session, the queue and the settings from it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterable

from flask import current_app
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from webapp.engine import calls, dispatch, steps
from webapp.engine.dispatch import JobRef
from webapp.engine.errors import EngineError
from webapp.engine.runtime import StepResult
from webapp.extensions import db
from webapp.logs import about_job
from webapp.models.base import utcnow
from webapp.queue import redis_url

log = logging.getLogger(__name__)


def engine_queue() -> Queue | None:
    """The app's queue for engine jobs; None when Redis cannot even be configured.

    One object per app (RQ caches per queue) on its own client that gives up at once when Redis
    is down: a request then commits without waiting, and the sweep enqueues the job later.
    """
    app = current_app._get_current_object()
    queue = app.extensions.get("flowdesk.engine_queue")
    if queue is None:
        try:
            client = Redis.from_url(
                redis_url(app), retry=Retry(NoBackoff(), 1), socket_connect_timeout=2
            )
        except Exception as error:  # e.g. the embedded Redis cannot start
            log.warning("no Redis queue: %s", error)
            return None
        queue = Queue(app.config["RQ_QUEUE"], connection=client)
        app.extensions["flowdesk.engine_queue"] = queue
    return queue


def commit(results: StepResult | Iterable[StepResult]) -> None:
    """Commit the session, then enqueue the jobs the steps wrote (never the other way round)."""
    db.session.commit()
    if isinstance(results, StepResult):
        results = [results]
    refs = [ref for result in results for ref in result.jobs]
    if refs:
        dispatch.enqueue(engine_queue(), refs)


def _run(step: Callable[[], StepResult | None]) -> str:
    """Run a step, commit, then enqueue what it made; a hand-over step that found nothing to do
    (None) still commits what it marked."""
    try:
        result = step()
    except EngineError as error:
        db.session.rollback()
        return error.code
    except BaseException:
        db.session.rollback()
        raise
    if result is None:
        db.session.commit()
        return "not pending"
    _commit_and_follow_on(result)
    return "applied" if result.applied else result.note


# At most this many pure-tool jobs one delivery runs after its own step, so one instance cannot
# hold a worker for long.
FOLLOW_ON_LIMIT = 50


def _commit_and_follow_on(result: StepResult) -> None:
    """Commit; then run here, each in its own transaction, the pure-tool jobs the step made due
    now, instead of a round trip through Redis for each. Every other job goes to RQ. The rows are
    committed first, so a worker that dies half-way leaves them to the sweep like any lost
    delivery."""
    budget = FOLLOW_ON_LIMIT
    waiting: deque[JobRef] = deque()
    current: StepResult | None = result
    while current is not None:
        db.session.commit()
        now = utcnow()
        here = [r for r in current.jobs if r.entry == "inline" and r.due_at <= now][:budget]
        budget -= len(here)
        later = [r for r in current.jobs if r not in here]
        if later:
            dispatch.enqueue(engine_queue(), later)
        waiting.extend(here)
        current = None
        while waiting and current is None:
            ref = waiting.popleft()
            try:
                current = _inline_step(ref.id, ref.instance_id)
            except EngineError:
                db.session.rollback()
            except Exception:
                db.session.rollback()
                log.exception("follow-on job %s failed; handing it to the queue", ref.id)
                dispatch.enqueue(engine_queue(), [ref, *waiting])
                return


def _inline_step(job_id: int, instance_id: int) -> StepResult:
    config = current_app.config
    return steps.run_inline_tool(
        db.session, job_id, instance_id, lambda call: calls.invoke(call, config)
    )


@about_job
def run_tool(job_id: int, instance_id: int) -> str:
    """Lease the job, call the tool outside any transaction, then apply the outcome as a step."""
    session = db.session
    config = current_app.config
    try:
        call = steps.claim_tool_job(session, job_id, lease_grace=config["JOB_LEASE_GRACE"])
        session.commit()
    except BaseException:
        session.rollback()
        raise
    if call is None:
        return "not claimed"
    outcome = calls.invoke(call, config)
    return _run(
        lambda: steps.apply_tool_outcome(
            session, job_id, instance_id, outcome, attempt=call.attempt
        )
    )


@about_job
def run_inline_tool(job_id: int, instance_id: int) -> str:
    """A pure tool: call it inside the step's transaction."""
    return _run(lambda: _inline_step(job_id, instance_id))


@about_job
def fire_timer(job_id: int, instance_id: int) -> str:
    return _run(lambda: steps.fire_timer(db.session, job_id, instance_id))


@about_job
def start_called(job_id: int, instance_id: int) -> str:
    """A call activity's job: start the child instance."""
    return _run(lambda: steps.start_called(db.session, job_id))


@about_job
def resume_from_child(job_id: int, instance_id: int) -> str:
    """A called child ended: the caller moves on."""
    return _run(lambda: steps.resume_from_child(db.session, job_id, instance_id))


@about_job
def cancel_called(job_id: int, instance_id: int) -> str:
    """The caller ended: cancel this child."""
    return _run(lambda: steps.cancel_called(db.session, job_id, instance_id))
