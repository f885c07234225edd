"""One instance for operators: where its tokens are, its history page by page, its jobs and tasks,
and the one change operators make by hand besides cancel and retry: setting a variable."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from webapp.engine import tree, variables
from webapp.engine.context import jsonable
from webapp.engine.locking import lock_instance
from webapp.extensions import db
from webapp.inputs import InputError, parse_json
from webapp.models import HistoryEntry, Instance, Job, Task, Token, User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, InstanceStatus, TaskStatus, TokenStatus
from webapp.services.jobs import commit
from webapp.services.operations import structure, waits
from webapp.services.operations.common import OperationsError, get_instance

HISTORY_PAGE = 50
JOBS_SHOWN = 50
MAX_VALUE = 64 * 1024
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")


@dataclass(frozen=True)
class HistoryPage:
    entries: list[HistoryEntry]
    older: int | None  # the id to pass as `before` for the next (older) page


def history_page(
    instance_id: int, before: int | None = None, size: int = HISTORY_PAGE
) -> HistoryPage:
    """History newest first, `size` entries older than the entry id `before`."""
    query = select(HistoryEntry).where(HistoryEntry.instance_id == instance_id)
    if before is not None:
        query = query.where(HistoryEntry.id < before)
    rows = list(db.session.scalars(query.order_by(HistoryEntry.id.desc()).limit(size + 1)))
    older = rows[size - 1].id if len(rows) > size else None
    return HistoryPage(rows[:size], older)


def diagram_state(instance: Instance) -> dict[str, Any]:
    """What the viewer marks: visited nodes and flows (nested ones too), live tokens per node
    (a multi-instance activity counts its running instances, not itself; listeners of event
    sub-processes are not tokens of work), "done/total" of multi-instance activities, failed
    nodes, the children each call activity started, and for a cancelled instance where each
    token stood: failed there (then cancelled) or waiting."""
    entered = (HistoryEntry.instance_id == instance.id) & (HistoryEntry.kind == HistoryKind.ENTERED)
    nodes = db.session.scalars(select(HistoryEntry.node_id).where(entered).distinct())
    flow = HistoryEntry.details["flow"].as_string()
    flows = db.session.scalars(select(flow).where(entered, flow.is_not(None)).distinct())
    tokens = db.session.execute(
        select(Token.node_id, Token.status, Token.locals).where(
            Token.instance_id == instance.id, Token.status.in_(OPEN_TOKEN)
        )
    ).all()
    active: dict[str, int] = {}
    failed: dict[str, str] = {}
    for node, status, locals_ in tokens:
        if status == TokenStatus.FAILED:
            failed[node] = ""
        elif not tree.is_listener(locals_) and not tree.is_body(locals_):
            active[node] = active.get(node, 0) + 1
    cancelled: dict[str, int] = {}
    if instance.status == InstanceStatus.CANCELLED:
        failed, cancelled = _where_cancelled(instance)
    elif failed:
        errors = db.session.execute(
            select(HistoryEntry.node_id, HistoryEntry.details)
            .where(HistoryEntry.instance_id == instance.id, HistoryEntry.kind == HistoryKind.ERROR)
            .order_by(HistoryEntry.id.desc())
            .limit(100)
        )
        for node, details in errors:
            if node in failed and not failed[node]:
                failed[node] = _error_text(details)
    awaits: dict[str, list[str]] = {}
    for node_id, text in waits.awaits(instance).values():
        texts = awaits.setdefault(node_id, [])
        if text not in texts:
            texts.append(text)
    return {
        "visited": sorted({*filter(None, nodes), *filter(None, flows)}),
        "awaits": {node: "; ".join(texts) for node, texts in awaits.items()},
        "active": active,
        "failed": failed,
        "cancelled": cancelled,
        "multi": structure.multi_instance_progress(tokens),
        "calls": structure.calls_by_node(instance.id),
        "status": instance.status,
    }


def _error_text(details: dict[str, Any] | None) -> str:
    details = details or {}
    return f"{details.get('code', 'error')}: {details.get('message', '')}"


def _where_cancelled(instance: Instance) -> tuple[dict[str, str], dict[str, int]]:
    """The nodes a cancelled instance's tokens stood at when it was cancelled (tokens ended
    earlier by a boundary event or a completion condition are not counted): those whose last
    history line is an error had failed there (error text, "then cancelled"), the others waited
    (token counts; scopes of multi-instance activities and listeners left out)."""
    stopped = (
        Token.instance_id == instance.id,
        Token.status == TokenStatus.CANCELLED,
        Token.updated_at == instance.ended_at,
    )
    last = (
        select(func.max(HistoryEntry.id))
        .join(Token, Token.id == HistoryEntry.token_id)
        .where(HistoryEntry.instance_id == instance.id, *stopped)
        .group_by(HistoryEntry.token_id)
    )
    failed: dict[str, str] = {}
    waited: dict[str, int] = {}
    rows = db.session.execute(
        select(Token.node_id, Token.locals, HistoryEntry.kind, HistoryEntry.details)
        .join(Token, Token.id == HistoryEntry.token_id)
        .where(HistoryEntry.id.in_(last))
    )
    for node, locals_, kind, details in rows:
        if kind == HistoryKind.ERROR:
            failed[node] = f"{_error_text(details)} (then cancelled)"
        elif not tree.is_listener(locals_) and not tree.is_body(locals_):
            waited[node] = waited.get(node, 0) + 1
    return failed, waited


def cancellation(instance: Instance) -> dict[str, Any] | None:
    """Who cancelled the instance, when and why (its last `cancelled` history line)."""
    if instance.status != InstanceStatus.CANCELLED:
        return None
    entry = db.session.scalar(
        select(HistoryEntry)
        .where(HistoryEntry.instance_id == instance.id, HistoryEntry.kind == HistoryKind.CANCELLED)
        .order_by(HistoryEntry.id.desc())
        .limit(1)
    )
    if entry is None:
        return {"at": instance.ended_at, "actor": None, "reason": None}
    return {
        "at": entry.created_at,
        "actor": entry.actor,
        "reason": (entry.details or {}).get("reason"),
    }


def jobs(instance_id: int) -> list[Job]:
    return list(
        db.session.scalars(
            select(Job)
            .where(Job.instance_id == instance_id)
            .order_by(Job.id.desc())
            .limit(JOBS_SHOWN)
        )
    )


def open_tasks(instance_id: int) -> list[Task]:
    return list(
        db.session.scalars(
            select(Task)
            .where(Task.instance_id == instance_id, Task.status == TaskStatus.OPEN)
            .options(
                selectinload(Task.assignee),
                selectinload(Task.candidate_role),
                selectinload(Task.candidates),
            )
            .order_by(Task.id)
        )
    )


def editable(instance: Instance) -> bool:
    """Variables may change while the instance failed, or runs with every token waiting."""
    if instance.status == InstanceStatus.FAILED:
        return True
    if instance.status != InstanceStatus.RUNNING:
        return False
    active = db.session.scalar(
        select(func.count())
        .select_from(Token)
        .where(Token.instance_id == instance.id, Token.status == TokenStatus.ACTIVE)
    )
    return not active


def parse_value(text: str) -> Any:
    """A variable's new value from JSON text; OperationsError naming the field otherwise."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_VALUE:
        raise _invalid("value", f"Use at most {MAX_VALUE // 1024} KB of JSON.")
    try:
        return parse_json(text, "value")
    except InputError as error:
        where = "" if error.field == "value" else f"{error.field}: "
        raise _invalid("value", where + error.message) from None


