"""RQ entry points (module-level, ids only), their table by kind, and the commit-then-enqueue
helper.

The engine itself takes a session and knows no Flask; this service binds it to the app: AppWorker
runs these inside the app context, so they take the session, the queue and the settings from it.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flask import current_app
from redis import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry
from rq import Queue

from webapp.engine import calls, dispatch, steps
from webapp.engine.calls import Call, Outcome
from webapp.engine.dispatch import JobRef
from webapp.engine.errors import EngineError
from webapp.engine.runtime import StepResult
from webapp.extensions import db
from webapp.infra.logs import about_job
from webapp.infra.queue import redis_url
from webapp.models.base import utcnow
from webapp.models.session import db_session

log = logging.getLogger(__name__)


def engine_queue() -> Queue | None:
    """The app's queue for engine jobs; None when Redis cannot even be configured.

    One object per app (RQ caches per queue) on its own client that gives up at once when Redis
    is down: a request then commits without waiting, and the sweep enqueues the job later.
    """
    app = current_app._get_current_object()  # type: ignore[attr-defined]  # a LocalProxy
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
        send(refs)


def send(refs: Iterable[JobRef]) -> bool:
    """Enqueue committed jobs, each to its kind's entry point; False when Redis is down."""
    return dispatch.enqueue(engine_queue(), refs, ENTRY_POINTS)


def _run(step: Callable[[], StepResult | None], began: float | None = None) -> str:
    """Run a step, commit, then enqueue what it made; a hand-over step that found nothing to do
    (None) still commits what it marked. `began`: when the delivery started (monotonic)."""
    began = time.monotonic() if began is None else began
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
    commit_and_follow_on(result, leased=True, began=began)
    return "applied" if result.applied else result.note


# At most this many jobs one delivery runs after its own step, so one instance cannot hold a
# worker for long; and once a delivery has run this many seconds, it hands the rest to RQ when
# other deliveries wait there (a timer, another instance's tool), so they are not held up.
FOLLOW_ON_LIMIT = 50
FOLLOW_ON_SECONDS = 0.25
# A tool whose calls in this worker take less than this is quick: of parallel branches, this
# worker runs the quick ones itself, one after the other, since a hand-over through RQ costs more
# (a few ms of CPU, a round trip through Redis) than waiting for a quick call.
QUICK_CALL_SECONDS = 0.025
# (tool, node) -> how long its recent calls in this worker took (a slower one weighs at once): a
# hint for where to run a call, never engine state.
_call_seconds: dict[tuple[str, str], float] = {}


def _note_call(call: Call, outcome: Outcome) -> None:
    seconds = outcome.duration_ms / 1000
    previous = _call_seconds.get((call.tool, call.node_id), seconds)
    _call_seconds[call.tool, call.node_id] = max(seconds, 0.7 * previous + 0.3 * seconds)


def _quick(ref: JobRef) -> bool:
    """Whether the job's calls (its tool at its node) in this worker have been quick; a call
    never made here is not."""
    seconds = _call_seconds.get((ref.tool, ref.node_id), QUICK_CALL_SECONDS)
    return seconds < QUICK_CALL_SECONDS


def commit_and_follow_on(
    result: StepResult, *, leased: bool = False, began: float | None = None
) -> None:
    """Commit; then run here the jobs the step made due now, instead of a round trip through
    Redis for each: pure tools each in a transaction of their own, and (`leased`) tools with
    side effects, each leased in the transaction of the step before it, called outside any
    transaction and applied in a step. Every other job goes to RQ. The rows are committed first,
    so a worker that dies half-way leaves them to the sweep like any lost delivery."""
    session = db_session()
    config = current_app.config
    began = time.monotonic() if began is None else began
    budget = FOLLOW_ON_LIMIT
    waiting: deque[JobRef] = deque()
    current: StepResult | None = result
    while True:
        later: list[JobRef] = []
        if current is not None:
            here, later = _keep_here(current.jobs, budget, leased=leased)
            budget -= len(here)
            waiting.extend(here)
        if waiting and time.monotonic() - began > FOLLOW_ON_SECONDS and _queue_length():
            later.extend(waiting)  # others wait for a worker: take turns through the queue
            waiting.clear()
        leased_calls: list[tuple[JobRef, Call | None]] = []
        if waiting and waiting[0].entry == "tool":
            # Leased in the transaction that made them due (or their own, after a failed step).
            together = _together(waiting)
            calls_now = steps.lease_tool_jobs(
                session,
                [(ref.id, ref.timeout) for ref in together],
                lease_grace=config["JOB_LEASE_GRACE"],
            )
            leased_calls = [(ref, calls_now.get(ref.id)) for ref in together]
        session.commit()
        if later:
            send(later)
        if not waiting:
            return
        ref = waiting[0]
        try:
            if ref.entry == "inline":
                waiting.popleft()
                current = _inline_step(ref.id, ref.instance_id)
            else:
                for _ in leased_calls:
                    waiting.popleft()
                current = _call_and_apply(leased_calls, config)
        except EngineError:
            session.rollback()
            current = None
        except Exception:
            session.rollback()
            log.exception("follow-on job %s failed; handing the rest to the queue", ref.id)
            # A leased job that failed here is the sweep's once its lease has run out.
            rest = list(waiting) if ref.entry == "tool" else [ref, *waiting]
            send(rest)
            return


# At most this many quick calls of one instance are leased together, called one after another
# and applied in one step.
CALLS_TOGETHER = 10


