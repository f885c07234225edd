"""The public steps. Each is one transaction on one instance that begins by locking its row.

Steps write but never commit: the caller commits, then passes `result.jobs` to `dispatch.enqueue`
(commit first, then enqueue). A step refused before any change raises EngineError.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from webapp.engine import (
    catching,
    definitions,
    held,
    instantiation,
    interpreter,
    multi,
    scopes,
    store,
    waits,
)
from webapp.engine.calls import Call, Outcome
from webapp.engine.context import jsonable
from webapp.engine.definitions import Definition
from webapp.engine.dispatch import JobRef
from webapp.engine.errors import EngineError
from webapp.engine.runtime import Step, StepResult
from webapp.engine.store import InstanceRow, JobRow, TokenRow
from webapp.engine.suspended_versions import suspension_of
from webapp.infra.database import begin_write
from webapp.models import Job, MessageSubscription, Process, ProcessVersion, Task, User
from webapp.models.base import utcnow
from webapp.models.statuses import (
    PAUSED_TOKEN,
    UNFINISHED_INSTANCE,
    AttemptStatus,
    CallOutcome,
    HeldKind,
    HistoryKind,
    InstanceStatus,
    JobStatus,
    TaskStatus,
    TokenStatus,
)

# A job delivered earlier than this is a stray duplicate; the scheduled delivery will come.
EARLY_TOLERANCE = timedelta(seconds=0.25)


class Actor(Protocol):
    """Who acts: a signed-in user, or just the id and name of one read for a job."""

    @property
    def id(self) -> int: ...

    @property
    def username(self) -> str: ...


def _name(user: Actor | None) -> str | None:
    return user.username if user is not None else None


def open_step(session: Session, instance_id: int, now: datetime, job_id: int | None = None):
    """Lock the instance and read the job's token and its scopes (and the job, if an open token
    owns it)."""
    step, jobs = open_step_with_jobs(session, instance_id, now, [job_id] if job_id else [])
    return step, jobs.get(job_id) if job_id else None


def open_step_with_jobs(
    session: Session, instance_id: int, now: datetime, job_ids: list[int]
) -> tuple[Step, dict[int, JobRow]]:
    """Lock the instance and read the open tokens owning the jobs `job_ids`, the scopes around
    them and, by id, those jobs (one statement after the lock, however many jobs); the step
    reads further tokens only when something needs them."""
    begin_write(session)
    conn = session.connection()
    locked = store.lock(conn, instance_id)
    if locked is None:
        raise EngineError("not_found", f"Instance {instance_id} does not exist.", status=404)
    instance, content_hash = locked
    definition = definitions.for_version_id(session, instance.version_id, content_hash)
    tokens, jobs = store.job_tokens(conn, instance_id, job_ids) if job_ids else ([], {})
    return Step(conn, instance, definition, tokens, now=now, complete=False), jobs


def starter_of(step: Step) -> str | None:
    """The username of whoever started the instance: the actor of the jobs this step writes."""
    if step.instance.started_by_id is None:
        return None
    return step.conn.scalar(select(User.username).where(User.id == step.instance.started_by_id))


def dropped(step: Step, note: str) -> StepResult:
    """Write the step (whatever it closed) and say why it applied nothing."""
    result = step.finish()
    result.applied = False
    result.note = note
    return result


def suspended(step: Step) -> bool:
    """Whether an operator suspended the step's instance: then it moves nothing."""
    return step.instance.suspended_at is not None


def _pending(step: Step, job: JobRow | None, kind: str) -> TokenRow | None:
    """The job's token, if the job is still pending and its token still waits for it (at the
    job's node, or as the host of the job's boundary event or event sub-process start)."""
    if job is None or step.instance.status not in UNFINISHED_INSTANCE:
        return None
    token = step.token(job.token_id) if job.token_id is not None else None
    if job.kind != kind or job.status != JobStatus.PENDING or token is None:
        return None
    if catching.watches(step, token, job.node_id):
        return token
    expected = TokenStatus.ACTIVE if kind == "tool" else TokenStatus.WAITING
    if token.status != expected or token.node_id != job.node_id:
        return None
    return token


def _due(step: Step, job: JobRow | None, kind: str) -> TokenRow | str:
    """The token of a pending job that is due, else why the delivery is dropped."""
    token = _pending(step, job, kind)
    if job is None or token is None:
        return "job no longer pending"
    if job.due_at > step.now + EARLY_TOLERANCE:
        return "not due yet"
    return token


# --- start ------------------------------------------------------------------------------------


