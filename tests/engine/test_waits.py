"""Waiting nodes in-process: timers, message catches and user tasks."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from tests.helpers.documents import chain, node
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from webapp.engine import EngineError, steps
from webapp.models import HistoryEntry, Job, MessageSubscription, Role, Task, Token, User
from webapp.models.base import utcnow
from webapp.services.jobs import commit


def test_timer_waits_until_due_then_fires(engine):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT10M"))))
    before = utcnow()
    instance_id = start(engine, version)
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id))
    assert job.kind == "timer"
    assert timedelta(minutes=10) <= job.due_at - before < timedelta(minutes=10, seconds=5)
    job_id, due = job.id, job.due_at
    engine.rollback()

    early = steps.fire_timer(engine, job_id, instance_id)
    commit(early)
    assert early.applied is False
    assert load(engine, instance_id).status == "running"

    fired = steps.fire_timer(engine, job_id, instance_id, now=due + timedelta(seconds=1))
    commit(fired)
    assert load(engine, instance_id).status == "completed"
    assert ("timer", "wait") in history(engine, instance_id)
    again = steps.fire_timer(engine, job_id, instance_id, now=due + timedelta(seconds=2))
    commit(again)
    assert again.applied is False
    assert [k for k, _ in history(engine, instance_id)].count("timer") == 1


def test_timer_date_in_the_past_fires_at_once_and_a_bad_date_fails(engine):
    version = publish_document(chain(("wait", node("timerCatch", date="$input.when"))))
    past = start(engine, version, input={"when": "2020-01-01T00:00:00Z"})
    job = engine.scalar(select(Job).where(Job.instance_id == past))
    assert job.due_at.year == 2020
    engine.rollback()
    commit(steps.fire_timer(engine, job.id, past))
    assert load(engine, past).status == "completed"

    bad = start(engine, version, input={"when": "next tuesday"})
    error = load(engine, bad).error
    assert (error["node"], error["code"]) == ("wait", "timer")
    assert "next tuesday" in error["message"]


def _message_process():
    return chain(
        (
            "paid",
            node(
                "messageCatch", message="payment", correlationKey="$input.order", saveTo="payment"
            ),
        ),
    )


def test_a_message_wakes_the_matching_instance_and_only_it(engine):
    version = publish_document(_message_process())
    first = start(engine, version, input={"order": "A-1"})
    second = start(engine, version, input={"order": "B-2"})
    assert engine.scalar(select(func.count()).select_from(MessageSubscription)) == 2
    assert steps.message_targets(engine, "payment", "A-1") == [first]
    assert steps.message_targets(engine, "payment", "C-3") == []
    assert steps.message_targets(engine, "other", "A-1") == []

    result = steps.deliver_message(engine, first, "payment", "A-1", {"amount": 12.5})
    commit(result)
    assert result.applied
    done = load(engine, first)
    assert done.status == "completed"
    assert done.vars == {"payment": {"amount": 12.5}}
    assert done.nodes == {"paid": {"amount": 12.5}}
    assert load(engine, second).status == "running"
    assert steps.message_targets(engine, "payment", "A-1") == []
    late = steps.deliver_message(engine, first, "payment", "A-1", {})
    commit(late)
    assert late.applied is False


def test_message_targets_respect_partitions(engine, demo):
    version = publish_document(_message_process(), key="finance-proc", partition="finance")
    from webapp.models import Partition

    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    hr = engine.scalar(select(Partition.id).where(Partition.key == "hr"))
    instance_id = start(engine, version, input={"order": 7}, partition_id=finance)
    assert steps.message_targets(engine, "payment", "7", {finance}) == [instance_id]
    assert steps.message_targets(engine, "payment", "7", {hr}) == []
    assert steps.message_targets(engine, "payment", "7", set()) == []
    assert steps.message_targets(engine, "payment", "7", None) == [instance_id]


def test_user_task_is_created_and_completing_it_moves_on(engine, demo):
    doc = chain(
        (
            "review",
            node(
                "userTask",
                "Review invoice",
                assignee={"type": "user", "value": "bob"},
                dueIn="P2D",
                saveTo="review",
                form={"fields": [{"key": "ok", "label": "OK", "type": "boolean"}]},
            ),
        ),
        ("approve", node("userTask", "Approve", assignee={"type": "role", "value": "approver"})),
        (
            "pick",
            node("userTask", "Pick", assignee={"type": "expression", "value": "$vars.review.next"}),
        ),
    )
    version = publish_document(doc)
    bob = engine.scalar(select(User).where(User.username == "bob"))
    alice = engine.scalar(select(User).where(User.username == "alice"))
    instance_id = start(engine, version, actor=alice, via="ui")
    task = engine.scalar(select(Task).where(Task.instance_id == instance_id))
    assert (task.title, task.status, task.assignee_id, task.node_id) == (
        "Review invoice",
        "open",
        bob.id,
        "review",
    )
    assert task.form["fields"][0]["key"] == "ok"
    assert timedelta(days=2) - (task.due_at - task.created_at) < timedelta(seconds=5)
    task_id = task.id
    engine.rollback()

    commit(steps.complete_task(engine, task_id, {"ok": True, "next": "alice"}, actor=bob))
    instance = load(engine, instance_id)
    assert instance.vars["review"] == {"ok": True, "next": "alice"}
    approve = engine.scalar(select(Task).where(Task.node_id == "approve"))
    approver = engine.scalar(select(Role.id).where(Role.name == "approver"))
    assert (approve.candidate_role_id, approve.assignee_id) == (approver, None)
    with pytest.raises(EngineError) as closed:
        steps.complete_task(engine, task_id, {}, actor=bob)
    engine.rollback()
    assert (closed.value.code, closed.value.status) == ("task_closed", 409)

    commit(steps.complete_task(engine, approve.id, {}, actor=bob))
    pick = engine.scalar(select(Task).where(Task.node_id == "pick"))
    assert pick.assignee_id == alice.id
    commit(steps.complete_task(engine, pick.id, {"done": 1}, actor=alice))
    assert load(engine, instance_id).status == "completed"
    completed = engine.execute(
        select(HistoryEntry.actor, HistoryEntry.node_id)
        .where(HistoryEntry.kind == "task_completed")
        .order_by(HistoryEntry.id)
    ).all()
    assert [tuple(row) for row in completed] == [
        ("bob", "review"),
        ("bob", "approve"),
        ("alice", "pick"),
    ]
    started = engine.scalar(select(HistoryEntry).where(HistoryEntry.kind == "started"))
    assert (started.actor, started.details["via"]) == ("alice", "ui")
    with pytest.raises(EngineError) as missing:
        steps.complete_task(engine, 999_999, {}, actor=bob)
    engine.rollback()
    assert missing.value.status == 404


def test_unknown_assignee_leaves_the_task_unassigned_and_says_so(engine, demo):
    version = publish_document(
        chain(("t", node("userTask", "T", assignee={"type": "user", "value": "nobody"})))
    )
    instance_id = start(engine, version)
    task = engine.scalar(select(Task))
    assert (task.assignee_id, task.candidate_role_id, task.open_to_partition) == (
        None,
        None,
        False,
    )
    created = engine.scalar(select(HistoryEntry).where(HistoryEntry.kind == "task_created"))
    assert created.details == {"unresolved": "nobody"}
    token = engine.scalar(select(Token).where(Token.instance_id == instance_id))
    assert (token.status, token.node_id) == ("waiting", "t")
