"""A parallel multi-instance starts its instances in bounded batches, each in its own step: no
transaction grows with the collection, and every item still runs exactly once."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.helpers.documents import CLERK, document, node, sub_chain, wire
from tests.helpers.instances import complete, history, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import limits, steps
from webapp.models import HistoryEntry, Job, Token
from webapp.services.jobs import commit


@pytest.fixture
def batch_of_three(monkeypatch):
    monkeypatch.setattr(limits, "MULTI_INSTANCE_BATCH", 3)


def _reviews(count: int, **settings) -> dict:
    review = node(
        "userTask",
        assignee=CLERK,
        saveTo="out",
        multiInstance={"cardinality": str(count), "output": "$loop.index", **settings},
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    return document(nodes, wire("start", "review", "end"))


def _run_fan_out(engine, instance_id: int) -> None:
    [job] = pending_jobs(engine, instance_id, "timer")
    assert job.node_id == "review"
    commit(steps.fire_timer(engine, job.id, instance_id))


def test_a_parallel_body_starts_one_batch_a_step_and_completes_once_per_item(
    engine, demo, batch_of_three
):
    instance_id = start(engine, publish_document(_reviews(8)))
    started = [len(open_tasks(engine, instance_id))]
    while pending_jobs(engine, instance_id, "timer"):
        _run_fan_out(engine, instance_id)
        started.append(len(open_tasks(engine, instance_id)))
    assert started == [3, 6, 8]
    for task in open_tasks(engine, instance_id):
        complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["out"] == list(range(8))
    kinds = [kind for kind, _ in history(engine, instance_id)]
    assert kinds.count("instance_completed") == 8
    assert kinds.count("multi_instance") == 1
    assert "timer" not in kinds  # the batches are no timer of the model


def test_items_finished_before_the_last_batch_starts_do_not_end_the_body(
    engine, demo, batch_of_three
):
    instance_id = start(engine, publish_document(_reviews(5)))
    for task in open_tasks(engine, instance_id):
        complete(engine, task)
    assert load(engine, instance_id).status == "running"
    _run_fan_out(engine, instance_id)
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 2
    for task in tasks:
        complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["out"] == [0, 1, 2, 3, 4]


def test_a_completion_condition_met_early_withdraws_the_batches_not_started(
    engine, demo, batch_of_three
):
    instance_id = start(engine, publish_document(_reviews(9, completion="$loop.completed >= 1")))
    [first, *_] = open_tasks(engine, instance_id)
    complete(engine, first)
    assert load(engine, instance_id).status == "completed"
    assert pending_jobs(engine, instance_id, "timer") == []
    assert open_tasks(engine, instance_id) == []


def test_cancelling_the_instance_withdraws_the_next_batch(engine, demo, batch_of_three):
    instance_id = start(engine, publish_document(_reviews(7)))
    commit(steps.cancel_instance(engine, instance_id, actor=None))
    assert pending_jobs(engine, instance_id, "timer") == []
    assert load(engine, instance_id).status == "cancelled"


def test_a_sequential_body_is_not_batched(engine, demo, batch_of_three):
    instance_id = start(engine, publish_document(_reviews(4, sequential=True)))
    assert len(open_tasks(engine, instance_id)) == 1
    assert pending_jobs(engine, instance_id, "timer") == []


def test_a_fan_out_in_many_batches_runs_each_item_exactly_once_under_two_workers(
    engine, workers, monkeypatch
):
    """Two worker processes take the fan-out jobs and the tool jobs of a multi-instance
    sub-process started in twelve batches; each item's tool runs and completes once."""
    batch, count = 100, 1_200
    monkeypatch.setattr(limits, "MULTI_INSTANCE_BATCH", batch)
    prep = node("serviceTask", tool="noop", inputs={"i": "$loop.index"}, saveTo="prep")
    nodes = {
        "start": node("startEvent"),
        "body": node(
            "subProcess", multiInstance={"cardinality": str(count), "output": "$loop.index"}
        ),
        **sub_chain("body", ("prep", prep)),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "body", "end"), **wire("body_start", "prep", "body_end")}
    instance_id = start(engine, publish_document(document(nodes, flows)))
    tokens = engine.scalar(select(func.count()).where(Token.instance_id == instance_id))
    assert tokens == 1 + 2 * batch  # the body, and a token and its scope's token per item
    workers.start(2, MULTI_INSTANCE_BATCH=batch)
    wait_for(lambda: load(engine, instance_id).status != "running", timeout=600, what="completion")
    instance = load(engine, instance_id)
    assert instance.status == "completed", (instance.error, workers.logs())
    assert instance.nodes["body"] == list(range(count))
    completed = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "instance_completed"
        )
    ).all()
    assert sorted(details["index"] for details in completed) == list(range(count))
    tool_runs = engine.scalars(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "tool_attempt"
        )
    ).all()
    assert len(tool_runs) == count
    fan_outs = engine.scalars(
        select(Job.status).where(
            Job.instance_id == instance_id, Job.kind == "timer", Job.node_id == "body"
        )
    ).all()
    assert fan_outs == ["done"] * (count // batch - 1)