def start_instance(
    session: Session,
    version: ProcessVersion | Definition,
    *,
    input: dict[str, Any] | None = None,
    business_key: str | None = None,
    partition_id: int | None = None,
    actor: Actor | None = None,
    via: str = "api",
    now: datetime | None = None,
    caller: dict[str, Any] | None = None,
    start_node: str | None = None,
) -> StepResult:
    """Create an instance of `version` (or of the version a definition was read from) and move
    its start token until it waits or ends.

    `caller` links a called child to its call activity: parent_id, parent_token_id,
    parent_node_id, parent_step and call_depth. `start_node` is the message, timer or signal
    start event that started it (default: the none start event).
    """
    begin_write(session)
    now = now or utcnow()
    definition = version if isinstance(version, Definition) else definitions.for_version(version)
    start = start_node or definition.start
    if start_node is not None and start_node not in definition.event_starts:
        raise EngineError("no_start", f"Node '{start_node}' is no start event of the process.")
    if start is None:
        raise EngineError(
            "no_start",
            f"Process '{definition.process_key}' version {definition.number} has no none start "
            "event: only its message, timer or signal start events start it.",
            status=409,
        )
    instance = InstanceRow(
        id=None,
        version_id=definition.version_id,
        process_key=definition.process_key,
        version=definition.number,
        partition_id=partition_id,
        status=InstanceStatus.RUNNING,
        input=jsonable(input or {}),
        vars={},
        nodes={},
        business_key=business_key,
        started_via=via,
        started_by_id=actor.id if actor is not None else None,
        created_at=now,
        updated_at=now,
        **(caller or {}),
    )
    step = Step(session.connection(), instance, definition, [], now=now, starter=_name(actor))
    step.history.add(
        HistoryKind.STARTED,
        actor=_name(actor),
        via=via,
        version=definition.number,
        business_key=business_key,
        parent=instance.parent_id,
    )
    step.pool(instance.input)
    if definition.event_subprocesses:
        scopes.open_event_subprocesses(step, None, None)
    if start in definition.triggers:
        instantiation.begin(step, start, instance.input)
    else:
        token = step.new_token(start)
        step.enter(token, start, None)
    interpreter.run(step)
    return step.finish()


# --- tool jobs --------------------------------------------------------------------------------


def _lock_due_job(session: Session, job_id: int, kind: str, now: datetime) -> JobRow | None:
    """Lock the job row alone (no instance lock) and read it; None unless it is a pending job of
    `kind` that is due."""
    begin_write(session)
    row = (
        session.connection()
        .execute(select(store.JOBS).where(store.JOBS.c.id == job_id).with_for_update())
        .first()
    )
    if row is None:
        return None
    job = store.job_row(row._mapping)
    if job.kind != kind or job.status != JobStatus.PENDING or job.due_at > now + EARLY_TOLERANCE:
        return None
    return job


def claim_tool_job(
    session: Session, job_id: int, *, lease_grace: float, now: datetime | None = None
) -> Call | None:
    """Lease a due, pending tool job for one attempt (no instance lock) when its timeout is not
    known yet (a delivery that does not carry it); None when not ours."""
    begin_write(session)
    jobs = store.JOBS
    timeout = session.connection().scalar(select(jobs.c.timeout).where(jobs.c.id == job_id))
    if timeout is None:
        return None
    return lease_tool_job(session, job_id, timeout, lease_grace=lease_grace, now=now)


def lease_tool_job(
    session: Session,
    job_id: int,
    timeout: float,
    *,
    lease_grace: float,
    now: datetime | None = None,
) -> Call | None:
    """Lease a due, pending tool job in one statement, inside whatever write transaction is open
    (a worker's step that made it due); None when it is not ours to call."""
    now = now or utcnow()
    begin_write(session)
    row = (
        session.connection()
        .execute(
            store.LEASE_JOB,
            {
                "job_id": job_id,
                "due_by": now + EARLY_TOLERANCE,
                "now": now,
                "until": now + timedelta(seconds=timeout + lease_grace),
            },
        )
        .first()
    )
    return _call(store.job_row(row._mapping)) if row is not None else None


def lease_tool_jobs(
    session: Session,
    jobs: list[tuple[int, float]],
    *,
    lease_grace: float,
    now: datetime | None = None,
) -> dict[int, Call]:
    """Lease the due, pending tool jobs among `jobs` (id, timeout) as `lease_tool_job` does,
    one statement for the jobs of each timeout; the calls of those that were ours, by id."""
    now = now or utcnow()
    begin_write(session)
    conn = session.connection()
    by_timeout: dict[float, list[int]] = {}
    for job_id, timeout in jobs:
        by_timeout.setdefault(timeout, []).append(job_id)
    leased: dict[int, Call] = {}
    for timeout, job_ids in by_timeout.items():
        values = {
            "due_by": now + EARLY_TOLERANCE,
            "now": now,
            "until": now + timedelta(seconds=timeout + lease_grace),
        }
        if len(job_ids) == 1:
            rows = conn.execute(store.LEASE_JOB, {"job_id": job_ids[0], **values})
        else:
            rows = conn.execute(store.LEASE_JOBS, {"job_ids": job_ids, **values})
        for row in rows:
            call = _call(store.job_row(row._mapping))
            leased[call.job_id] = call
    return leased


