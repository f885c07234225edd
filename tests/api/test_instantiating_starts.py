"""Receive tasks and event-based gateways that start the process (`instantiate`): their message,
sent to `POST /api/messages`, starts an instance there as a message start does (payload,
business key, message id), and the instance goes on from that element."""

from __future__ import annotations

from sqlalchemy import select

from tests.helpers.documents import CLERK, document, flow, node
from tests.helpers.instances import history, open_tasks
from tests.helpers.processes import publish_document
from webapp.models import HistoryEntry, Instance

KEY = "$instance.businessKey"


def _receive_first():
    nodes = {
        "order": node("receiveTask", "Order", message="order.in", saveTo="order", instantiate=True),
        "review": node("userTask", "Review", assignee=CLERK),
        "end": node("endEvent"),
    }
    return document(nodes, {"f1": flow("order", "review"), "f2": flow("review", "end")})


def _gateway_first(gateway_type: str) -> dict:
    config = {"instantiate": True}
    if gateway_type == "parallel":
        config["gatewayType"] = "parallel"
    join = "parallelGateway" if gateway_type == "parallel" else "exclusiveGateway"
    nodes = {
        "gw": node("eventBasedGateway", "Which first", **config),
        "paid": node("messageCatch", "Paid", message="o.paid", correlationKey=KEY),
        "shipped": node("receiveTask", "Shipped", message="o.shipped", correlationKey=KEY),
        "join": node(join, "Join"),
        "end": node("endEvent"),
    }
    flows = {
        "to_paid": flow("gw", "paid"),
        "to_shipped": flow("gw", "shipped"),
        "from_paid": flow("paid", "join"),
        "from_shipped": flow("shipped", "join"),
        "out": flow("join", "end"),
    }
    return document(nodes, flows)


def _entered(db_session, instance_id: int) -> list[str]:
    return [n for kind, n in history(db_session, instance_id) if kind == "entered"]


def test_a_receive_task_s_message_starts_the_process_there(api, db_session):
    publish_document(_receive_first(), "orders")
    message = {"name": "order.in", "correlation_key": "A-1", "payload": {"total": 3}}
    message["message_id"] = "m-1"
    first = api("operator").post("/api/messages", json=message)
    assert first.status_code == 201, first.json
    instance = db_session.get(Instance, first.json["started"])
    assert (instance.business_key, instance.started_via) == ("A-1", "message")
    assert instance.vars["order"] == {"total": 3}
    assert _entered(db_session, instance.id) == ["order", "review"]
    assert [t.title for t in open_tasks(db_session, instance.id)] == ["Review"]
    again = api("operator").post("/api/messages", json=message)
    assert again.json == {**first.json, "duplicate": True}


def test_an_exclusive_gateway_starts_at_the_target_whose_message_came(api, db_session):
    publish_document(_gateway_first("exclusive"), "shipping")
    answer = api("operator").post("/api/messages", json={"name": "o.shipped", "correlation_key": 7})
    assert answer.status_code == 201, answer.json
    instance = db_session.get(Instance, answer.json["started"])
    assert instance.status == "completed"
    assert _entered(db_session, instance.id) == ["gw", "shipped", "join", "end"]


def test_a_parallel_gateway_waits_in_the_new_instance_for_its_other_messages(api, db_session):
    publish_document(_gateway_first("parallel"), "both")
    started = api("operator").post("/api/messages", json={"name": "o.paid", "correlation_key": 9})
    assert started.status_code == 201, started.json
    instance_id = started.json["started"]
    assert db_session.get(Instance, instance_id).status == "running"
    later = api("operator").post("/api/messages", json={"name": "o.shipped", "correlation_key": 9})
    assert (later.status_code, later.json) == (200, {"delivered": [instance_id]})
    db_session.rollback()
    assert db_session.get(Instance, instance_id).status == "completed"
    kinds = db_session.scalars(
        select(HistoryEntry.node_id).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "message"
        )
    ).all()
    assert kinds == ["paid", "shipped"]
