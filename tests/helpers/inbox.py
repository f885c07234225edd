"""The inbox over HTTP: task documents, the open task of an instance, its history, posting a
form with its CSRF token and the htmx headers."""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import select, update
from werkzeug.datastructures import MultiDict

from tests.helpers.app import csrf_token
from tests.helpers.documents import node

# The inbox list (inbox.index).
INBOX = "/inbox/"


DECISION = {
    "fields": [
        {"key": "decision", "label": "Decision", "type": "radio", "required": True,
         "options": [{"value": "yes", "label": "Approve"}, {"value": "no", "label": "Reject"}]},
    ]
}  # fmt: skip


def user_task(title: str, kind: str, value: str, form: dict | None = None, **config: Any):
    return node("userTask", title, assignee={"type": kind, "value": value}, form=form, **config)


def open_task(db_session, instance_id: int, node_id: str | None = None):
    from webapp.models import Task

    query = select(Task).where(Task.instance_id == instance_id, Task.status == "open")
    if node_id:
        query = query.where(Task.node_id == node_id)
    task = db_session.scalar(query.order_by(Task.id))
    assert task is not None, f"no open task {node_id or ''} in instance {instance_id}"
    return task


def kinds(db_session, instance_id: int) -> list[tuple[str, str | None]]:
    """(kind, actor) of the instance's history lines, in order."""
    from webapp.models import HistoryEntry

    rows = db_session.execute(
        select(HistoryEntry.kind, HistoryEntry.actor)
        .where(HistoryEntry.instance_id == instance_id)
        .order_by(HistoryEntry.id)
    ).all()
    return [(kind, actor) for kind, actor in rows]


def post(client, path: str, data: dict | list | None = None, **kwargs: Any):
    """POST a form with the CSRF token a page of the client's session carries."""
    token = getattr(client, "_csrf", None) or csrf_token(client, "/")
    client._csrf = token
    items = list(data.items()) if isinstance(data, dict) else list(data or [])
    return client.post(path, data=MultiDict([("csrf_token", token), *items]), **kwargs)


HTMX = {"HX-Request": "true"}


def htmx(target: str) -> dict[str, str]:
    return {**HTMX, "HX-Target": f"div#{target}"}


def titles(page: str) -> list[str]:
    """The task titles of an inbox list page, in order."""
    return re.findall(r'<a href="/inbox/tasks/\d+">([^<]+)</a>', page)


def rename(db_session, task_id: int, title: str) -> None:
    from webapp.models import Task

    db_session.execute(update(Task).where(Task.id == task_id).values(title=title))
    db_session.commit()
