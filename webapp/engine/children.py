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
from webapp.engine.runtime import Step
from webapp.engine.store import TokenRow


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
    token.status = "waiting"
    step.add_job(
        token,
        "call",
        step.now,
        tool=str(config.get("process") or ""),
        inputs={"input": jsonable(inputs), "version": version, "step": token.step},
    )


def report_to_parent(step: Step, status: str, **details: Any) -> None:
    """The child ended: its step will write a `resume` job handing the outcome to the waiting
    call activity (once the child's row has its id)."""
    if step.instance.parent_id is not None:
        step.report = {"status": status, **jsonable(details)}


def write_report(step: Step) -> None:
    """Write the `resume` job of a child that ended in this step."""
    instance = step.instance
    if step.report is not None:
        _to_parent(step, f"resume:{instance.id}", {"child": instance.id, **step.report})


def escalate_to_parent(step: Step, code: str) -> None:
    """An escalation nothing in the child caught goes on to the call activity; the child
    carries on."""
    key = f"escalate:{step.instance.id or 'new'}:{uuid.uuid4().hex}"
    _to_parent(step, key, {"status": "escalation", "code": code})


def _to_parent(step: Step, key: str, outcome: dict[str, Any]) -> None:
    """A `resume` job on the caller's waiting token (checked against the token's step there)."""
    instance = step.instance
    if instance.parent_id is None or instance.parent_token_id is None:
        return
    step.add_job(
        None,
        "resume",
        step.now,
        instance_id=instance.parent_id,
        token_id=instance.parent_token_id,
        node_id=instance.parent_node_id or "",
        key=key,
        inputs={**outcome, "step": instance.parent_step},
    )


def throw_to_parent(step: Step, code: str, message: str = "") -> None:
    """An error nothing in the child caught: the child ends and the call activity throws it."""
    for token in step.tokens:
        if token.status in ("active", "waiting", "failed"):
            token.status = "cancelled"
    step.close_waits([t for t in step.tokens if t.id is not None])
    instance = step.instance
    instance.status = "cancelled"
    instance.ended_at = step.now
    instance.error = {
        "node": None,
        "code": "error",
        "message": f"The error '{code}' went to the calling instance {instance.parent_id}.",
        "at": step.now.isoformat(),
    }
    step.history.add("cancelled", reason=f"error '{code}' thrown to the calling instance")
    report_to_parent(step, "error", code=code, message=message)
