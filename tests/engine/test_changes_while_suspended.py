"""Hold, correct, resume: an operator modifies or migrates a suspended instance, with real
workers. What the change creates (timers, tool jobs, tasks) waits like the rest of the instance
until the resume; a held message whose wait the change removed is reported on resume."""

from __future__ import annotations

import time

from rq import Worker
from sqlalchemy import select

from tests.helpers.documents import CLERK, chain, node
from tests.helpers.http import basic
from tests.helpers.instances import broadcast, history, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import deliveries, wait_for
from webapp.engine import EngineError, migration, steps
from webapp.models import HistoryEntry, Token
from webapp.models.base import utcnow
from webapp.services.jobs import commit

OPERATOR = basic("operator")
QUICK_SWEEP = {"SWEEP_INTERVAL": 0.3, "SWEEP_GRACE": 0.3}


def _registered(redis_client) -> None:
    wait_for(lambda: len(Worker.all(connection=redis_client)) == 1, 60, "a worker to register")


def _post(client, path: str, body: dict | None = None) -> dict:
    response = client.post(path, json=body or {}, headers=OPERATOR)
    assert response.status_code == 200, response.json
    return response.json


def _token_at(engine, instance_id: int, node_id: str) -> int:
    engine.rollback()
    return engine.scalar(
        select(Token.id).where(
            Token.instance_id == instance_id,
            Token.node_id == node_id,
            Token.status.in_(("active", "waiting")),
        )
    )


def _move(client, instance_id: int, token_id: int, to: str) -> dict:
    body = {"operations": [{"move": token_id, "to": to}], "reason": "correcting"}
    return _post(client, f"/api/instances/{instance_id}/modifications", body)


def _held_then_moved(engine, client, version, to: str, **start_args) -> int:
    instance_id = start(engine, version, **start_args)
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and correct"})
    _move(client, instance_id, _token_at(engine, instance_id, "check"), to)
    return instance_id


def test_a_timer_a_modification_creates_while_suspended_fires_once_after_resume(
    engine, client, demo, workers, redis_client, tmp_path
):
    document = chain(
        ("check", node("userTask", "Check", assignee=CLERK)),
        ("wait", node("timerCatch", duration="PT1S")),
    )
    version = publish_document(document, key="timer-fix")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = _held_then_moved(engine, client, version, "wait")
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.wake_at is None  # no clock claims it while suspended
    time.sleep(3)  # due after 1 s; clocks and sweeps ran many times since
    assert load(engine, instance_id).status == "running"
    assert ("timer", "wait") not in history(engine, instance_id)
    assert [job.id for job in pending_jobs(engine, instance_id, "timer")] == [timer.id]
    engine.rollback()
    assert engine.get(type(timer), timer.id, populate_existing=True).attempt == 0
    assert deliveries(tmp_path, timer.id) == 0  # neither the step, a clock nor a sweep sent it

    _post(client, f"/api/instances/{instance_id}/resume")
    wait_for(lambda: load(engine, instance_id).status == "completed", 20, "the timer")
    assert history(engine, instance_id).count(("timer", "wait")) == 1


def test_a_tool_job_a_modification_creates_while_suspended_starts_only_after_resume(
    engine, client, demo, workers, redis_client, test_tools, tmp_path
):
    gate = node("serviceTask", tool="test.gate", inputs={"dir": repr(str(tmp_path))})
    document = chain(("check", node("userTask", "Check", assignee=CLERK)), ("call", gate))
    version = publish_document(document, key="tool-fix")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = _held_then_moved(engine, client, version, "call")
    assert len(pending_jobs(engine, instance_id, "tool")) == 1
    time.sleep(2)
    assert not (tmp_path / "started").exists()

    _post(client, f"/api/instances/{instance_id}/resume")
    wait_for(lambda: (tmp_path / "started").exists(), 20, "the call after resume")
    (tmp_path / "open").touch()
    wait_for(lambda: load(engine, instance_id).status == "completed", 20, "the outcome")
    assert history(engine, instance_id).count(("tool_attempt", "call")) == 1


def test_a_task_a_modification_creates_while_suspended_cannot_be_completed(engine, client, demo):
    document = chain(
        ("check", node("userTask", "Check", assignee=CLERK)),
        ("fix", node("userTask", "Fix", assignee=CLERK)),
    )
    version = publish_document(document, key="task-fix")
    instance_id = _held_then_moved(engine, client, version, "fix")
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "fix"
    shown = client.get(f"/api/instances/{instance_id}", headers=OPERATOR).json
    assert shown["suspended"]["reason"] == "hold and correct"
    try:
        steps.complete_task(engine, task.id, {}, actor=None)
    except EngineError as error:
        assert (error.code, error.status) == ("suspended", 409)
    else:
        raise AssertionError("completed a task of a suspended instance")
    engine.rollback()
    _post(client, f"/api/instances/{instance_id}/resume")
    [task] = open_tasks(engine, instance_id)
    steps.complete_task(engine, task.id, {}, actor=None)
    engine.commit()
    assert load(engine, instance_id).status == "completed"


