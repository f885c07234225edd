"""Suspend and resume with real workers: a timer falling due, a tool outcome arriving and two
messages sent while an instance is suspended each wait, and resuming applies them once, in
order. Suspend and resume go through the API as an operator would."""

from __future__ import annotations

import time

from rq import Worker
from sqlalchemy import func, select

from tests.helpers.documents import chain, node, parallel_join
from tests.helpers.http import basic
from tests.helpers.instances import history, load, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import deliveries, wait_for
from webapp.engine import steps
from webapp.models import HeldEvent, HistoryEntry

OPERATOR = basic("operator")
# Quick sweeps: a job the sweep wrongly sent again while suspended would show within the test.
QUICK_SWEEP = {"SWEEP_INTERVAL": 0.3, "SWEEP_GRACE": 0.3}


def _registered(redis_client, count: int = 1) -> None:
    wait_for(lambda: len(Worker.all(connection=redis_client)) == count, 60, "workers to register")


def _suspend(client, instance_id: int, reason: str = "checking the order") -> dict:
    response = client.post(
        f"/api/instances/{instance_id}/suspend", json={"reason": reason}, headers=OPERATOR
    )
    assert response.status_code == 200, response.json
    return response.json


def _resume(client, instance_id: int) -> dict:
    response = client.post(f"/api/instances/{instance_id}/resume", headers=OPERATOR)
    assert response.status_code == 200, response.json
    return response.json


def _status(engine, instance_id: int) -> str:
    return load(engine, instance_id).status


def _held(engine, instance_id: int) -> int:
    engine.rollback()
    return engine.scalar(
        select(func.count()).select_from(HeldEvent).where(HeldEvent.instance_id == instance_id)
    )


def test_a_timer_falling_due_while_suspended_fires_once_after_resume(
    engine, client, demo, workers, redis_client, tmp_path
):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))), key="t")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = start(engine, version)
    suspended = _suspend(client, instance_id)
    assert suspended["suspended"]["by"] == "operator"
    assert suspended["suspended"]["reason"] == "checking the order"
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.wake_at is None  # no clock sends it while suspended
    time.sleep(3)  # due after 1 s; clocks and sweeps have run many times since
    assert _status(engine, instance_id) == "running"
    assert ("timer", "wait") not in history(engine, instance_id)
    assert [job.id for job in pending_jobs(engine, instance_id, "timer")] == [timer.id]
    assert deliveries(tmp_path, timer.id) <= 1  # not sent again and again while it waits

    _resume(client, instance_id)
    wait_for(lambda: _status(engine, instance_id) == "completed", 20, "the timer after resume")
    kinds = history(engine, instance_id)
    assert kinds.count(("timer", "wait")) == 1
    assert kinds.index(("suspended", None)) < kinds.index(("resumed", None))
    assert kinds.index(("resumed", None)) < kinds.index(("timer", "wait"))


def test_a_tool_outcome_arriving_while_suspended_is_applied_once_on_resume(
    engine, client, demo, workers, redis_client, test_tools, tmp_path
):
    # A short timeout: its lease runs out while suspended, and the sweep must still not send it.
    gate = node("serviceTask", tool="test.gate", inputs={"dir": repr(str(tmp_path))}, timeout=3)
    version = publish_document(chain(("call", gate)), key="gated")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = start(engine, version)
    wait_for(lambda: (tmp_path / "started").exists(), 20, "the tool call to start")
    _suspend(client, instance_id)
    (tmp_path / "open").touch()  # the call finishes while the instance is suspended
    wait_for(lambda: _held(engine, instance_id) == 1, 20, "the outcome to be kept")
    time.sleep(4)  # the lease (3 s + 0.5 s) ran out and sweeps ran: no second call
    assert _status(engine, instance_id) == "running"
    assert ("tool_attempt", "call") not in history(engine, instance_id)
    [job] = pending_jobs(engine, instance_id, "tool")
    assert job.attempt == 1
    assert deliveries(tmp_path, job.id) <= 1

    _resume(client, instance_id)
    wait_for(lambda: _status(engine, instance_id) == "completed", 20, "the outcome applied")
    assert _held(engine, instance_id) == 0
    assert history(engine, instance_id).count(("tool_attempt", "call")) == 1
    engine.rollback()
    attempts = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "tool_attempt"
        )
    ).all()
    assert [entry["status"] for entry in attempts] == ["ok"]
    engine.rollback()
    assert engine.get(type(job), job.id, populate_existing=True).attempt == 1