def _call(job: JobRow) -> Call:
    return Call(
        job_id=store.saved_id(job.id),
        instance_id=job.instance_id,
        node_id=job.node_id,
        tool=job.tool or "",
        inputs=dict(job.inputs or {}),
        key=job.key,
        actor=job.actor,
        timeout=job.timeout,
        attempt=job.attempt,
    )


def apply_tool_outcome(
    session: Session,
    job_id: int,
    instance_id: int,
    outcome: Outcome,
    *,
    attempt: int,
    now: datetime | None = None,
    run_pure: Callable[[Call], Outcome] | None = None,
) -> StepResult:
    """Apply an attempt's outcome; a job no longer pending (cancelled, done) drops it. With
    `run_pure` (a worker), the pure tools it makes due run in the same transaction."""
    return apply_tool_outcomes(
        session, instance_id, [(job_id, outcome, attempt)], now=now, run_pure=run_pure
    )


def apply_tool_outcomes(
    session: Session,
    instance_id: int,
    outcomes: list[tuple[int, Outcome, int]],
    *,
    now: datetime | None = None,
    run_pure: Callable[[Call], Outcome] | None = None,
) -> StepResult:
    """Apply the outcomes (job id, outcome, attempt) of calls made for one instance, in order,
    in one step, as consecutive steps would: an outcome whose job an earlier one ended (its
    token left or was cancelled) is dropped, as is one of a job no longer pending."""
    job_ids = [job_id for job_id, _, _ in outcomes]
    step, leased = open_step_with_jobs(session, instance_id, now or utcnow(), job_ids)
    if suspended(step):
        for job_id, outcome, attempt in outcomes:
            held.keep_outcome(step.conn, instance_id, job_id, outcome, attempt, step.now)
        return dropped(step, held.SUSPENDED_NOTE)
    return apply_outcomes(step, leased, outcomes, run_pure)


def apply_outcomes(
    step: Step,
    leased: dict[int, JobRow],
    outcomes: list[tuple[int, Outcome, int]],
    run_pure: Callable[[Call], Outcome] | None = None,
) -> StepResult:
    """Apply outcomes of the jobs `leased` (read with the step) in order, in the open step."""
    applied = 0
    for job_id, outcome, attempt in outcomes:
        job = leased.get(job_id)
        token = _pending(step, job, "tool")
        if job is None or token is None:
            node_id = (
                job.node_id
                if job is not None
                else step.conn.scalar(select(Job.node_id).where(Job.id == job_id))
            )
            step.history.add(
                HistoryKind.TOOL_ATTEMPT,
                None,
                node_id,
                attempt=attempt,
                status=AttemptStatus.DISCARDED,
            )
            continue
        _apply(step, job, token, outcome, attempt)
        interpreter.run(step)
        applied += 1
    if not applied:
        return dropped(step, "job no longer pending")
    return finish_with_pure_calls(step, run_pure)


def run_inline_tool(
    session: Session,
    job_id: int,
    instance_id: int,
    run: Callable[[Call], Outcome],
    *,
    now: datetime | None = None,
) -> StepResult:
    """Run a pure tool inside the step's transaction (no lease needed) and apply its outcome,
    and so the pure tools that makes due."""
    step, job = open_step(session, instance_id, now or utcnow(), job_id)
    if suspended(step):
        return dropped(step, held.SUSPENDED_NOTE)
    token = _due(step, job, "tool")
    if not isinstance(token, TokenRow):
        return dropped(step, token)
    job.attempt += 1
    _apply(step, job, token, run(_call(job)), job.attempt)
    interpreter.run(step)
    return finish_with_pure_calls(step, run)


# Pure tool calls one transaction runs after its step, at most (the rest go on as jobs).
PURE_CALLS_PER_TRANSACTION = 50


def finish_with_pure_calls(step: Step, run_pure: Callable[[Call], Outcome] | None) -> StepResult:
    """Write the step; in a worker (`run_pure`), then call the pure tools it made due and apply
    their outcomes in the same transaction, still holding the instance, wave after wave: each as
    its own job (attempt, history) would be in a step of its own, without a transaction of its
    own. Pure tools have no side effects, so nothing is called twice if this transaction is lost.
    """
    result = step.finish()
    budget = PURE_CALLS_PER_TRANSACTION
    while run_pure is not None and budget > 0:
        ran = 0
        for job in step.due_pure_jobs()[:budget]:
            token = _due(step, job, "tool")
            if not isinstance(token, TokenRow):
                continue
            job.attempt += 1
            _apply(step, job, token, run_pure(_call(job)), job.attempt)
            ran += 1
        if not ran:
            break
        budget -= ran
        interpreter.run(step)
        result = step.finish()
    return result


