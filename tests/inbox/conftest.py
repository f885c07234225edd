"""Inbox test helpers: processes with user tasks, instances started through the engine, and
signed-in clients for several users at once."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select
from werkzeug.datastructures import MultiDict

from tests.conftest import login
from tests.engine.conftest import chain, node, publish_document

# The inbox list (inbox.index).
INBOX = "/inbox/"

FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True,
         "min": 1, "max": 1000},
        {"key": "reason", "label": "Reason", "type": "text", "required": True,
         "visibleIf": "$form.amount > 100"},
        {"key": "requested", "label": "Requested", "type": "display", "value": "$input.requested"},
    ]
}  # fmt: skip

DECISION = {
    "fields": [
        {"key": "decision", "label": "Decision", "type": "radio", "required": True,
         "options": [{"value": "yes", "label": "Approve"}, {"value": "no", "label": "Reject"}]},
    ]
}  # fmt: skip


def user_task(title: str, kind: str, value: str, form: dict | None = None, **config: Any):
    return node("userTask", title, assignee={"type": kind, "value": value}, form=form, **config)


@pytest.fixture
def flows(app, demo):
    """expense: a clerk-role review with FORM, then alice approves; fin (finance) and hr (hr)
    each wait at one role task; direct: a task assigned to bob with no role."""
    with app.app_context():
        publish_document(
            chain(
                ("review", user_task("Review expense", "role", "clerk", FORM, saveTo="review")),
                ("approve", user_task("Approve expense", "user", "alice", DECISION)),
            ),
            key="expense",
        )
        publish_document(
            chain(("check", user_task("Check invoice", "role", "approver"))),
            key="fin",
            partition="finance",
        )
        publish_document(
            chain(("screen", user_task("Screen candidate", "role", "clerk"))),
            key="hr",
            partition="hr",
        )
        publish_document(chain(("sign", user_task("Sign contract", "user", "bob"))), key="direct")
    return True


def start(
    app,
    key: str,
    *,
    input: dict | None = None,
    business_key: str | None = None,
    starter: str | None = None,
) -> int:
    """Start an instance of the latest version of `key` in its process's partition."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Process, ProcessVersion, User
    from webapp.services.jobs import commit

    with app.app_context():
        process = db.session.scalar(select(Process).where(Process.key == key))
        version = db.session.scalar(
            select(ProcessVersion)
            .where(ProcessVersion.process_id == process.id)
            .order_by(ProcessVersion.number.desc())
        )
        result = steps.start_instance(
            db.session,
            version,
            input=input or {},
            business_key=business_key,
            partition_id=process.partition_id,
            via="test",
            actor=db.session.scalar(select(User).where(User.username == starter))
            if starter
            else None,
        )
        commit(result)
        instance_id = result.instance.id
        db.session.remove()
    return instance_id


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


@pytest.fixture
def users(app, demo):
    """users("alice") -> a test client signed in as alice (one client per user, cached)."""
    clients: dict[str, Any] = {}

    def client_for(username: str, password: str = "flowdesk-demo"):
        if username not in clients:
            client = app.test_client()
            response = login(client, username, password)
            assert response.status_code == 302, response.get_data(as_text=True)
            clients[username] = client
        return clients[username]

    return client_for


def post(client, path: str, data: dict | list | None = None, **kwargs: Any):
    """POST a form with the CSRF token a page of the client's session carries."""
    from tests.conftest import csrf_token

    token = getattr(client, "_csrf", None) or csrf_token(client, "/")
    client._csrf = token
    items = list(data.items()) if isinstance(data, dict) else list(data or [])
    return client.post(path, data=MultiDict([("csrf_token", token), *items]), **kwargs)


HTMX = {"HX-Request": "true"}


def htmx(target: str) -> dict[str, str]:
    return {**HTMX, "HX-Target": f"div#{target}"}
