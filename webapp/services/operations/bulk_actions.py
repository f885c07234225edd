"""The kinds of bulk change, one table: who may ask for each, what it needs, its step per instance.

`bulk` fixes the selection and works through it; an action here only says how one instance is
changed, inside the transaction that already holds the instance's lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from webapp.engine import EngineError, migration, steps, suspension
from webapp.engine.runtime import StepResult
from webapp.models import Instance, ProcessVersion, User
from webapp.models.base import utcnow
from webapp.permissions import can
from webapp.process.migration import Plan

#: Applies the action to one locked instance: the step's result (committed, then its jobs sent).
Apply = Callable[[Session, Instance, str, User, dict[str, Any]], StepResult]


@dataclass(frozen=True)
class BulkAction:
    """One bulk change as the list's form offers it and the worker applies it; `reason_required`
    is the message shown when a needed reason is missing; `setup` is the endpoint where an
    action with settings of its own is prepared (the list's form sends its selection there)."""

    name: str
    label: str
    verb: str
    permission: str
    hint: str
    apply: Apply
    reason_required: str = ""
    danger: bool = False
    setup: str = ""


def _cancel(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return steps.cancel_instance(session, instance.id, reason=reason, actor=actor)


def _retry(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    return steps.retry_instance(session, instance.id, actor=actor)


# Migration plans by operation settings: built once per worker, not once per instance.
_plans: dict[tuple[int, int, str], Plan] = {}


def _migrate(session: Session, instance: Instance, reason: str, actor: User, params) -> StepResult:
    if not {"from_version_id", "to_version_id"} <= set(params or {}):
        raise EngineError("invalid", "This migration does not say which versions it moves between.")
    source_id, target_id = int(params["from_version_id"]), int(params["to_version_id"])
    mapping = dict(params.get("mapping") or {})
    key = (source_id, target_id, repr(sorted(mapping.items())))
    plan = _plans.get(key)
    if plan is None:
        source = session.get_one(ProcessVersion, source_id)
        target = session.get_one(ProcessVersion, target_id)
        plan = _plans[key] = migration.plan(source, target, mapping)
        if len(_plans) > 16:
            _plans.pop(next(iter(_plans)))
    return migration.migrate_instance(
        session, instance.id, source_id, target_id, plan,
        actor=actor.username, now=utcnow(), reason=reason,
    )  # fmt: skip


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
            "migrate",
            "Migrate to another version",
            "Migrate",
            "instances.modify",
            "Choose the target version and the mapping on the next page; a dry run shows which "
            "instances can move before anything does.",
            _migrate,
            setup="operations.migration",
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


def allowed(user: User) -> list[BulkAction]:
    """The bulk actions `user` may start (each by its own permission, in any partition)."""
    return [action for action in ACTIONS.values() if can(user, action.permission, scoped=False)]


def may_resume(user: User, action: str) -> bool:
    """Whether `user` may send a bulk operation of `action` to the workers again."""
    kind = ACTIONS.get(action)
    return kind is not None and can(user, kind.permission, scoped=False)
