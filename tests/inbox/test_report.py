"""Reporting a business error or an escalation from a task instead of completing it, as
Camunda's handleBpmnError / handleEscalation: the task's boundary events route it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.engine.conftest import node, publish_document
from tests.engine.documents import document, flow
from tests.inbox.conftest import open_task, post, start
from webapp.models import HistoryEntry, Instance, Task

CLERK = {"type": "role", "value": "approver"}


@pytest.fixture
def payable(app, demo):
    nodes = {
        "start": node("startEvent"),
        "pay": node("userTask", "Pay invoice", assignee=CLERK),
        "done": node("endEvent"),
        "unpaid": {
            **node("boundaryEvent", "Amount unclear", attachedTo="pay", event="error"),
            "config": {"attachedTo": "pay", "event": "error", "code": "unclear"},
        },
        "refused": node("endEvent"),
        "ask": {
            **node("boundaryEvent", "Ask the sender"),
            "config": {
                "attachedTo": "pay",
                "event": "escalation",
                "code": "sender",
                "interrupting": False,
            },
        },
        "clarify": node("userTask", "Clarify", assignee=CLERK),
        "clarified": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "pay"),
        "f2": flow("pay", "done"),
        "f3": flow("unpaid", "refused"),
        "f4": flow("ask", "clarify"),
        "f5": flow("clarify", "clarified"),
    }
    with app.app_context():
        publish_document(document(nodes, flows), key="pay")
    return True


def test_a_task_lists_what_its_boundaries_catch_and_reports_an_escalation_and_an_error(
    users, payable, app, db_session
):
    instance_id = start(app, "pay")
    task = open_task(db_session, instance_id, "pay")
    bob = users("bob")
    page = bob.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
    assert "Report instead of completing" in page
    assert 'value="error:unclear"' in page and "Amount unclear (error unclear)" in page
    assert 'value="escalation:sender"' in page

    bad = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:other"})
    assert bad.status_code == 422
    assert "Choose one of the listed" in bad.get_data(as_text=True)

    sent = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "escalation:sender"})
    assert sent.status_code == 303
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "open", "non-interrupting: the task goes on"
    assert open_task(db_session, instance_id, "clarify")

    failed = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:unclear"})
    assert failed.status_code == 303
    db_session.expire_all()
    paid = db_session.get(Task, task.id)
    assert paid.status == "completed" and paid.completed_by_id == paid.assignee_id
    reported = db_session.execute(
        select(HistoryEntry.details, HistoryEntry.actor)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "task_reported")
        .order_by(HistoryEntry.id)
    ).all()
    assert [(d["event"], d["code"], actor) for d, actor in reported] == [
        ("escalation", "sender", "bob"),
        ("error", "unclear", "bob"),
    ]
    thrown = db_session.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "thrown"
        )
    ).all()
    assert [d["caught_by"] for d in thrown] == ["ask", "unpaid"]
    assert db_session.get(Instance, instance_id).status == "running"  # "clarify" is still open
    again = post(bob, f"/inbox/tasks/{task.id}/report", {"outcome": "error:unclear"})
    assert again.status_code == 409


def test_only_someone_who_may_work_the_task_reports(users, payable, app, db_session):
    task = open_task(db_session, start(app, "pay"), "pay")
    response = post(users("designer"), f"/inbox/tasks/{task.id}/report", {"outcome": "error:x"})
    assert response.status_code in (403, 404)
    db_session.expire_all()
    assert db_session.get(Task, task.id).status == "open"
