"""`POST /api/signals` and `GET /api/signals/<id>`; message starts through `POST /api/messages`
with message ids (once, also when delivered twice at the same moment); one message name, one
process."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.app import make_user
from tests.helpers.documents import chain, node
from tests.helpers.http import at_once, basic, post_json
from tests.helpers.processes import publish_document
from webapp.models import Instance, SignalBroadcast

CLERK = {"type": "role", "value": "approver"}


def _count(db_session, **where) -> int:
    db_session.rollback()
    return db_session.scalar(select(func.count()).select_from(Instance).filter_by(**where))


@pytest.fixture
def listeners(app, published):
    """`waits` waits for signal "go"; `on_order` starts on message "order.placed"; `on_go`
    starts on signal "go" (no partition: it starts in the broadcast's partition)."""
    with app.app_context():
        publish_document(chain(("wait", node("signalCatch", signal="go", saveTo="got"))), "waits")
        review = ("review", node("userTask", assignee=CLERK))
        on_order = chain(review)
        on_order["nodes"]["start"]["config"] = {"event": "message", "message": "order.placed"}
        publish_document(on_order, "on_order")
        on_go = chain(review)
        on_go["nodes"]["start"]["config"] = {"event": "signal", "signal": "go"}
        publish_document(on_go, "on_go")


def test_a_broadcast_is_accepted_then_reaches_the_waiting_instances(api, listeners, db_session):
    waiting = api("operator").post("/api/instances", json={"process_key": "waits"}).json["id"]
    sent = api("operator").post("/api/signals", json={"name": "go", "payload": {"n": 1}})
    assert sent.status_code == 202, sent.json
    assert sent.json["status"] == "pending" and sent.json["partition"] is None
    assert sent.headers["Location"].endswith(f"/api/signals/{sent.json['id']}")
    run_broadcasts(db_session)
    progress = api("operator").get(sent.headers["Location"])
    assert progress.status_code == 200
    body = progress.json
    assert (body["status"], body["total"], body["delivered"], body["started"]) == (
        "done",
        1,
        1,
        1,
    )
    assert body["thrown_by"] == {"user": "operator"}
    assert db_session.get(Instance, waiting).vars["got"] == {"n": 1}
    assert _count(db_session, process_key="on_go", started_via="signal") == 1


def test_a_broadcast_in_a_partition_needs_start_rights_there(api, listeners, db_session):
    in_hr = api("alice").post("/api/signals", json={"name": "go", "partition": "hr"})
    assert in_hr.status_code == 422
    assert set(in_hr.json["details"]["fields"]) == {"partition"}
    mine = api("alice").post("/api/signals", json={"name": "go", "partition": "finance"})
    assert mine.status_code == 202
    run_broadcasts(db_session)
    assert _count(db_session, process_key="on_go") == 1
    started = db_session.scalar(select(Instance).where(Instance.process_key == "on_go"))
    assert started.partition.key == "finance"
    hr_broadcast = api("operator").post("/api/signals", json={"name": "x", "partition": "hr"})
    assert api("alice").get(hr_broadcast.headers["Location"]).status_code == 404
    assert api("operator").get(hr_broadcast.headers["Location"]).status_code == 200


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"name"}),
        ({"name": "  "}, {"name"}),
        ({"name": "x" * 201}, {"name"}),
        ({"name": "go", "payload": [1]}, {"payload"}),
        ({"name": "go", "partition": 3}, {"partition"}),
        ({"name": "go", "partition": "nowhere"}, {"partition"}),
        ({"name": "go", "extra": 1}, {"extra"}),
    ],
)
def test_a_bad_broadcast_is_refused_naming_the_field(api, listeners, db_session, body, fields):
    refused = api("operator").post("/api/signals", json=body)
    assert refused.status_code == 422, refused.json
    assert set(refused.json["details"]["fields"]) == fields
    db_session.rollback()
    assert db_session.scalar(select(func.count()).select_from(SignalBroadcast)) == 0


def test_a_user_who_may_not_start_instances_may_not_broadcast(app, api, listeners):
    with app.app_context():
        make_user("reader", ["instances.read"], password="flowdesk-demo")
    for body in ({"name": "go"}, {"name": ""}):
        refused = api("reader").post("/api/signals", json=body)
        assert refused.status_code == 403, refused.json
    assert api("operator").get("/api/signals/999").status_code == 404
    assert api("operator").post("/api/signals", data="[").status_code == 400


def test_a_message_nobody_waits_for_starts_its_process_once_per_message_id(
    api, listeners, db_session
):
    message = {
        "name": "order.placed",
        "correlation_key": "A-1",
        "payload": {"total": 12},
        "message_id": "order-A-1",
    }
    first = api("operator").post("/api/messages", json=message)
    assert first.status_code == 201, first.json
    started = first.json["started"]
    assert first.json == {
        "delivered": [],
        "started": started,
        "message_id": "order-A-1",
        "duplicate": False,
    }
    assert first.headers["Location"].endswith(f"/api/instances/{started}")
    instance = db_session.get(Instance, started)
    assert (instance.input, instance.business_key, instance.started_via) == (
        {"total": 12},
        "A-1",
        "message",
    )
    again = api("operator").post("/api/messages", json=message)
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == {**first.json, "duplicate": True}
    changed = api("operator").post("/api/messages", json={**message, "payload": {"total": 13}})
    assert (changed.status_code, changed.json["error"]) == (422, "idempotency_key_reused")
    # Without a message id each message starts an instance; a correlation key is optional.
    assert api("operator").post("/api/messages", json={"name": "order.placed"}).status_code == 201
    assert _count(db_session, process_key="on_order") == 2
    unknown = api("operator").post("/api/messages", json={"name": "nobody.listens"})
    assert (unknown.status_code, unknown.json["error"]) == (404, "no_match")