def _two_messages() -> dict:
    first = node("messageCatch", message="first", correlationKey="$input.order", saveTo="last")
    second = node("messageCatch", message="second", correlationKey="$input.order", saveTo="last")
    return parallel_join(first, second)


def test_two_messages_sent_while_suspended_are_applied_in_order_on_resume(
    engine, client, demo, workers, redis_client
):
    version = publish_document(_two_messages(), key="two-messages")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = start(engine, version, input={"order": "A-1"})
    _suspend(client, instance_id)
    for name in ("first", "second"):
        body = {"name": name, "correlation_key": "A-1", "payload": {"from": name}}
        sent = client.post("/api/messages", json=body, headers=OPERATOR)
        assert (sent.status_code, sent.json["delivered"]) == (200, [instance_id])
    assert _held(engine, instance_id) == 2
    time.sleep(1)
    assert _status(engine, instance_id) == "running"
    assert ("message", "a") not in history(engine, instance_id)

    _resume(client, instance_id)
    wait_for(lambda: _status(engine, instance_id) == "completed", 20, "the messages applied")
    kinds = history(engine, instance_id)
    assert kinds.index(("message", "a")) < kinds.index(("message", "b"))
    assert kinds.count(("message", "a")) == kinds.count(("message", "b")) == 1
    assert load(engine, instance_id).vars["last"] == {"from": "second"}


def test_a_message_for_a_suspended_instance_with_a_message_id_is_kept_once(engine, client, demo):
    version = publish_document(_two_messages(), key="two-messages")
    instance_id = start(engine, version, input={"order": "B-2"})
    _suspend(client, instance_id)
    body = {"name": "first", "correlation_key": "B-2", "payload": 1, "message_id": "m-1"}
    assert client.post("/api/messages", json=body, headers=OPERATOR).status_code == 200
    again = client.post("/api/messages", json=body, headers=OPERATOR)
    assert again.json["duplicate"] is True
    assert _held(engine, instance_id) == 1


def test_a_tool_job_is_not_leased_while_suspended(engine, client, demo, test_tools):
    version = publish_document(
        chain(("call", node("serviceTask", tool="test.record", inputs={"name": "'x'"}))),
        key="leasing",
    )
    instance_id = start(engine, version)
    [job] = pending_jobs(engine, instance_id, "tool")
    _suspend(client, instance_id)
    engine.rollback()
    assert steps.lease_tool_job(engine, job.id, 5, lease_grace=1) is None
    engine.rollback()
    _resume(client, instance_id)
    engine.rollback()
    assert steps.lease_tool_job(engine, job.id, 5, lease_grace=1) is not None
    engine.rollback()


def test_suspends_racing_timers_fall_wholly_before_or_after_each_timer(
    app, engine, demo, workers, redis_client
):
    """Timers fall due while operators suspend their instances at that same moment: each timer
    fires once, before the suspension or after the resume, never while suspended."""
    from tests.helpers.http import at_once

    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))), key="race")
    workers.start(2, **QUICK_SWEEP)
    _registered(redis_client, 2)
    ids = [start(engine, version) for _ in range(6)]
    time.sleep(0.9)

    def suspend_one(index: int = 0):
        return app.test_client().post(
            f"/api/instances/{ids[index]}/suspend", json={"reason": "race"}, headers=OPERATOR
        )

    counter = iter(range(len(ids)))
    results = at_once(len(ids), lambda: suspend_one(next(counter)))
    assert all(r.status_code in (200, 409) for r in results), [r.json for r in results]
    time.sleep(1.5)
    client = app.test_client()
    for instance_id in ids:
        if load(engine, instance_id).suspended_at is not None:
            _resume(client, instance_id)
    for instance_id in ids:
        wait_for(lambda i=instance_id: _status(engine, i) == "completed", 20, "every timer")
        kinds = [kind for kind, _ in history(engine, instance_id)]
        assert kinds.count("timer") == 1, kinds
        if "suspended" in kinds:
            at = kinds.index("timer")
            assert at < kinds.index("suspended") or at > kinds.index("resumed"), kinds
