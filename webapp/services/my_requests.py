"""The instances a person started: where each is now, or how it ended."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select

from webapp.extensions import db
from webapp.infra.pagination import Page, paginate
from webapp.models import Instance, Task, Token, User
from webapp.models.statuses import LIVE_TOKEN, TaskStatus, TokenStatus
from webapp.services.readable import result_text
from webapp.services.tasks import may_see


@dataclass
class Request:
    """One started instance as its requester sees it in the list."""

    instance: Instance
    process_name: str
    where: list[str]
    open_tasks: list[Task]
    # The open tasks this person may open (the others are named, never linked: they would 404).
    openable: set[int]
    outcome: str
    decision: str
    started: datetime


def page_of_requests(user: User, page: int, per_page: int) -> tuple[Page, list[Request]]:
    """A page of the user's own instances, newest first, with their current step or outcome."""
    query = (
        select(Instance)
        .where(Instance.started_by_id == user.id)
        .order_by(Instance.created_at.desc(), Instance.id.desc())
    )
    found = paginate(query, page, per_page)
    ids = [instance.id for instance in found.items] or [0]
    tokens = db.session.scalars(select(Token).where(Token.instance_id.in_(ids))).all()
    tasks = db.session.scalars(
        select(Task).where(Task.instance_id.in_(ids)).order_by(Task.id)
    ).all()
    return found, [_request(user, instance, tokens, tasks) for instance in found.items]


def _request(
    user: User, instance: Instance, tokens: Sequence[Token], tasks: Sequence[Task]
) -> Request:
    document = instance.process_version.document
    nodes = document.get("nodes") or {}

    def title(node_id: str) -> str:
        return (nodes.get(node_id) or {}).get("title") or node_id

    mine = [t for t in tokens if t.instance_id == instance.id]
    where = sorted({title(t.node_id) for t in mine if t.status in LIVE_TOKEN})
    ends = sorted(
        {
            title(t.node_id)
            for t in mine
            if t.status == TokenStatus.DONE
            and (nodes.get(t.node_id) or {}).get("kind") == "endEvent"
        }
    )
    own_tasks = [t for t in tasks if t.instance_id == instance.id]
    done = [t for t in own_tasks if t.status == TaskStatus.COMPLETED and t.result]
    last = done[-1] if done else None
    decision = result_text(last.form, last.result) if last is not None else ""
    still_open = [t for t in own_tasks if t.status == TaskStatus.OPEN]
    return Request(
        instance=instance,
        process_name=instance.process_version.process.name,
        where=where,
        open_tasks=still_open,
        openable={t.id for t in still_open if may_see(user, t)},
        outcome=", ".join(ends),
        decision=decision,
        started=instance.created_at,
    )
