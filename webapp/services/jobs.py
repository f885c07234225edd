"""RQ entry points (module-level, ids only) and the commit-then-enqueue helper.

The engine itself takes a session and knows no Flask; this service binds it to the app: AppWorker
runs these inside the app context, so they take the session, the queue and the settings from it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from flask import current_app
from redis import Redis
from redis.backoff import NoBackoff
from redis.retry import Retry
from rq import Queue

from webapp.engine import calls, dispatch, steps
from webapp.engine.errors import EngineError
from webapp.engine.runtime import StepResult
from webapp.extensions import db
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


def _run(step: Callable[[], StepResult]) -> str:
    try:
        result = step()
    except EngineError as error:
        db.session.rollback()
        return error.code
    except BaseException:
        db.session.rollback()
        raise
    commit(result)
    return "applied" if result.applied else result.note


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


def run_inline_tool(job_id: int, instance_id: int) -> str:
    """A pure tool: call it inside the step's transaction."""
    config = current_app.config
    return _run(
        lambda: steps.run_inline_tool(
            db.session, job_id, instance_id, lambda call: calls.invoke(call, config)
        )
    )


def fire_timer(job_id: int, instance_id: int) -> str:
    return _run(lambda: steps.fire_timer(db.session, job_id, instance_id))
