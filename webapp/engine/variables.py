"""An operator's variable edit as an engine step: the write goes through the step, so that the
conditional events reading the variable are evaluated in the same transaction."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from webapp.engine import interpreter, steps
from webapp.engine.runtime import StepResult
from webapp.models.statuses import HistoryKind


def set_variable(
    session: Session, instance_id: int, name: str, value: Any, *, actor: str, now: datetime
) -> StepResult:
    """Set `$vars.<name>` in a step holding the instance's lock, record who changed what, and
    move the tokens a condition that became true releases."""
    step, _ = steps.open_step(session, instance_id, now)
    details: dict[str, Any] = {"name": name, "value": value}
    if name in step.vars:
        details["previous"] = step.vars[name]
    step.history.add(HistoryKind.VARIABLE_SET, actor=actor, **details)
    step.assign({name: value})
    if not steps.suspended(step):
        interpreter.run(step)
    return step.finish()
