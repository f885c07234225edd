"""The step that starts an enabled activity of a running ad-hoc sub-process, for a person or
the API: one transaction holding the instance row, so concurrent activations each run once."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from webapp.engine import adhoc, interpreter
from webapp.engine.errors import EngineError
from webapp.engine.runtime import Step, StepResult
from webapp.engine.steps import open_step, starter_of, suspended
from webapp.engine.store import TokenRow
from webapp.models.base import utcnow
from webapp.models.statuses import InstanceStatus


def scope_of(step: Step, scope_token_id: int) -> TokenRow:
    """The waiting ad-hoc sub-process token `scope_token_id` of the step's instance."""
    scope = step.token(scope_token_id)
    if scope is None or step.definition.kind(scope.node_id) != adhoc.KIND:
        raise EngineError(
            "not_found",
            f"Instance {step.instance.id} has no running ad-hoc sub-process {scope_token_id}.",
            status=404,
        )
    return scope


def activate(
    session: Session,
    instance_id: int,
    scope_token_id: int,
    node_id: str,
    *,
    actor: str | None = None,
    now: datetime | None = None,
) -> StepResult:
    """Run `node_id` once inside the ad-hoc sub-process `scope_token_id`; refused (409) when
    it is not enabled there now, the instance is not running or it is suspended."""
    step, _ = open_step(session, instance_id, now or utcnow())
    if step.instance.status != InstanceStatus.RUNNING:
        raise EngineError(
            "not_active", f"Instance {instance_id} is {step.instance.status}; it starts nothing."
        )
    if suspended(step):
        raise EngineError("suspended", f"Instance {instance_id} is suspended; resume it first.")
    scope = scope_of(step, scope_token_id)
    why = adhoc.refusal(step, scope, node_id)
    if why is not None:
        raise EngineError("not_enabled", why)
    step.starter = starter_of(step)
    adhoc.start_inner(step, scope, node_id, actor)
    interpreter.run(step)
    return step.finish()
