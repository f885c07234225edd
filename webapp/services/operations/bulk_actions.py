"""The kinds of bulk change, one table: who may ask for each, what it needs, its step per instance.

`bulk` fixes the selection and works through it; an action here only says how one instance is
changed, inside the transaction that already holds the instance's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from webapp.engine import steps, suspension
from webapp.engine.runtime import StepResult
from webapp.models import Instance, User

#: Applies the action to one locked instance: the step's result (committed, then its jobs sent).
Apply = Callable[[Session, Instance, str, User, dict[str, Any]], StepResult]


@dataclass(frozen=True)
class BulkAction:
    """One bulk change as the list's form offers it and the worker applies it; `reason_required`
    is the message shown when a needed reason is missing."""

    name: str
    label: str
    verb: str
    permission: str
    hint: str
    apply: Apply
    reason_required: str = ""
    danger: bool = False


def _cancel(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return steps.cancel_instance(session, instance.id, reason=reason, actor=actor)


def _retry(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return steps.retry_instance(session, instance.id, actor=actor)


def _suspend(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return suspension.suspend_instance(session, instance.id, reason=reason, actor=actor)


def _resume(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return suspension.resume_instance(session, instance.id, reason=reason, actor=actor)


ACTIONS: dict[str, BulkAction] = {
    action.name: action
    for action in (
        BulkAction(
            "retry",
            "Retry (failed only)",
            "Retry",
            "instances.manage",
            "Failed instances run their failed steps again; the others are reported as refused.",
            _retry,
        ),
        BulkAction(
            "cancel",
            "Cancel",
            "Cancel",
            "instances.manage",
            "Their open tasks close and pending jobs stop. This cannot be undone.",
            _cancel,
            reason_required="Say why these instances are cancelled.",
            danger=True,
        ),
        BulkAction(
            "suspend",
            "Suspend",
            "Suspend",
            "instances.modify",
            "Nothing of them moves until they are resumed: timers, messages and tool results wait.",
            _suspend,
            reason_required="Say why these instances are suspended.",
        ),
        BulkAction(
            "resume",
            "Resume (suspended only)",
            "Resume",
            "instances.modify",
            "What waited is applied in order and their jobs run; the others are reported as "
            "refused.",
            _resume,
        ),
    )
}