def _apply(step: Step, job: JobRow, token: TokenRow, outcome: Outcome, attempt: int) -> None:
    step.track(job)
    job.lease_until = None
    step.history.add(
        HistoryKind.TOOL_ATTEMPT,
        token,
        tool=job.tool,
        attempt=attempt,
        status=AttemptStatus.OK if outcome.ok else AttemptStatus.ERROR,
        duration_ms=outcome.duration_ms,
        code=outcome.code or None,
        message=outcome.message or None,
    )
    if outcome.ok:
        job.status = JobStatus.DONE
        step.starter = job.actor
        step.complete(token, jsonable(outcome.output))
        return
    job.last_error = {"code": outcome.code, "message": outcome.message, "attempt": attempt}
    if outcome.bpmn_error:
        job.status = JobStatus.FAILED
        step.starter = job.actor
        scopes.raise_error(step, token, outcome.code, outcome.message)
        return
    if outcome.retryable and job.attempt < job.max_attempts:
        job.due_at = step.now + timedelta(seconds=job.backoff * 2 ** (job.attempt - 1))
        return
    job.status = JobStatus.FAILED
    step.fail(token, outcome.code, outcome.message, attempts=job.attempt)


# --- timers, messages, tasks ------------------------------------------------------------------


def fire_timer(
    session: Session,
    job_id: int,
    instance_id: int,
    *,
    now: datetime | None = None,
    run_pure: Callable[[Call], Outcome] | None = None,
) -> StepResult:
    """A due timer moves its token on; early or stale deliveries are dropped. With `run_pure`
    (a worker), the pure tools it makes due run in the same transaction."""
    step, job = open_step(session, instance_id, now or utcnow(), job_id)
    if suspended(step):
        return dropped(step, held.SUSPENDED_NOTE)
    token = _due(step, job, "timer")
    if not isinstance(token, TokenRow):
        return dropped(step, token)
    step.track(job)
    if multi.is_fan_out(token, job.node_id):
        job.status = JobStatus.DONE
        multi.fan_out(step, token)
        interpreter.run(step)
        return finish_with_pure_calls(step, run_pure)
    job.status = JobStatus.DONE
    job.attempt += 1
    step.history.add(HistoryKind.TIMER, token, job.node_id, due=job.due_at.isoformat())
    step.starter = starter_of(step)
    if job.node_id == token.node_id:
        step.complete(token)
    else:
        again = waits.next_due(step.definition.config(job.node_id), job.attempt, job.due_at)
        if catching.event_fired(step, token, job.node_id) and again is not None:
            job.status = JobStatus.PENDING
            job.due_at = again
    interpreter.run(step)
    return finish_with_pure_calls(step, run_pure)


def message_targets(
    session: Session, name: str, correlation_key: str, partitions: set[int] | None = None
) -> list[int]:
    """Ids of instances waiting for the message; `partitions` (None = all) limits which."""
    query = (
        select(MessageSubscription.instance_id)
        .join(store.INSTANCES, store.INSTANCES.c.id == MessageSubscription.instance_id)
        .where(
            MessageSubscription.kind == "message",
            MessageSubscription.name == name,
            MessageSubscription.correlation_key == correlation_key,
        )
        .distinct()
        .order_by(MessageSubscription.instance_id)
    )
    if partitions is not None:
        partition = store.INSTANCES.c.partition_id
        allowed = partition.in_(sorted(partitions)) if partitions else False
        query = query.where(partition.is_(None) | allowed)
    return list(session.scalars(query))


def deliver_message(
    session: Session,
    instance_id: int,
    name: str,
    correlation_key: str,
    payload: Any,
    *,
    actor: User | None = None,
    now: datetime | None = None,
) -> StepResult:
    """Wake every token of the instance waiting for this message and key; payload is the output.
    A suspended instance keeps the message (its subscriptions stay) and applies it on resume."""
    step, _ = open_step(session, instance_id, now or utcnow())
    if suspended(step):
        if not _subscribed(step, name, correlation_key):
            return dropped(step, "no token waits for this message")
        data = {"name": name, "key": correlation_key, "payload": payload, "actor": _name(actor)}
        held.keep(step.conn, instance_id, HeldKind.MESSAGE, data, step.now)
        result = step.finish()
        result.note = held.SUSPENDED_NOTE
        return result
    if not wake_for_message(step, name, correlation_key, payload, _name(actor)):
        return dropped(step, "no token waits for this message")
    step.starter = starter_of(step)
    interpreter.run(step)
    return step.finish()


def _message_match(instance_id: int, name: str, correlation_key: str) -> tuple[Any, ...]:
    table = MessageSubscription.__table__
    return (
        table.c.instance_id == instance_id,
        table.c.kind == "message",
        table.c.name == name,
        table.c.correlation_key == correlation_key,
    )


