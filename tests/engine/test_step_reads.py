"""A step reads the tokens it works on, not every open token of the instance: finishing one item
of a large multi-instance costs the same whatever the number of items, and still sees what the
whole body holds ($loop counters, completion, the instance ending with its last item)."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select

from tests.helpers.documents import CLERK, document, node, sub_chain, wire
from tests.helpers.instances import complete, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from webapp.engine import limits, steps, store
from webapp.models import Role, Token
from webapp.models.statuses import OPEN_TOKEN
from webapp.services.jobs import commit


@pytest.fixture
def tokens_read(monkeypatch) -> list[str]:
    """The node of every token row the engine's store reads (a spy on real reads)."""
    read: list[str] = []
    token_row = store.TokenRow

    def counting(*args, **values):
        token = token_row(*args, **values)
        read.append(token.node_id)
        return token

    monkeypatch.setattr(store, "TokenRow", counting)
    return read


def _body_of_tasks(count: int, output: str = "$loop.index", **settings) -> dict:
    review = node(
        "userTask",
        assignee=CLERK,
        saveTo="out",
        multiInstance={"cardinality": str(count), "output": output, **settings},
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    return document(nodes, wire("start", "review", "end"))


def _body_of_sub_processes(count: int) -> dict:
    """A parallel multi-instance sub-process whose body is one user task; an error on the
    whole activity leads to its own end."""
    body = node(
        "subProcess",
        saveTo="out",
        multiInstance={"cardinality": str(count), "output": "$loop.active"},
    )
    nodes = {
        "start": node("startEvent"),
        "body": body,
        **sub_chain("body", ("ask", node("userTask", assignee=CLERK))),
        "end": node("endEvent"),
        "stop": node("boundaryEvent", attachedTo="body", event="error", code="STOP"),
        "stopped": node("endEvent"),
    }
    flows = {
        **wire("start", "body", "end"),
        **wire("body_start", "ask", "body_end"),
        **wire("stop", "stopped"),
    }
    return document(nodes, flows)


def test_completing_one_item_reads_that_item_not_the_others(engine, demo, tokens_read):
    instance_id = start(engine, publish_document(_body_of_sub_processes(300)))
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 300
    tokens_read.clear()
    complete(engine, tasks[0])
    # the task's token, its sub-process and the body: nothing of the 299 other items
    assert len(tokens_read) <= 5
    assert load(engine, instance_id).status == "running"


def test_loop_active_counts_the_items_not_read(engine, demo):
    instance_id = start(engine, publish_document(_body_of_sub_processes(4)))
    for task in open_tasks(engine, instance_id):
        complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    # each item's output is `$loop.active` as it finished: the items still running
    assert instance.vars["out"] == [3, 2, 1, 0]


def test_loop_active_counts_items_started_in_the_same_step(engine, demo, monkeypatch):
    monkeypatch.setattr(limits, "MULTI_INSTANCE_BATCH", 2)
    instance_id = start(engine, publish_document(_body_of_tasks(3, "$loop.active")))
    [first, _] = open_tasks(engine, instance_id)
    complete(engine, first)
    [job] = pending_jobs(engine, instance_id, "timer")
    commit(steps.fire_timer(engine, job.id, instance_id))
    for task in open_tasks(engine, instance_id):
        complete(engine, task)
    assert load(engine, instance_id).vars["out"] == [1, 1, 0]


def test_starting_a_further_batch_reads_the_body_not_its_items(
    engine, demo, monkeypatch, tokens_read
):
    monkeypatch.setattr(limits, "MULTI_INSTANCE_BATCH", 100)
    instance_id = start(engine, publish_document(_body_of_tasks(250)))
    [job] = pending_jobs(engine, instance_id, "timer")
    tokens_read.clear()
    commit(steps.fire_timer(engine, job.id, instance_id))
    assert tokens_read == ["review"]  # the body alone, not the 100 instances running
    assert len(open_tasks(engine, instance_id)) == 200


def test_a_completion_condition_cancels_the_items_not_read(engine, demo):
    document = _body_of_tasks(50, completion="$loop.completed >= 2")
    instance_id = start(engine, publish_document(document))
    tasks = open_tasks(engine, instance_id)
    complete(engine, tasks[0])
    assert len(open_tasks(engine, instance_id)) == 49
    complete(engine, tasks[1])
    assert open_tasks(engine, instance_id) == []
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["out"][:2] == [0, 1]


def test_cancelling_reads_and_closes_every_item(engine, demo):
    instance_id = start(engine, publish_document(_body_of_sub_processes(20)))
    commit(steps.cancel_instance(engine, instance_id, reason="test"))
    assert open_tasks(engine, instance_id) == []
    assert load(engine, instance_id).status == "cancelled"


def test_an_error_from_one_item_ends_every_item_not_read(engine, demo):
    instance_id = start(engine, publish_document(_body_of_sub_processes(30)))
    tasks = open_tasks(engine, instance_id)
    complete(engine, tasks[0])
    commit(steps.report_from_task(engine, tasks[1].id, "error", "STOP", actor=None))
    assert open_tasks(engine, instance_id) == []
    assert load(engine, instance_id).status == "completed"
    open_tokens = engine.scalar(
        select(func.count())
        .select_from(Token)
        .where(Token.instance_id == instance_id, Token.status.in_(OPEN_TOKEN))
    )
    assert open_tokens == 0


def test_a_batch_of_tasks_looks_its_role_up_once(engine, demo):
    version = publish_document(_body_of_tasks(40))
    statements: list[str] = []

    def seen(conn, cursor, statement, *args) -> None:
        statements.append(statement)

    bind = engine.get_bind()
    event.listen(bind, "before_cursor_execute", seen)
    try:
        instance_id = start(engine, version)
    finally:
        event.remove(bind, "before_cursor_execute", seen)
    assert sum("FROM roles" in statement for statement in statements) == 1
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 40
    assert {task.candidate_role_id for task in tasks} == {
        engine.scalar(select(Role.id).where(Role.name == CLERK["value"]))
    }
