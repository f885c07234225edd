"""Activating the activities of a running ad-hoc sub-process, for people and the API: what is
enabled where, who may start it, and the start itself (one engine step).

Operators with `instances.manage` in the instance's partition may activate; so may the
assignee of an open task inside that ad-hoc sub-process (from the task's page).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from webapp.engine import activation
from webapp.engine.adhoc import KIND, STATE
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import Instance, Task, Token, User
from webapp.models.session import db_session
from webapp.models.statuses import TaskStatus, TokenStatus
from webapp.permissions import can
from webapp.process.adhoc import startable
from webapp.services.instances import InstanceError, get_instance, run_step
from webapp.services.jobs import commit


@dataclass
class Running:
    """One running ad-hoc sub-process of an instance and the activities it may start now."""

    token_id: int
    node_id: str
    title: str
    activities: list[tuple[str, str]] = field(default_factory=list)
    #: Why nothing may start now (one at a time and one runs, or completing); "" when free.
    blocked: str = ""


def running(instance: Instance) -> list[Running]:
    """The instance's running ad-hoc sub-processes, in token order."""
    document = instance.process_version.document
    nodes = document.get("nodes") or {}
    adhoc_ids = [node_id for node_id, node in nodes.items() if node.get("kind") == KIND]
    if not adhoc_ids or instance.status != "running":
        return []
    targets = {flow.get("target") for flow in (document.get("flows") or {}).values()}
    scopes = db.session.scalars(
        select(Token)
        .where(
            Token.instance_id == instance.id,
            Token.node_id.in_(adhoc_ids),
            Token.status == TokenStatus.WAITING,
        )
        .order_by(Token.id)
    ).all()
    found = []
    for scope in scopes:
        node = nodes[scope.node_id]
        state = (scope.locals or {}).get(STATE) or {}
        found.append(
            Running(
                scope.id,
                scope.node_id,
                node.get("title") or scope.node_id,
                [
                    (inner, nodes[inner].get("title") or inner)
                    for inner in startable(nodes, frozenset(targets), scope.node_id)
                ],
                _blocked(scope, node, state),
            )
        )
    return found


def _blocked(scope: Token, node: dict[str, Any], state: dict[str, Any]) -> str:
    if state.get("closing"):
        return "Its completion condition holds: it starts nothing more."
    if (node.get("config") or {}).get("ordering") != "sequential":
        return ""
    busy = db.session.scalar(
        select(Token.id).where(
            Token.parent_id == scope.id, Token.status.in_((TokenStatus.ACTIVE, TokenStatus.WAITING))
        )
    )
    return "It runs one activity at a time, and one is running." if busy else ""


def for_task(user: User, task: Task) -> Running | None:
    """The running ad-hoc sub-process the open task `user` holds sits in (its assignee may
    start the sub-process's activities from the task's page), or None."""
    if task.status != TaskStatus.OPEN or task.assignee_id != user.id:
        return None
    scope_id = db.session.scalar(select(Token.parent_id).where(Token.id == task.token_id))
    if scope_id is None:
        return None
    return next((r for r in running(task.instance) if r.token_id == scope_id), None)


def may_activate(user: User, instance: Instance, scope_token_id: int) -> bool:
    """Operators of the instance's partition, or the assignee of an open task inside it."""
    if can(user, "instances.manage", instance.partition_id):
        return True
    inside = select(Token.id).where(Token.parent_id == scope_token_id)
    return (
        db.session.scalar(
            select(Task.id).where(
                Task.instance_id == instance.id,
                Task.status == TaskStatus.OPEN,
                Task.assignee_id == user.id,
                Task.token_id.in_(inside),
            )
        )
        is not None
    )


def scope_for(instance: Instance, activity: str, scope_token_id: int | None) -> int:
    """The running ad-hoc sub-process `scope_token_id`, or the only one that may start
    `activity` when none is named."""
    if scope_token_id is not None:
        return scope_token_id
    holding = [r.token_id for r in running(instance) if activity in dict(r.activities)]
    if len(holding) != 1:
        what = "no" if not holding else "more than one"
        raise InstanceError(
            "invalid",
            f"Instance {instance.id} has {what} running ad-hoc sub-process that starts "
            f"'{activity}'; name it in scope.",
            fields={"scope": "Name the ad-hoc sub-process's token."},
        )
    return holding[0]


def activate(user: User, instance_id: int, activity: str, scope_token_id: int | None = None):
    """Start `activity` once in the instance's ad-hoc sub-process; 404 for an instance the user
    may neither see nor work a task inside, 403 without the right, 409 when it may not start
    now."""
    begin_write(db_session())
    instance = db.session.get(Instance, instance_id)
    if instance is None:
        raise InstanceError(
            "not_found", f"There is no instance {instance_id} you may see.", status=404
        )
    scope = scope_for(instance, activity, scope_token_id)
    if not may_activate(user, instance, scope):
        get_instance(user, instance_id)  # 404 for an instance the user may not see at all
        raise InstanceError(
            "forbidden", "You may not start activities of this instance.", status=403
        )
    result = run_step(
        lambda: activation.activate(db_session(), instance_id, scope, activity, actor=user.username)
    )
    commit(result)
    return db.session.get_one(Instance, instance_id)