def test_a_held_message_whose_wait_a_modification_removed_is_reported_on_resume(
    engine, client, demo
):
    document = chain(
        ("check", node("messageCatch", message="paid", correlationKey="$input.order")),
        ("fix", node("userTask", "Fix", assignee=CLERK)),
    )
    version = publish_document(document, key="message-fix")
    instance_id = start(engine, version, input={"order": "A-1"})
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and correct"})
    body = {"name": "paid", "correlation_key": "A-1", "payload": {}}
    sent = client.post("/api/messages", json=body, headers=OPERATOR)
    assert (sent.status_code, sent.json["delivered"]) == (200, [instance_id])
    _move(client, instance_id, _token_at(engine, instance_id, "check"), "fix")
    _post(client, f"/api/instances/{instance_id}/resume")
    engine.rollback()
    [details] = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "held_discarded"
        )
    ).all()
    assert (details["event"], details["name"], details["key"]) == ("message", "paid", "A-1")
    assert ("message", "check") not in history(engine, instance_id)
    assert [task.node_id for task in open_tasks(engine, instance_id)] == ["fix"]


def _migrate(engine, instance_id: int, source, target) -> None:
    plan = migration.plan(source, target, {})
    result = migration.migrate_instance(
        engine, instance_id, source.id, target.id, plan, actor="operator", now=utcnow()
    )
    assert result.applied
    commit(result)


def _then_fix(first: tuple[str, dict]) -> tuple[dict, dict]:
    """v1: `first` then the end; v2: `first`, then a task 'Fix', which shows it ran on v2."""
    return chain(first), chain(first, ("fix", node("userTask", "Fix", assignee=CLERK)))


def test_a_suspended_instance_migrates_and_its_timer_fires_once_on_the_new_version(
    engine, client, demo, workers, redis_client
):
    v1_doc, v2_doc = _then_fix(("wait", node("timerCatch", duration="PT1S")))
    v1 = publish_document(v1_doc, key="timer-move")
    v2 = publish_document(v2_doc, key="timer-move")
    workers.start(1, **QUICK_SWEEP)
    _registered(redis_client)
    instance_id = start(engine, v1)
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and migrate"})
    _migrate(engine, instance_id, v1, v2)
    time.sleep(2.5)
    assert load(engine, instance_id).version == 2
    assert ("timer", "wait") not in history(engine, instance_id)
    assert load(engine, instance_id).suspended_at is not None

    _post(client, f"/api/instances/{instance_id}/resume")
    wait_for(lambda: open_tasks(engine, instance_id), 20, "the task v2 adds")
    assert [task.node_id for task in open_tasks(engine, instance_id)] == ["fix"]
    assert history(engine, instance_id).count(("timer", "wait")) == 1


def test_a_message_held_before_a_migration_applies_on_the_new_version(engine, client, demo):
    catch = node("messageCatch", message="paid", correlationKey="$input.order", saveTo="paid")
    v1_doc, v2_doc = _then_fix(("check", catch))
    v1 = publish_document(v1_doc, key="message-move")
    v2 = publish_document(v2_doc, key="message-move")
    instance_id = start(engine, v1, input={"order": "A-1"})
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and migrate"})
    for n in (1, 2):
        body = {"name": "paid", "correlation_key": "A-1", "payload": {"n": n}}
        sent = client.post("/api/messages", json=body, headers=OPERATOR)
        assert (sent.status_code, sent.json["delivered"]) == (200, [instance_id])
    _migrate(engine, instance_id, v1, v2)
    _post(client, f"/api/instances/{instance_id}/resume")
    assert [task.node_id for task in open_tasks(engine, instance_id)] == ["fix"]
    assert load(engine, instance_id).vars["paid"] == {"n": 1}  # the first, in arrival order
    engine.rollback()
    [discarded] = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "held_discarded"
        )
    ).all()
    assert discarded["name"] == "paid"  # the second found nothing waiting any more


def test_a_held_signal_whose_wait_a_modification_removed_is_reported_on_resume(
    engine, client, demo
):
    document = chain(
        ("check", node("signalCatch", signal="go")),
        ("fix", node("userTask", "Fix", assignee=CLERK)),
    )
    instance_id = start(engine, publish_document(document, key="signal-fix"))
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and correct"})
    broadcast(engine, "go", {"n": 1})
    _move(client, instance_id, _token_at(engine, instance_id, "check"), "fix")
    _post(client, f"/api/instances/{instance_id}/resume")
    engine.rollback()
    [details] = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "held_discarded"
        )
    ).all()
    assert (details["event"], details["name"]) == ("signal", "go")
    assert [task.node_id for task in open_tasks(engine, instance_id)] == ["fix"]


def test_a_change_that_would_end_a_suspended_instance_is_refused_and_changes_nothing(
    engine, client, demo
):
    document = chain(("check", node("userTask", "Check", assignee=CLERK)))
    instance_id = start(engine, publish_document(document, key="end-fix"))
    _post(client, f"/api/instances/{instance_id}/suspend", {"reason": "hold and correct"})
    token_id = _token_at(engine, instance_id, "check")
    body = {"operations": [{"move": token_id, "to": "end"}], "reason": "skip it"}
    response = client.post(
        f"/api/instances/{instance_id}/modifications", json=body, headers=OPERATOR
    )
    assert (response.status_code, response.json["error"]) == (409, "suspended")
    assert "would end it" in response.json["message"]
    instance = load(engine, instance_id)
    assert (instance.status, instance.suspended_at is not None) == ("running", True)
    assert _token_at(engine, instance_id, "check") == token_id
    assert ("modified", None) not in history(engine, instance_id)
