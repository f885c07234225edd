"""Call activities: a parent token waits while a child instance of another process runs.

Caller and child are different instances, so they never change in one step: the caller's step
writes a `call` job, whose step creates the child; the child's last step writes a `resume` job
for the caller; cancelling the caller writes a `cancel` job per child. Each job is its own step
on one instance, so lock order can never deadlock.
"""

from __future__ import annotations

import uuid
from typing import Any

from webapp.engine import limits
from webapp.engine.context import jsonable
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import OPEN_TOKEN, CallOutcome, HistoryKind, InstanceStatus, TokenStatus


def call(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """Evaluate the call's inputs in the caller and write the job that starts the child."""
    config = node.get("config") or {}
    if step.instance.call_depth + 1 > limits.CALL_DEPTH:
        message = (
            f"{step.definition.described(token.node_id)} cannot call its process: the call"
            f" chain is deeper than {limits.CALL_DEPTH} instances."
        )
        step.fail(token, "call_depth", message)
        return
    inputs = step.evaluate_inputs(token, config.get("inputs") or {})
    if inputs is None:
        return
    version = config.get("version") if config.get("binding") == "version" else None
    token.status = TokenStatus.WAITING
    step.add_job(
        token,
        "call",
        step.now,
        tool=str(config.get("process") or ""),
        inputs={"input": jsonable(inputs), "version": version, "step": token.step},
    )


def escalate_to_parent(step: Step, code: str) -> None:
    """An escalation nothing in the child caught goes on to the call activity; the child
    carries on."""
    key = f"escalate:{step.instance.id or 'new'}:{uuid.uuid4().hex}"
    step.to_parent(key, {"status": CallOutcome.ESCALATION, "code": code})


def throw_to_parent(step: Step, code: str, message: str = "") -> None:
    """An error nothing in the child caught: the child ends and the call activity throws it."""
    for token in step.tokens:
        if token.status in OPEN_TOKEN:
            token.status = TokenStatus.CANCELLED
    step.close_waits([t for t in step.tokens if t.id is not None])
    instance = step.instance
    instance.status = InstanceStatus.CANCELLED
    instance.ended_at = step.now
    instance.error = {
        "node": None,
        "code": "error",
        "message": f"The error '{code}' went to the calling instance {instance.parent_id}.",
        "at": step.now.isoformat(),
    }
    step.history.add(HistoryKind.CANCELLED, reason=f"error '{code}' thrown to the calling instance")
    step.report_to_parent(CallOutcome.ERROR, code=code, message=message)


class CallActivity(Behaviour):
    """Evaluate the inputs now; a job starts the child instance (one lock per step)."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        call(step, token, node)


BEHAVIOURS: dict[str, Behaviour] = {"callActivity": CallActivity()}