def set_variable(user: User, instance_id: int, name: str, text: str) -> Instance:
    """Set `$vars.<name>` under the instance lock and record who changed what in the history."""
    name = (name or "").strip()
    if not NAME.match(name):
        raise _invalid("name", "Use letters, digits and _, not starting with a digit.")
    value = jsonable(parse_value(text or ""))
    get_instance(user, instance_id, "instances.manage")
    instance = lock_instance(db_session(), instance_id)
    if not editable(instance):
        raise OperationsError(
            "not_editable",
            f"Instance {instance_id} is {instance.status} and busy or finished; variables can "
            "change only while it failed or waits.",
            status=409,
        )
    result = variables.set_variable(
        db_session(), instance.id, name, value, actor=user.username, now=utcnow()
    )
    commit(result)
    db.session.refresh(instance)
    return instance


def _invalid(field: str, message: str) -> OperationsError:
    return OperationsError("invalid", message, fields={field: message})


def decision_evaluations(instance_id: int, size: int = 20) -> list[HistoryEntry]:
    """The instance's latest decision evaluations (business rule tasks), newest first."""
    query = select(HistoryEntry).where(
        HistoryEntry.instance_id == instance_id,
        HistoryEntry.kind == HistoryKind.DECISION_EVALUATED,
    )
    return list(db.session.scalars(query.order_by(HistoryEntry.id.desc()).limit(size)))