def _together(waiting: deque[JobRef]) -> list[JobRef]:
    """The tool jobs leased together: the first waiting one, and the quick ones of the same
    instance right after it (parallel branches), whose outcomes then go into one step."""
    head = waiting[0]
    together = [head]
    for ref in list(waiting)[1:CALLS_TOGETHER]:
        if ref.entry != "tool" or ref.instance_id != head.instance_id or not _quick(ref):
            break
        together.append(ref)
    return together


def _call_and_apply(leased: list[tuple[JobRef, Call | None]], config: Any) -> StepResult | None:
    """Call the leased tools one after another, outside any transaction, and apply their
    outcomes in one step; None when none was ours to call (cancelled, done, held elsewhere)."""
    outcomes = []
    for ref, call in leased:
        if call is None:
            continue
        outcome = calls.invoke(call, config)
        _note_call(call, outcome)
        outcomes.append((ref.id, outcome, call.attempt))
    if not outcomes:
        return None
    return steps.apply_tool_outcomes(
        db_session(), leased[0][0].instance_id, outcomes, run_pure=_pure_calls(config)
    )


def _keep_here(
    refs: list[JobRef], budget: int, *, leased: bool
) -> tuple[list[JobRef], list[JobRef]]:
    """Which of a step's jobs this worker runs next (due now, within the budget), and which go
    to RQ. Of several tools with side effects made due together (parallel branches), the worker
    keeps the first, and the others too when they are quick or the queue has a backlog: with an
    empty queue another worker may be idle and run a slow one at the same time."""
    now = utcnow()
    entries = ("inline", "tool") if leased else ("inline",)
    due = [r for r in refs if r.entry in entries and r.due_at <= now]
    tools = [r for r in due if r.entry == "tool"]
    quick = all(_quick(ref) for ref in tools[1:])
    if len(tools) > 1 and not quick and _queue_length() == 0:
        due = [r for r in due if r.entry != "tool" or r is tools[0]]
    here = due[:budget]
    return here, [r for r in refs if r not in here]


def _queue_length() -> int | None:
    """How many deliveries wait in the queue; None when Redis cannot say (then nothing could be
    sent either, and the worker keeps what it has)."""
    queue = engine_queue()
    if queue is None:
        return None
    try:
        return int(queue.connection.llen(queue.key))
    except (RedisError, OSError):
        return None


def _pure_calls(config: Any) -> Callable[[Call], Outcome]:
    """How a worker's step calls the pure tools it makes due (in its own transaction)."""
    return lambda call: calls.invoke(call, config)


def _inline_step(job_id: int, instance_id: int) -> StepResult:
    return steps.run_inline_tool(db_session(), job_id, instance_id, _pure_calls(current_app.config))


@about_job
def run_tool(job_id: int, instance_id: int, timeout: float | None = None) -> str:
    """Lease the job, call the tool outside any transaction, then apply the outcome as a step.
    With its `timeout` (deliveries carry it), the lease is one statement."""
    session = db_session()
    config = current_app.config
    grace = config["JOB_LEASE_GRACE"]
    began = time.monotonic()
    try:
        if timeout:
            call = steps.lease_tool_job(session, job_id, timeout, lease_grace=grace)
        else:  # a delivery enqueued before deliveries carried it
            call = steps.claim_tool_job(session, job_id, lease_grace=grace)
        session.commit()
    except BaseException:
        session.rollback()
        raise
    if call is None:
        return "not claimed"
    outcome = calls.invoke(call, config)
    _note_call(call, outcome)
    return _run(
        lambda: steps.apply_tool_outcome(
            session,
            job_id,
            instance_id,
            outcome,
            attempt=call.attempt,
            run_pure=_pure_calls(config),
        ),
        began,
    )


@about_job
def run_inline_tool(job_id: int, instance_id: int) -> str:
    """A pure tool: call it inside the step's transaction."""
    return _run(lambda: _inline_step(job_id, instance_id))


@about_job
def fire_timer(job_id: int, instance_id: int) -> str:
    run_pure = _pure_calls(current_app.config)
    return _run(lambda: steps.fire_timer(db_session(), job_id, instance_id, run_pure=run_pure))


@about_job
def start_called(job_id: int, instance_id: int) -> str:
    """A call activity's job: start the child instance."""
    return _run(lambda: steps.start_called(db_session(), job_id))


@about_job
def resume_from_child(job_id: int, instance_id: int) -> str:
    """A called child ended: the caller moves on."""
    return _run(lambda: steps.resume_from_child(db_session(), job_id, instance_id))


@about_job
def cancel_called(job_id: int, instance_id: int) -> str:
    """The caller ended: cancel this child."""
    return _run(lambda: steps.cancel_called(db_session(), job_id, instance_id))


#: The RQ function of each kind of delivery, for `dispatch.enqueue` and the sweep. The names RQ
#: stores (module and function) are those of the functions, so a delivery queued by an earlier
#: version finds its function. services/signals.py adds its broadcast and batch entries.
ENTRY_POINTS: dict[str, Callable[..., str]] = {
    "tool": run_tool,
    "inline": run_inline_tool,
    "timer": fire_timer,
    "call": start_called,
    "resume": resume_from_child,
    "cancel": cancel_called,
}


def add_entry_points(entries: Mapping[str, Callable[..., str]]) -> None:
    """Add the entry points of deliveries another service runs (signal broadcasts and batches)."""
    ENTRY_POINTS.update(entries)
