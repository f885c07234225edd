"""A step reads the tokens it works on, not every open token of the instance: finishing one item
of a large multi-instance costs the same whatever the number of items, and still sees what the
whole body holds ($loop counters, completion, the instance ending with its last item)."""

from __future__ import annotations

import pytest

from tests.helpers.documents import CLERK, document, node, sub_chain, wire
from tests.helpers.instances import complete, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from webapp.engine import limits, steps, store
from webapp.services.jobs import commit


@pytest.fixture
def tokens_read(monkeypatch) -> list[int]:
    """How many token rows each read of the engine's store returned (a spy on real reads)."""
    counts: list[int] = []
    unlinked = store.unlinked

    def counting(rows):
        tokens, jobs = unlinked(rows)
        counts.append(len(tokens))
        return tokens, jobs

    monkeypatch.setattr(store, "unlinked", counting)
    return counts


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
    """A parallel multi-instance sub-process whose body is one user task."""
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
    }
    flows = {**wire("start", "body", "end"), **wire("body_start", "ask", "body_end")}
    return document(nodes, flows)


def test_completing_one_item_reads_that_item_not_the_others(engine, demo, tokens_read):
    instance_id = start(engine, publish_document(_body_of_sub_processes(300)))
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 300
    tokens_read.clear()
    complete(engine, tasks[0])
    # the task's token, its sub-process and the body: nothing of the 299 other items
    assert sum(tokens_read) <= 5
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


def test_a_completion_condition_cancels_the_items_not_read(engine, demo, tokens_read):
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
