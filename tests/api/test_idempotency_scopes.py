"""Idempotency keys and message ids belong to the caller's scope: the same id in another
partition is a new message, and no answer names an instance outside the caller's partitions.
Every JSON endpoint refuses a body that is not JSON (415) and changes nothing."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from tests.helpers.app import make_user
from tests.helpers.documents import chain, node
from tests.helpers.processes import publish_document
from webapp.extensions import db
from webapp.models import Instance, Partition, SignalBroadcast, Token, User
from webapp.services import messages

KEY = "Idempotency-Key"
CLERK = {"type": "role", "value": "clerk"}
OPERATE = ["instances.read", "instances.manage", "instances.start"]


@pytest.fixture
def scoped(app, published):
    """`on_order` (finance) starts on message "order.placed"; `hr_wait` (hr) waits for that
    message; `on_hire` (hr) starts on message "hire". `fin-op` and `hr-op` operate one partition
    each."""
    with app.app_context():
        make_user("fin-op", OPERATE, ["finance"], password="flowdesk-demo")
        make_user("hr-op", OPERATE, ["hr"], password="flowdesk-demo")
        on_order = chain(("review", node("userTask", assignee=CLERK)))
        on_order["nodes"]["start"]["config"] = {"event": "message", "message": "order.placed"}
        publish_document(on_order, "on_order", partition="finance")
        catch = node("messageCatch", message="order.placed", correlationKey="$input.order")
        publish_document(chain(("paid", catch)), "hr_wait", partition="hr")
        on_hire = chain(("welcome", node("userTask", assignee=CLERK)))
        on_hire["nodes"]["start"]["config"] = {"event": "message", "message": "hire"}
        publish_document(on_hire, "on_hire", partition="hr")


def waiting(db_session, instance_id: int) -> list[str]:
    db_session.rollback()
    query = select(Token.node_id).where(Token.instance_id == instance_id, Token.status == "waiting")
    return list(db_session.scalars(query))


def numbers(value: object) -> set[int]:
    """Every whole number in a JSON answer: the instance ids it names, among others."""
    if isinstance(value, dict):
        return set().union(*(numbers(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(numbers(v) for v in value))
    return {value} if isinstance(value, int) and not isinstance(value, bool) else set()


ORDER = {"name": "order.placed", "correlation_key": "ORDER-123", "message_id": "ORDER-123"}


def test_a_message_id_used_in_one_partition_is_a_new_message_in_another(api, scoped, db_session):
    started = api("fin-op").post("/api/messages", json=ORDER)
    assert started.status_code == 201, started.json
    finance_instance = started.json["started"]

    hr_instance = (
        api("hr-op")
        .post("/api/instances", json={"process_key": "hr_wait", "input": {"order": "ORDER-123"}})
        .json["id"]
    )
    assert waiting(db_session, hr_instance) == ["paid"]
    delivered = api("hr-op").post("/api/messages", json=ORDER)
    assert delivered.status_code == 200, delivered.json
    assert delivered.json == {
        "delivered": [hr_instance],
        "message_id": "ORDER-123",
        "duplicate": False,
    }
    assert waiting(db_session, hr_instance) == []
    assert finance_instance not in numbers(delivered.json)

    # Within its own scope the id is still once-only: a retry is a duplicate, another body 422.
    again = api("hr-op").post("/api/messages", json=ORDER)
    assert again.json == {"delivered": [hr_instance], "message_id": "ORDER-123", "duplicate": True}
    other = api("hr-op").post("/api/messages", json={**ORDER, "payload": {"n": 2}})
    assert (other.status_code, other.json["error"]) == (422, "idempotency_key_reused")
    assert finance_instance not in numbers(other.json)

    # The finance sender's retry still answers with its own start.
    replay = api("fin-op").post("/api/messages", json=ORDER)
    assert (replay.status_code, replay.json["started"]) == (200, finance_instance)
    assert replay.json["duplicate"] is True


def test_a_message_id_may_start_one_instance_in_each_partition(api, scoped, db_session):
    first = api("fin-op").post("/api/messages", json=ORDER)
    assert first.status_code == 201, first.json
    hire = api("hr-op").post(
        "/api/messages", json={"name": "hire", "correlation_key": "E-1", "message_id": "ORDER-123"}
    )
    assert hire.status_code == 201, hire.json
    assert hire.json["started"] != first.json["started"]
    assert db_session.get(Instance, hire.json["started"]).partition.key == "hr"
    # hr cannot start the finance process: no match, and nothing about finance's instance.
    refused = api("hr-op").post("/api/messages", json=ORDER)
    assert refused.status_code == 404, refused.json
    assert first.json["started"] not in numbers(refused.json)


def test_the_send_message_tool_keeps_its_id_in_its_partition(engine, scoped):
    def send(partition: str | None) -> object:
        partition_id = engine.scalar(select(Partition.id).where(Partition.key == partition))
        delivery = messages.deliver(
            "hire",
            "E-9",
            None,
            message_id="job-7",
            partitions={partition_id} if partition_id else set(),
            actor=None,
            may_start=lambda process: process.partition_id in (None, partition_id),
            partition_id=partition_id,
        )
        engine.rollback()
        return delivery

    first = send("hr")
    assert first.started is not None and not first.duplicate
    assert send("hr") == first._replace(duplicate=True)
    with pytest.raises(messages.InstanceError) as finance:
        send("finance")  # finance may not start hr's process: a miss, not hr's instance
    assert finance.value.status == 404


def test_a_start_key_whose_instance_left_the_users_partitions_names_nothing(
    app, api, scoped, db_session
):
    with app.app_context():
        make_user("both", OPERATE, ["finance", "hr"], password="flowdesk-demo")
    body = {"process_key": "hr-only"}
    first = api("both").post("/api/instances", json=body, headers={KEY: "start-1"})
    assert first.status_code == 201, first.json
    with app.app_context():
        user = db.session.scalar(select(User).where(User.username == "both"))
        user.partitions = [p for p in user.partitions if p.key == "finance"]
        db.session.commit()
    again = api("both").post("/api/instances", json=body, headers={KEY: "start-1"})
    assert (again.status_code, again.json["error"]) == (409, "idempotency_key_unavailable")
    assert first.json["id"] not in numbers(again.json)


def broadcasts(db_session) -> int:
    db_session.rollback()
    return db_session.scalar(select(func.count()).select_from(SignalBroadcast))


def test_a_retried_broadcast_with_a_key_is_made_once_per_user(api, scoped, db_session):
    body = {"name": "go", "partition": "hr"}
    first = api("hr-op").post("/api/signals", json=body, headers={KEY: "b-1"})
    assert first.status_code == 202, first.json
    again = api("hr-op").post("/api/signals", json=body, headers={KEY: "b-1"})
    assert (again.status_code, again.json["id"]) == (200, first.json["id"])
    assert again.headers["Idempotent-Replayed"] == "true"
    assert broadcasts(db_session) == 1

    changed = api("hr-op").post("/api/signals", json={"name": "other"}, headers={KEY: "b-1"})
    assert (changed.status_code, changed.json["error"]) == (422, "idempotency_key_reused")
    # Another user's key of the same text is their own.
    theirs = api("fin-op").post(
        "/api/signals", json={"name": "go", "partition": "finance"}, headers={KEY: "b-1"}
    )
    assert theirs.status_code == 202 and theirs.json["id"] != first.json["id"]
    assert broadcasts(db_session) == 2
    bad = api("hr-op").post("/api/signals", json=body, headers={KEY: "no spaces"})
    assert bad.status_code == 400


@pytest.mark.parametrize(
    "kwargs",
    [
        {"data": {"reason": "form"}},
        {"data": {"reason": "form"}, "content_type": "multipart/form-data"},
        {"data": json.dumps({"reason": "text"}), "content_type": "text/plain"},
    ],
    ids=["form", "multipart", "text"],
)
def test_a_body_that_is_not_json_is_refused_415_and_changes_nothing(
    api, scoped, db_session, kwargs
):
    instance = api("operator").post("/api/instances", json={"process_key": "open"}).json["id"]
    for path in (
        f"/api/instances/{instance}/cancel",
        f"/api/instances/{instance}/retry",
        "/api/instances",
        "/api/messages",
        "/api/signals",
    ):
        refused = api("operator").post(path, **kwargs)
        assert refused.status_code == 415, (path, refused.json)
        assert refused.json["error"] == "unsupported_media_type"
    db_session.rollback()
    assert db_session.get(Instance, instance).status == "running"
    assert broadcasts(db_session) == 0
    assert db_session.scalar(select(func.count()).select_from(Instance)) == 1
    # JSON, and an empty body where fields are optional, still work.
    assert api("operator").post(f"/api/instances/{instance}/cancel").status_code == 200
