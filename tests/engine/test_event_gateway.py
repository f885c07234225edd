"""Event-based gateways: the first event wins, the others are withdrawn in the same step, and
late deliveries of the losers are dropped (the message API answers 404 as for any stale one)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from tests.helpers.documents import document, flow, gateway_nodes, node, simple
from tests.helpers.http import send
from tests.helpers.instances import details, entered, fire, history, load, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.models import Job, MessageSubscription, Token
from webapp.services.jobs import commit


def subscriptions(session, instance_id: int) -> list[str]:
    session.rollback()
    return list(
        session.scalars(
            select(MessageSubscription.node_id).where(
                MessageSubscription.instance_id == instance_id
            )
        )
    )


def test_the_token_waits_at_the_gateway_holding_every_targets_subscription(engine):
    instance_id = start(engine, publish_document(simple()), input={"order": "A-1"})
    engine.rollback()
    [token] = engine.scalars(select(Token).where(Token.instance_id == instance_id)).all()
    assert (token.node_id, token.status) == ("gw", "waiting")
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert (timer.node_id, timer.token_id) == ("late", token.id)
    assert subscriptions(engine, instance_id) == ["paid"]


def test_the_message_wins_and_the_timer_is_withdrawn(engine, client, demo):
    instance_id = start(engine, publish_document(simple()), input={"order": "A-1"})
    [timer] = pending_jobs(engine, instance_id, "timer")
    sent = send(client, "A-1", {"amount": 5})
    assert (sent.status_code, sent.json) == (200, {"delivered": [instance_id]})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.nodes["paid"] == {"amount": 5}
    assert instance.vars["payment"] == {"amount": 5}
    [won] = details(engine, instance_id, "event_won", "gw")
    assert won == {"winner": "paid", "event": "message", "name": "paid", "withdrawn": ["late"]}
    assert entered(engine, instance_id) == ["start", "gw", "paid", "paid_end"]
    assert engine.get(Job, timer.id).status == "cancelled"
    late = steps.fire_timer(engine, timer.id, instance_id, now=timer.due_at + timedelta(seconds=1))
    commit(late)
    assert late.applied is False
    assert history(engine, instance_id).count(("event_won", "gw")) == 1


def test_the_timer_wins_and_a_later_message_finds_no_target(engine, client, demo):
    instance_id = start(engine, publish_document(simple()), input={"order": "B-2"})
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert "paid" not in instance.nodes
    [won] = details(engine, instance_id, "event_won", "gw")
    assert (won["winner"], won["event"], won["withdrawn"]) == ("late", "timer", ["paid"])
    assert subscriptions(engine, instance_id) == []
    assert entered(engine, instance_id) == ["start", "gw", "late", "late_end"]
    late = send(client, "B-2")
    assert (late.status_code, late.json["error"]) == (404, "no_match")
    assert load(engine, instance_id).status == "completed"


def test_a_receive_task_target_completes_with_the_message(engine, client, demo):
    instance_id = start(engine, publish_document(simple("receiveTask")), input={"order": "C-3"})
    assert subscriptions(engine, instance_id) == ["paid"]
    assert send(client, "C-3", {"ok": True}).status_code == 200
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["payment"] == {"ok": True}
    assert entered(engine, instance_id) == ["start", "gw", "paid", "paid_end"]
    assert subscriptions(engine, instance_id) == []


def _in_sub_process(boundary: bool) -> dict[str, Any]:
    nodes, flows = gateway_nodes("s_", parent="sub")
    outer = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Payment"),
        "s_start": {**node("startEvent"), "parent": "sub"},
        **nodes,
        "after": node("serviceTask", tool="noop", inputs={}),
        "end": node("endEvent"),
    }
    flows = {
        **flows,
        "f0": flow("start", "sub"),
        "f1": flow("sub", "after"),
        "f2": flow("after", "end"),
        "s0": flow("s_start", "s_gw"),
    }
    if boundary:
        outer["stop"] = node("boundaryEvent", attachedTo="sub", event="timer", duration="PT1H")
        outer["stopped"] = node("endEvent")
        flows["b0"] = flow("stop", "stopped")
    return document(outer, flows)


def test_an_event_gateway_inside_a_sub_process(engine, client, demo):
    instance_id = start(engine, publish_document(_in_sub_process(False)), input={"order": "D"})
    assert send(client, "D", {"n": 1}).status_code == 200
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    path = entered(engine, instance_id)
    assert path[-4:] == ["s_paid", "s_paid_end", "after", "end"]
    assert pending_jobs(engine, instance_id, "timer") == []


def test_an_interrupting_boundary_on_the_sub_process_withdraws_every_event(engine, client, demo):
    instance_id = start(engine, publish_document(_in_sub_process(True)), input={"order": "E"})
    timers = {job.node_id: job for job in pending_jobs(engine, instance_id, "timer")}
    assert set(timers) == {"stop", "s_late"}
    fire(engine, timers["stop"], instance_id)
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id)[-1] == "stopped"
    assert engine.get(Job, timers["s_late"].id).status == "cancelled"
    assert subscriptions(engine, instance_id) == []
    assert send(client, "E").status_code == 404
    assert ("event_won", "s_gw") not in history(engine, instance_id)


def test_a_target_whose_correlation_key_fails_subscribes_nothing(engine):
    doc = simple()
    doc["nodes"]["paid"]["config"]["correlationKey"] = "$input.missing.field"
    instance_id = start(engine, publish_document(doc), input={"order": "F"})
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("gw", "correlation")
    assert pending_jobs(engine, instance_id, "timer") == []
    assert subscriptions(engine, instance_id) == []


def test_a_signal_target_wins_and_the_timer_is_withdrawn(engine):
    from tests.helpers.instances import broadcast

    nodes, flows = gateway_nodes()
    nodes["paid"] = node("signalCatch", "Paid", signal="paid", saveTo="payment")
    doc = document({"start": node("startEvent"), **nodes}, {"f0": flow("start", "gw"), **flows})
    instance_id = start(engine, publish_document(doc))
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert subscriptions(engine, instance_id) == ["paid"]
    broadcast(engine, "paid", {"amount": 5})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["payment"] == {"amount": 5}
    assert pending_jobs(engine, instance_id, "timer") == []
    assert engine.get(Job, timer.id).status == "cancelled"
    [won] = details(engine, instance_id, "event_won", "gw")
    assert won["winner"] == "paid"
