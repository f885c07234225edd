"""Suspend and resume an instance: each one step holding the instance row.

While an instance is suspended (`instances.suspended_at`; its status stays running or failed)
every step that would move it leaves its work waiting instead: timers and other jobs stay pending
(suspending takes their wake time away, so no clock sends them, and the sweep skips them), a
lease is refused, and messages, signal broadcasts and the outcomes of tool calls already running
are kept as held events (webapp/engine/held.py). Resuming applies the held events in arrival
order in its own step, then sends every job that waited. A worker's step racing a suspend or a
resume locks the same row, so it runs wholly before or wholly after it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.orm import Session

from webapp.engine import catching, held, interpreter, steps, store
from webapp.engine.dispatch import JobRef
from webapp.engine.errors import EngineError
from webapp.engine.runtime import Step, StepResult, entry_point
from webapp.engine.steps import Actor
from webapp.models.base import utcnow
from webapp.models.statuses import UNFINISHED_INSTANCE, HeldKind, HistoryKind, JobStatus

INSTANCES = store.INSTANCES
JOBS = store.JOBS


def suspend_instance(
    session: Session,
    instance_id: int,
    *,
    reason: str,
    actor: Actor | None,
    now: datetime | None = None,
) -> StepResult:
    """Mark the instance suspended (who, when, why) and take the wake time off its jobs; 409
    when it ended or is suspended already."""
    step, _ = steps.open_step(session, instance_id, now or utcnow())
    instance = step.instance
    if instance.status not in UNFINISHED_INSTANCE:
        raise EngineError(
            "not_active",
            f"Instance {instance_id} is {instance.status}; only running or failed instances can "
            "be suspended.",
            status=409,
        )
    if steps.suspended(step):
        raise EngineError("suspended", f"Instance {instance_id} is suspended already.", status=409)
    _mark(step, suspended_at=step.now, suspended_by_id=actor.id if actor else None, reason=reason)
    step.conn.execute(
        update(JOBS)
        .where(
            JOBS.c.instance_id == instance_id,
            JOBS.c.status == JobStatus.PENDING,
            JOBS.c.wake_at.is_not(None),
        )
        .values(wake_at=None)
    )
    step.history.add(HistoryKind.SUSPENDED, actor=_name(actor), reason=reason or None)
    result = step.finish()
    result.note = "Now suspended."
    return result


def resume_instance(
    session: Session,
    instance_id: int,
    *,
    reason: str = "",
    actor: Actor | None = None,
    now: datetime | None = None,
) -> StepResult:
    """Lift the suspension, apply the held events in arrival order, and list every job that
    waited (due now: to send after the commit; due later: for the clocks again); 409 when the
    instance is not suspended."""
    step, _ = steps.open_step(session, instance_id, now or utcnow())
    if not steps.suspended(step):
        raise EngineError("not_suspended", f"Instance {instance_id} is not suspended.", status=409)
    _mark(step, suspended_at=None, suspended_by_id=None, reason=None)
    events = held.take(step.conn, instance_id)
    step.history.add(
        HistoryKind.RESUMED, actor=_name(actor), reason=reason or None, held=len(events) or None
    )
    step.starter = steps.starter_of(step)
    for event in events:
        _apply(step, event.kind, event.data)
    step.conditions_due = True  # data an operator set while it was suspended
    interpreter.run(step)
    result = step.finish()
    result.jobs += _waiting_jobs(step, {ref.id for ref in result.jobs})
    result.note = "Now resumed."
    return result


def _apply(step: Step, kind: str, data: dict[str, Any]) -> None:
    """Apply one held event as its own step would have, inside the resume's step."""
    if kind == HeldKind.MESSAGE:
        woken = steps.wake_for_message(
            step, data["name"], data["key"], data["payload"], data["actor"]
        )
        if not woken:
            _discarded(step, kind, data, key=data["key"])
    elif kind == HeldKind.SIGNAL:
        woken = catching.deliver_saved(
            step,
            data["broadcast"],
            data["name"],
            data["payload"],
            data["actor"],
            data["high_water"],
        )
        if not woken:
            _discarded(step, kind, data, broadcast=data["broadcast"])
    elif kind == HeldKind.TOOL_OUTCOME:
        job_id = int(data["job"])
        _, jobs = store.job_tokens(step.conn, store.saved_id(step.instance.id), [job_id])
        steps.apply_outcomes(step, jobs, [(job_id, held.outcome_of(data), int(data["attempt"]))])
        return
    interpreter.run(step)


def _discarded(step: Step, kind: str, data: dict[str, Any], **details: Any) -> None:
    """Record a held message or signal that no wait of the instance takes any more (an
    operator's modification or migration removed it while suspended)."""
    step.history.add(
        HistoryKind.HELD_DISCARDED,
        event=kind,
        name=data["name"],
        actor=data.get("actor"),
        reason="nothing waits for it any more",
        **details,
    )


def _waiting_jobs(step: Step, listed: set[int]) -> list[JobRef]:
    """The pending jobs nobody holds that waited for the resume (not those the step listed): the
    due ones to send now; those due later get their wake time back."""
    instance_id = store.saved_id(step.instance.id)
    rows = step.conn.execute(
        select(
            JOBS.c.id,
            JOBS.c.kind,
            JOBS.c.tool,
            JOBS.c.node_id,
            JOBS.c.due_at,
            JOBS.c.attempt,
            JOBS.c.timeout,
        )
        .where(
            JOBS.c.instance_id == instance_id,
            JOBS.c.status == JobStatus.PENDING,
            JOBS.c.kind != "cancel",
            or_(JOBS.c.lease_until.is_(None), JOBS.c.lease_until <= step.now),
        )
        .order_by(JOBS.c.due_at, JOBS.c.id)
    ).all()
    later = [row.id for row in rows if row.id not in listed and row.due_at > step.now]
    if later:
        step.conn.execute(update(JOBS).where(JOBS.c.id.in_(later)).values(wake_at=JOBS.c.due_at))
    return [
        JobRef(
            row.id,
            instance_id,
            entry_point(row.kind, row.tool),
            row.due_at,
            row.attempt,
            row.timeout,
            row.tool or "",
            row.node_id,
        )
        for row in rows
        if row.id not in listed and row.due_at <= step.now
    ]


def _mark(
    step: Step,
    *,
    suspended_at: datetime | None,
    suspended_by_id: int | None,
    reason: str | None,
) -> None:
    """Write the instance's suspension columns (None: not suspended) and the step's view of it."""
    step.conn.execute(
        update(INSTANCES)
        .where(INSTANCES.c.id == step.instance.id)
        .values(
            suspended_at=suspended_at,
            suspended_by_id=suspended_by_id,
            suspend_reason=reason or None,
        )
    )
    step.instance.suspended_at = suspended_at


def _name(actor: Actor | None) -> str | None:
    return actor.username if actor is not None else None
