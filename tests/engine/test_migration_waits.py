"""Migrating makes an instance wait as the new version says: an event sub-process the new version
adds starts listening, a message catch whose message or correlation changed is subscribed again
with the new name and key, and a key that cannot be computed keeps the instance where it is."""

from __future__ import annotations

import copy

import pytest
from sqlalchemy import select

from tests.helpers.documents import CLERK, chain, flow, node
from tests.helpers.instances import broadcast, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from webapp.engine import EngineError, migration, steps, suspension
from webapp.models import MessageSubscription
from webapp.models.base import utcnow
from webapp.services.jobs import commit

PAID = node("messageCatch", "Paid", message="paid", correlationKey="$input.order")


def _with_event_subprocess(document: dict, start_config: dict) -> dict:
    """`document` with an event sub-process 'Chase' started by `start_config`, holding a task."""
    doc = copy.deepcopy(document)
    doc["nodes"]["chase"] = node("eventSubProcess", "Chase")
    doc["nodes"]["chase_start"] = {
        **node("startEvent", "Chase start"),
        "parent": "chase",
        "config": start_config,
    }
    doc["nodes"]["chase_task"] = {**node("userTask", "Chase up", assignee=CLERK), "parent": "chase"}
    doc["nodes"]["chase_end"] = {**node("endEvent"), "parent": "chase"}
    doc["flows"]["c1"] = flow("chase_start", "chase_task")
    doc["flows"]["c2"] = flow("chase_task", "chase_end")
    return doc


def _migrate(engine, instance_id: int, source, target):
    plan = migration.plan(source, target, {})
    result = migration.migrate_instance(
        engine, instance_id, source.id, target.id, plan, actor="operator", now=utcnow()
    )
    commit(result)
    return result


def _subscriptions(engine, instance_id: int) -> list[tuple[str, str, str]]:
    engine.rollback()
    table = MessageSubscription
    rows = engine.execute(
        select(table.node_id, table.name, table.correlation_key)
        .where(table.instance_id == instance_id)
        .order_by(table.id)
    ).all()
    return [tuple(row) for row in rows]


def test_an_event_subprocess_the_new_version_adds_listens_after_migrating(engine, demo):
    v1_doc = chain(("review", node("userTask", "Review", assignee=CLERK)))
    message_start = {
        "event": "message",
        "message": "chase",
        "correlationKey": "$input.order",
        "interrupting": False,
    }
    v1 = publish_document(v1_doc, key="esp")
    v2 = publish_document(_with_event_subprocess(v1_doc, message_start), key="esp")
    instance_id = start(engine, v1, input={"order": "A-1"})
    _migrate(engine, instance_id, v1, v2)
    assert _subscriptions(engine, instance_id) == [("chase_start", "chase", "A-1")]
    commit(steps.deliver_message(engine, instance_id, "chase", "A-1", {}))
    titles = sorted(task.title for task in open_tasks(engine, instance_id))
    assert titles == ["Chase up", "Review"]


def test_a_timer_event_subprocess_added_while_suspended_waits_for_the_resume(engine, demo):
    v1_doc = chain(("review", node("userTask", "Review", assignee=CLERK)))
    timer_start = {"event": "timer", "duration": "PT1H", "interrupting": False}
    v1 = publish_document(v1_doc, key="esp-timer")
    v2 = publish_document(_with_event_subprocess(v1_doc, timer_start), key="esp-timer")
    instance_id = start(engine, v1)
    commit(suspension.suspend_instance(engine, instance_id, reason="hold", actor=None))
    result = _migrate(engine, instance_id, v1, v2)
    assert result.jobs == []  # nothing sent while suspended
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert (timer.node_id, timer.wake_at) == ("chase_start", None)
    commit(suspension.resume_instance(engine, instance_id, actor=None))
    engine.rollback()
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.wake_at == timer.due_at  # the clocks send it at its time again


def test_a_message_catch_whose_message_changed_is_subscribed_again(engine, demo):
    v1 = publish_document(chain(("paid", PAID)), key="rename")
    settled = node("messageCatch", "Paid", message="settled", correlationKey="$input.invoice")
    v2 = publish_document(
        chain(("paid", settled), ("check", node("userTask", "Check", assignee=CLERK))),
        key="rename",
    )
    instance_id = start(engine, v1, input={"order": "A-1", "invoice": 77})
    _migrate(engine, instance_id, v1, v2)
    assert _subscriptions(engine, instance_id) == [("paid", "settled", "77")]
    assert steps.message_targets(engine, "paid", "A-1") == []
    commit(steps.deliver_message(engine, instance_id, "settled", "77", {}))
    assert [task.title for task in open_tasks(engine, instance_id)] == ["Check"]


def test_a_new_correlation_key_that_cannot_be_computed_refuses_naming_the_node(engine, demo):
    v1 = publish_document(chain(("paid", PAID)), key="nokey")
    missing = node("messageCatch", "Paid", message="paid", correlationKey="$input.invoice")
    v2 = publish_document(chain(("paid", missing)), key="nokey")
    instance_id = start(engine, v1, input={"order": "A-1"})
    with pytest.raises(EngineError) as refused:
        _migrate(engine, instance_id, v1, v2)
    engine.rollback()
    assert refused.value.code == "cannot_migrate"
    assert "correlation key of" in refused.value.message and "'Paid'" in refused.value.message
    assert "is empty" in refused.value.message
    assert load(engine, instance_id).version == 1
    assert _subscriptions(engine, instance_id) == [("paid", "paid", "A-1")]


def test_a_signal_catch_whose_signal_changed_is_subscribed_again(engine, demo):
    v1 = publish_document(chain(("wait", node("signalCatch", signal="go"))), key="resignal")
    v2 = publish_document(
        chain(
            ("wait", node("signalCatch", signal="start")),
            ("check", node("userTask", "Check", assignee=CLERK)),
        ),
        key="resignal",
    )
    instance_id = start(engine, v1)
    _migrate(engine, instance_id, v1, v2)
    assert [(node_id, name) for node_id, name, _ in _subscriptions(engine, instance_id)] == [
        ("wait", "start")
    ]
    broadcast(engine, "start", {})
    assert [task.title for task in open_tasks(engine, instance_id)] == ["Check"]