def _subscribed(step: Step, name: str, correlation_key: str) -> bool:
    table = MessageSubscription.__table__
    matching = _message_match(store.saved_id(step.instance.id), name, correlation_key)
    return step.conn.execute(select(table.c.id).where(*matching).limit(1)).first() is not None


def wake_for_message(
    step: Step, name: str, correlation_key: str, payload: Any, actor: str | None
) -> int:
    """Fire the step's tokens (catches, boundary events, ...) subscribed to the message and key,
    with `payload` as output, in subscription order; how many woke."""
    table = MessageSubscription.__table__
    matching = _message_match(store.saved_id(step.instance.id), name, correlation_key)
    subscriptions = step.conn.execute(
        select(table.c.token_id, table.c.node_id).where(*matching).order_by(table.c.id)
    ).all()
    step.conn.execute(delete(table).where(*matching))
    woken = 0
    payload = jsonable(payload)
    for token_id, node_id in subscriptions:
        token = step.token(token_id)
        if token is None:
            continue
        if catching.watches(step, token, node_id):
            woken += 1
            step.history.add(
                HistoryKind.MESSAGE,
                token,
                node_id,
                actor=actor,
                name=name,
                key=correlation_key,
            )
            if catching.event_fired(step, token, node_id, payload):
                waits.place(
                    step, token, waits.Wait(node_id, "message", name=name, key=correlation_key)
                )
            continue
        if token.status != TokenStatus.WAITING or token.node_id != node_id:
            continue
        woken += 1
        step.history.add(HistoryKind.MESSAGE, token, actor=actor, name=name, key=correlation_key)
        step.complete(token, payload)
    return woken


def lock_task(session: Session, task_id: int, now: datetime | None = None) -> Step | None:
    """Lock the instance of a task and open its step (None when there is no such task): a caller
    checks the task under the lock, then completes or reports it in this same step."""
    begin_write(session)
    conn = session.connection()
    locked = store.lock_of_task(conn, task_id)
    if locked is None:
        return None
    instance, content_hash = locked
    definition = definitions.for_version_id(session, instance.version_id, content_hash)
    return Step(conn, instance, definition, [], now=now or utcnow(), complete=False)


def waiting_at(step: Step, status: str, token_id: int | None, node_id: str) -> TokenRow | None:
    """The token an open task (its `status`, token and node) waits with; None when it is closed
    or its token no longer waits there."""
    token = step.token(token_id) if token_id is not None else None
    waiting = token is not None and token.status == TokenStatus.WAITING
    if status != TaskStatus.OPEN or token is None or not waiting or token.node_id != node_id:
        return None
    return token


def _open_task(session: Session, task_id: int, now: datetime | None) -> tuple[Step, TokenRow]:
    """Lock the instance of an open task: its step and the token waiting there (EngineError when
    the task does not exist or is no longer open)."""
    step = lock_task(session, task_id, now)
    if step is None:
        raise EngineError("not_found", f"Task {task_id} does not exist.", status=404)
    table = Task.__table__
    task = step.conn.execute(
        select(table.c.status, table.c.token_id, table.c.node_id).where(table.c.id == task_id)
    ).one()
    return step, _task_token(
        step, task_id, waiting_at(step, task.status, task.token_id, task.node_id)
    )


def refuse_if_suspended(step: Step, task_id: int) -> None:
    """A task of a suspended instance is not completed (nor reported from): 409."""
    if suspended(step):
        raise EngineError(
            "suspended",
            f"Instance {step.instance.id} is suspended: task {task_id} can be claimed and read, "
            "but not completed until an operator resumes the instance.",
            status=409,
        )


def _task_token(step: Step, task_id: int, token: TokenRow | None) -> TokenRow:
    refuse_if_suspended(step, task_id)
    if token is None:
        raise EngineError("task_closed", f"Task {task_id} is no longer open.", status=409)
    return token


def _close_task(
    step: Step, task_id: int, actor: User | None, result: dict[str, Any], *, claim: bool = False
) -> None:
    """Mark the task completed by `actor` with `result`, inside the step's transaction; `claim`:
    it had no assignee, and becomes the actor's in the same statement."""
    table = Task.__table__
    actor_id = actor.id if actor is not None else None
    claimed = {"assignee_id": actor_id, "claimed_at": step.now} if claim else {}
    step.conn.execute(
        update(table)
        .where(table.c.id == task_id)
        .values(
            status=TaskStatus.COMPLETED,
            completed_by_id=actor_id,
            completed_at=step.now,
            result=result,
            **claimed,
        )
    )