def test_a_waiting_instance_takes_the_message_before_a_start(api, listeners, db_session):
    waiting = api("operator").post(
        "/api/instances", json={"process_key": "msg", "input": {"order": 5}}
    )
    assert waiting.status_code == 201
    # "paid" is awaited by `msg`; give it a message start too, in another process.
    on_paid = chain(("review", node("userTask", assignee=CLERK)))
    on_paid["nodes"]["start"]["config"] = {"event": "message", "message": "paid"}
    publish_document(on_paid, "on_paid")
    delivered = api("operator").post("/api/messages", json={"name": "paid", "correlation_key": 5})
    assert (delivered.status_code, delivered.json) == (200, {"delivered": [waiting.json["id"]]})
    assert _count(db_session, process_key="on_paid") == 0
    other = api("operator").post("/api/messages", json={"name": "paid", "correlation_key": 6})
    assert other.status_code == 201
    assert _count(db_session, process_key="on_paid") == 1


def test_concurrent_message_starts_with_one_id_start_one_instance(
    live_server, listeners, db_session
):
    message = {"name": "order.placed", "correlation_key": "R-1", "message_id": "race-start"}
    results = at_once(
        5, lambda: post_json(live_server, "/api/messages", message, basic("operator"))
    )
    statuses = sorted(status for status, _ in results)
    assert statuses == [200, 200, 200, 200, 201], results
    assert len({body["started"] for _, body in results}) == 1
    assert _count(db_session, process_key="on_order") == 1


def test_one_message_name_starts_one_process(app, listeners):
    from webapp.services.processes import ProcessError

    twin = chain(("review", node("userTask", assignee=CLERK)))
    twin["nodes"]["start"]["config"] = {"event": "message", "message": "order.placed"}
    with app.app_context(), pytest.raises(ProcessError) as refused:
        publish_document(twin, "twin")
    assert refused.value.code == "publish.message_taken"
    assert "on_order" in refused.value.message


@pytest.mark.parametrize(("partition", "reached"), [("finance", "in_finance"), (None, "shared")])
def test_a_broadcast_counts_and_reaches_only_its_partition(
    app, api, db_session, partition, reached
):
    with app.app_context():
        wait = chain(("wait", node("signalCatch", signal="go", saveTo="got")))
        publish_document(wait, "in_finance", "finance")
        publish_document(wait, "shared")
    ids = {
        key: api("operator").post("/api/instances", json={"process_key": key}).json["id"]
        for key in ("in_finance", "shared")
    }
    assert db_session.get(Instance, ids["in_finance"]).partition.key == "finance"
    sent = api("operator").post(
        "/api/signals", json={"name": "go", "payload": {"n": 1}, "partition": partition}
    )
    assert sent.status_code == 202, sent.json
    run_broadcasts(db_session)
    body = api("operator").get(sent.headers["Location"]).json
    assert (body["status"], body["total"], body["delivered"]) == ("done", 1, 1)
    db_session.expire_all()
    for key, instance_id in ids.items():
        instance = db_session.get(Instance, instance_id)
        assert (instance.vars.get("got"), instance.status) == (
            ({"n": 1}, "completed") if key == reached else (None, "running")
        )


@pytest.mark.parametrize("payload", [5, [1, "a"], "text", False, 0, {"total": 1}])
def test_a_message_start_keeps_a_payload_of_any_json_value(api, listeners, db_session, payload):
    sent = api("operator").post("/api/messages", json={"name": "order.placed", "payload": payload})
    assert sent.status_code == 201, sent.json
    instance = db_session.get(Instance, sent.json["started"])
    expected = payload if isinstance(payload, dict) else {"payload": payload}
    assert instance.input == expected
    shown = api("operator").get(f"/api/instances/{instance.id}").json
    assert shown["input"] == expected


def test_a_message_start_without_a_payload_has_an_empty_input(api, listeners, db_session):
    for body in ({"name": "order.placed"}, {"name": "order.placed", "payload": None}):
        sent = api("operator").post("/api/messages", json=body)
        assert sent.status_code == 201, sent.json
        assert db_session.get(Instance, sent.json["started"]).input == {}


def test_a_thrown_signal_counts_and_reaches_only_its_instance_partition(app, api, db_session):
    with app.app_context():
        wait = chain(("wait", node("signalCatch", signal="go", saveTo="got")))
        publish_document(wait, "in_finance", "finance")
        publish_document(wait, "shared")
        throw = chain(("throw", node("signalThrow", signal="go", payload={"n": "1"})))
        publish_document(throw, "thrower", "finance")
    ids = {
        key: api("operator").post("/api/instances", json={"process_key": key}).json["id"]
        for key in ("in_finance", "shared", "thrower")
    }
    run_broadcasts(db_session)
    db_session.rollback()
    thrown = db_session.scalar(select(SignalBroadcast).where(SignalBroadcast.name == "go"))
    body = api("operator").get(f"/api/signals/{thrown.id}").json
    assert (body["partition"], body["total"], body["delivered"]) == ("finance", 1, 1)
    assert body["thrown_by"] == {"instance": ids["thrower"], "node": "throw"}
    assert db_session.get(Instance, ids["in_finance"]).vars["got"] == {"n": 1}
    assert db_session.get(Instance, ids["shared"]).status == "running"
