"""Inbox test helpers: processes with user tasks, instances started through the engine, and
signed-in clients for several users at once."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers.app import login
from tests.helpers.documents import chain, payable_document
from tests.helpers.inbox import DECISION, open_task, rename, user_task
from tests.helpers.instances import start_latest
from tests.helpers.processes import publish_document

FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True,
         "min": 1, "max": 1000},
        {"key": "reason", "label": "Reason", "type": "text", "required": True,
         "visibleIf": "$form.amount > 100"},
        {"key": "requested", "label": "Requested", "type": "display", "value": "$input.requested"},
    ]
}  # fmt: skip


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


@pytest.fixture
def review_tasks(app, flows, db_session):
    """Four role tasks (clerk) with business keys and titles that search can tell apart."""
    ids = []
    for n, title in enumerate(["Pay rent", "Pay 100% bonus", "Order chairs", "Order desks"]):
        instance_id = start_latest(app, "expense", business_key=f"EXP-{n}")
        task = open_task(db_session, instance_id, "review")
        rename(db_session, task.id, title)
        ids.append(task.id)
    return ids


@pytest.fixture
def payable(app, demo):
    """Process "pay": a task whose boundary events catch a reported error or escalation."""
    with app.app_context():
        publish_document(payable_document(), key="pay")
    return True