def complete_task(
    session: Session,
    task_id: int,
    values: dict[str, Any],
    *,
    actor: User | None,
    now: datetime | None = None,
) -> StepResult:
    """Complete an open task with its (already validated) form values; the token moves on."""
    step, token = _open_task(session, task_id, now)
    return _complete(step, task_id, token, values, actor)


def complete_locked_task(
    step: Step,
    task_id: int,
    token: TokenRow | None,
    values: dict[str, Any],
    *,
    actor: User | None,
    claim: bool = False,
) -> StepResult:
    """Complete an open task in the step `lock_task` opened, with the token `waiting_at` found
    (EngineError when None); `claim`: the task becomes the actor's as it completes."""
    return _complete(step, task_id, _task_token(step, task_id, token), values, actor, claim=claim)


def _complete(
    step: Step,
    task_id: int,
    token: TokenRow,
    values: dict[str, Any],
    actor: User | None,
    *,
    claim: bool = False,
) -> StepResult:
    values = jsonable(values)
    _close_task(step, task_id, actor, values, claim=claim)
    step.history.add(HistoryKind.TASK_COMPLETED, token, actor=_name(actor), task=task_id)
    step.starter = starter_of(step)
    step.complete(token, values)
    interpreter.run(step)
    return step.finish()


def report_from_task(
    session: Session,
    task_id: int,
    event: str,
    code: str,
    *,
    actor: User | None,
    now: datetime | None = None,
) -> StepResult:
    """A person throws a business error or an escalation from an open task instead of
    completing it (Camunda's handleBpmnError / handleEscalation): it is routed as a thrown one,
    and the task ends as completed by `actor` when its catcher, on the task or on any scope
    around it, interrupts it."""
    _reportable_event(event)
    step, token = _open_task(session, task_id, now)
    return _report(step, task_id, token, event, code, actor)


def report_locked_task(
    step: Step,
    task_id: int,
    token: TokenRow | None,
    event: str,
    code: str,
    *,
    actor: User | None,
    claim: bool = False,
) -> StepResult:
    """`report_from_task` in the step `lock_task` opened, with the token `waiting_at` found;
    `claim`: the task becomes the actor's (it stays so when the catcher does not interrupt)."""
    _reportable_event(event)
    token = _task_token(step, task_id, token)
    if claim:
        table = Task.__table__
        step.conn.execute(
            update(table)
            .where(table.c.id == task_id)
            .values(assignee_id=actor.id if actor is not None else None, claimed_at=step.now)
        )
    return _report(step, task_id, token, event, code, actor)


def _reportable_event(event: str) -> None:
    if event not in ("error", "escalation"):
        raise EngineError(
            "invalid", f"Only an error or an escalation can be reported, not {event}."
        )


def _report(
    step: Step, task_id: int, token: TokenRow, event: str, code: str, actor: User | None
) -> StepResult:
    step.history.add(
        HistoryKind.TASK_REPORTED, token, actor=_name(actor), task=task_id, event=event, code=code
    )
    step.starter = starter_of(step)
    if event == "error":
        _close_task(step, task_id, actor, {})
        scopes.raise_error(step, token, code, f"reported from task {task_id}")
    else:
        scopes.throw(step, token, "escalation", code)
        if token.status == TokenStatus.CANCELLED:
            _close_task(step, task_id, actor, {})
    interpreter.run(step)
    return step.finish()


# --- operators --------------------------------------------------------------------------------


def cancel_instance(
    session: Session,
    instance_id: int,
    *,
    reason: str = "",
    actor: User | None = None,
    now: datetime | None = None,
) -> StepResult:
    """Close every token, job, subscription and open task; the instance ends cancelled."""
    step, _ = open_step(session, instance_id, now or utcnow())
    instance = step.instance
    if instance.status not in UNFINISHED_INSTANCE:
        raise EngineError(
            "not_active",
            f"Instance {instance_id} is {instance.status}; "
            "only running or failed instances can be cancelled.",
        )
    for token in step.tokens:
        token.status = TokenStatus.CANCELLED
    conn = step.conn
    instances = store.INSTANCES
    called = conn.execute(
        select(instances.c.id).where(
            instances.c.parent_id == instance_id,
            instances.c.status.in_(UNFINISHED_INSTANCE),
        )
    ).scalars()
    for child_id in called:
        step.cancel_child(child_id)
    conn.execute(
        update(store.JOBS)
        .where(store.JOBS.c.instance_id == instance_id, store.JOBS.c.status == JobStatus.PENDING)
        .values(status=JobStatus.CANCELLED, lease_until=None, wake_at=None, updated_at=step.now)
    )
    subscriptions = MessageSubscription.__table__
    conn.execute(delete(subscriptions).where(subscriptions.c.instance_id == instance_id))
    tasks = Task.__table__
    conn.execute(
        update(tasks)
        .where(tasks.c.instance_id == instance_id, tasks.c.status == TaskStatus.OPEN)
        .values(status=TaskStatus.CANCELLED)
    )
    if suspended(step):
        held.take(conn, instance_id)
        conn.execute(
            update(instances)
            .where(instances.c.id == instance_id)
            .values(suspended_at=None, suspended_by_id=None, suspend_reason=None)
        )
        instance.suspended_at = None
    instance.status = InstanceStatus.CANCELLED
    instance.ended_at = step.now
    step.history.add(HistoryKind.CANCELLED, actor=_name(actor), reason=reason or None)
    if instance.parent_id is not None:
        step.report_to_parent(CallOutcome.CANCELLED)
    return step.finish()


