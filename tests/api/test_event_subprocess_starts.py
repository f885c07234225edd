"""A message, signal or timer start inside an event sub-process belongs to the running instance:
it never starts its process, is no process start for the one-message-one-process rule, and makes
no schedule."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.documents import document, flow, node
from tests.helpers.processes import publish_document
from webapp.models import EventStart, Instance
from webapp.models.schedules import Schedule

CLERK = {"type": "role", "value": "approver"}


def listening(**start: object) -> dict:
    """start -> a task -> end, with an event sub-process whose start has `start` settings."""
    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "on": node("eventSubProcess"),
        "on_start": {**node("startEvent", **start), "parent": "on"},
        "on_end": {**node("endEvent"), "parent": "on"},
    }
    flows = {
        "f1": flow("start", "work"),
        "f2": flow("work", "end"),
        "f3": flow("on_start", "on_end"),
    }
    return document(nodes, flows)


def _instances(db_session) -> int:
    db_session.rollback()
    return db_session.scalar(select(func.count()).select_from(Instance))


def test_a_message_for_an_event_sub_process_starts_nothing(app, api, db_session):
    with app.app_context():
        publish_document(
            listening(event="message", message="cancel.order", correlationKey="'A-1'"), "orders"
        )
    refused = api("operator").post("/api/messages", json={"name": "cancel.order"})
    assert (refused.status_code, refused.json["error"]) == (404, "no_match")
    keyed = api("operator").post(
        "/api/messages", json={"name": "cancel.order", "correlation_key": "A-1"}
    )
    assert (keyed.status_code, keyed.json["error"]) == (404, "no_match")
    assert _instances(db_session) == 0


def test_two_processes_may_each_have_a_message_event_sub_process_of_one_name(app, api, db_session):
    with app.app_context():
        for key in ("orders", "returns"):
            publish_document(
                listening(event="message", message="cancel.order", correlationKey="'A-1'"), key
            )
    db_session.rollback()
    assert db_session.scalar(select(func.count()).select_from(EventStart)) == 0
    ids = [
        api("operator").post("/api/instances", json={"process_key": key}).json["id"]
        for key in ("orders", "returns")
    ]
    sent = api("operator").post(
        "/api/messages", json={"name": "cancel.order", "correlation_key": "A-1"}
    )
    assert (sent.status_code, sent.json) == (200, {"delivered": ids})


def test_a_signal_for_an_event_sub_process_starts_nothing(app, api, db_session):
    with app.app_context():
        publish_document(listening(event="signal", signal="go"), "alerts")
    sent = api("operator").post("/api/signals", json={"name": "go"})
    assert sent.status_code == 202, sent.json
    run_broadcasts(db_session)
    body = api("operator").get(sent.headers["Location"]).json
    assert (body["status"], body["total"], body["started"]) == ("done", 0, 0)
    assert _instances(db_session) == 0


def test_a_timer_event_sub_process_makes_no_schedule(app, db_session):
    with app.app_context():
        publish_document(listening(event="timer", duration="PT1H"), "reminders")
    db_session.rollback()
    assert db_session.scalar(select(func.count()).select_from(Schedule)) == 0