def retry_instance(
    session: Session, instance_id: int, *, actor: User | None = None, now: datetime | None = None
) -> StepResult:
    """Failed tokens re-enter their node with fresh attempts; the instance runs again."""
    step, _ = open_step(session, instance_id, now or utcnow())
    instance = step.instance
    if instance.status != InstanceStatus.FAILED:
        raise EngineError(
            "not_failed",
            f"Instance {instance_id} is {instance.status}; only failed instances can be retried.",
        )
    if suspended(step):
        raise EngineError(
            "suspended",
            f"Instance {instance_id} is suspended; resume it before retrying.",
            status=409,
        )
    instance.status = InstanceStatus.RUNNING
    instance.error = None
    step.starter = starter_of(step)
    for token in [t for t in step.tokens if t.status == TokenStatus.FAILED]:
        step.history.add(HistoryKind.RETRIED, token, actor=_name(actor))
        step.enter(token, token.node_id, token.arrived_via, again=True)
    interpreter.run(step)
    return step.finish()


# --- call activities: hand-overs between a caller and its child ------------------------------


def _called_definition(session: Session, key: str, number: int | None) -> Definition | None:
    """The definition of the version a call activity starts (the latest unless `number`), read
    from the database only on a cache miss."""
    query = (
        select(ProcessVersion.id, ProcessVersion.content_hash)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == key)
    )
    if number is not None:
        query = query.where(ProcessVersion.number == number)
    found = session.execute(query.order_by(ProcessVersion.number.desc()).limit(1)).first()
    if found is None:
        return None
    return definitions.for_version_id(session, found.id, found.content_hash)


def start_called(
    session: Session, job_id: int, *, now: datetime | None = None
) -> StepResult | None:
    """Start the child of a pending `call` job (the job row is locked, never the caller's row);
    None when the job is no longer pending. A child that cannot start reports back at once."""
    now = now or utcnow()
    job = _lock_due_job(session, job_id, "call", now)
    if job is None:
        return None
    conn = session.connection()
    instances = store.INSTANCES
    parent = conn.execute(
        select(
            instances.c.partition_id,
            instances.c.started_by_id,
            instances.c.call_depth,
            instances.c.status,
            instances.c.suspended_at,
        ).where(instances.c.id == job.instance_id)
    ).first()
    if parent is not None and parent.suspended_at is not None:
        return None  # the call waits, pending, until its caller is resumed
    conn.execute(
        update(store.JOBS)
        .where(store.JOBS.c.id == job_id)
        .values(status=JobStatus.DONE, attempt=job.attempt + 1, updated_at=now)
    )
    if parent is None or parent.status not in UNFINISHED_INSTANCE:
        return None
    options = job.inputs or {}
    definition = _called_definition(session, job.tool or "", options.get("version"))
    caller = {
        "parent_id": job.instance_id,
        "parent_token_id": job.token_id,
        "parent_node_id": job.node_id,
        "parent_step": options.get("step"),
        "call_depth": (parent.call_depth or 0) + 1,
    }
    if definition is None:
        wanted = f"version {options['version']} of " if options.get("version") else ""
        message = f"There is no published {wanted}process '{job.tool}' to call."
        return _report_missing(conn, job, caller, message, now)
    refusal = suspension_of(conn, definition.version_id)
    if refusal is not None:
        return _report_missing(conn, job, caller, refusal.message, now)
    actor = None
    if parent.started_by_id:
        actor = conn.execute(
            select(User.id, User.username).where(User.id == parent.started_by_id)
        ).first()
    return start_instance(
        session,
        definition,
        input=options.get("input") or {},
        partition_id=parent.partition_id,
        actor=actor,
        via="call",
        now=now,
        caller=caller,
    )


def _report_missing(
    conn: Any, job: JobRow, caller: dict[str, Any], message: str, now: datetime
) -> StepResult:
    """No child could start: a resume job tells the caller, whose step raises the incident."""
    values = {
        "instance_id": job.instance_id,
        "token_id": job.token_id,
        "node_id": job.node_id,
        "kind": "resume",
        "key": f"resume:call:{job.id}",
        "actor": job.actor,
        "status": JobStatus.PENDING,
        "due_at": now,
        "attempt": 0,
        "inputs": {
            "status": CallOutcome.MISSING,
            "message": message,
            "step": caller["parent_step"],
        },
        "created_at": now,
        "updated_at": now,
    }
    new_id = conn.execute(store.INSERT_JOBS, [values]).scalars().one()
    ref = JobRef(new_id, job.instance_id, "resume", now, 0)
    placeholder = InstanceRow(
        id=job.instance_id,
        version_id=0,
        process_key="",
        version=0,
        partition_id=None,
        status=InstanceStatus.RUNNING,
        input={},
        vars={},
        nodes={},
    )
    return StepResult(placeholder, [ref], applied=False, note="no version to call")


def resume_from_child(
    session: Session, job_id: int, instance_id: int, *, now: datetime | None = None
) -> StepResult:
    """The caller's step after its child ended: first the signals broadcast while the call ran
    that have not reached the caller (its catchers subscribed at the throw fire before the call
    ends), then move on with the child's data, throw its error, or raise an incident."""
    step, job = open_step(session, instance_id, now or utcnow(), job_id)
    if suspended(step):
        return dropped(step, held.SUSPENDED_NOTE)
    token = None
    if job is not None and job.kind == "resume" and job.status == JobStatus.PENDING:
        candidate = step.token(job.token_id) if job.token_id is not None else None
        outcome = job.inputs or {}
        if (
            candidate is not None
            and candidate.status in PAUSED_TOKEN
            and candidate.node_id == job.node_id
            and candidate.step == outcome.get("step")
            and step.instance.status in UNFINISHED_INSTANCE
        ):
            token = candidate
    if job is None or token is None:
        step.conn.execute(
            update(store.JOBS)
            .where(store.JOBS.c.id == job_id, store.JOBS.c.status == JobStatus.PENDING)
            .values(status=JobStatus.DONE, updated_at=step.now)
        )
        return dropped(step, "the call no longer waits")
    step.track(job)
    job.status = JobStatus.DONE
    job.attempt += 1
    outcome = job.inputs or {}
    status = outcome.get("status")
    child = outcome.get("child")
    step.starter = starter_of(step)
    if status == CallOutcome.ESCALATION:
        scopes.throw(step, token, "escalation", str(outcome.get("code") or ""))
        interpreter.run(step)
        return step.finish()
    step.history.add(
        HistoryKind.CHILD_ENDED, token, child=child, status=status, code=outcome.get("code")
    )
    catching.receive_missed(step)
    if token.status not in PAUSED_TOKEN or token.node_id != job.node_id:
        interpreter.run(step)
        return step.finish()
    if status == CallOutcome.COMPLETED:
        token.status = TokenStatus.ACTIVE
        step.complete(token, outcome.get("output") or {})
    elif status == CallOutcome.ERROR:
        token.status = TokenStatus.ACTIVE
        scopes.raise_error(step, token, str(outcome.get("code") or ""), outcome.get("message", ""))
    elif status == CallOutcome.MISSING:
        step.fail(token, "call_missing", str(outcome.get("message") or "No process to call."))
    else:
        at = step.definition.mentioned(token.node_id)
        step.fail(token, "child_cancelled", f"The instance {child} called by {at} was cancelled.")
    interpreter.run(step)
    return step.finish()


def cancel_called(
    session: Session, job_id: int, instance_id: int, *, now: datetime | None = None
) -> StepResult | None:
    """Cancel a child because its caller was cancelled or interrupted, once it received the
    signals broadcast while it waited for them (its caller's throw that ended the call among
    them)."""
    now = now or utcnow()
    begin_write(session)
    conn = session.connection()
    row = conn.execute(
        select(store.JOBS).where(store.JOBS.c.id == job_id).with_for_update()
    ).first()
    if row is None or row.status != JobStatus.PENDING or row.kind != "cancel":
        return None
    conn.execute(
        update(store.JOBS)
        .where(store.JOBS.c.id == job_id)
        .values(status=JobStatus.DONE, updated_at=now)
    )
    received = _receive_before_cancel(session, instance_id, now)
    try:
        result = cancel_instance(
            session, instance_id, reason="The calling instance ended the call.", now=now
        )
    except EngineError:
        return received
    if received is not None:
        result.jobs = received.jobs + result.jobs
    return result


def _receive_before_cancel(session: Session, instance_id: int, now: datetime) -> StepResult | None:
    """A child about to be cancelled first receives the broadcasts still on their way that
    cover its subscriptions (say, the one its caller threw as it interrupted the call), in a
    step of its own in the same transaction; None when none reached it."""
    step, _ = open_step(session, instance_id, now)
    if step.instance.status not in UNFINISHED_INSTANCE:
        return None
    step.starter = starter_of(step)
    if not catching.receive_missed(step):
        return None
    interpreter.run(step)
    return step.finish()
