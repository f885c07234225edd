"""Conditional events with real RQ workers: two tool results written at the same moment by two
workers fire a non-interrupting conditional boundary once (one change from false to true), and a
worker SIGKILLed while its tool call is about to change the data loses no firing."""

from __future__ import annotations

from sqlalchemy import select

from tests.engine import tools_for_tests
from tests.helpers.documents import document, flow, node, task
from tests.helpers.instances import history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.models import MessageSubscription

TRIALS = 8


def _watched(condition: str, *calls: tuple[str, dict]) -> dict:
    """A user task `work` with a non-interrupting conditional boundary `cond` (to `alert`), in
    parallel with service tasks calling `test.record`, each saving its result under its id."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "work": task("Work"),
        "work_end": node("endEvent"),
        "cond": node(
            "boundaryEvent",
            "Data arrived",
            attachedTo="work",
            event="conditional",
            interrupting=False,
            condition=condition,
        ),
        "alert": node("manualTask", "Alert"),
        "alerted": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "work"),
        "f3": flow("work", "work_end"),
        "f4": flow("cond", "alert"),
        "f5": flow("alert", "alerted"),
    }
    for call_id, inputs in calls:
        nodes[call_id] = node(
            "serviceTask", tool="test.record", timeout=2, saveTo=call_id, inputs=inputs
        )
        nodes[f"{call_id}_end"] = node("endEvent")
        flows[f"to_{call_id}"] = flow("split", call_id)
        flows[f"from_{call_id}"] = flow(call_id, f"{call_id}_end")
    return document(nodes, flows)


def _firings(engine, instance_id: int) -> int:
    return history(engine, instance_id).count(("condition", "cond"))


def test_two_results_at_once_fire_a_non_interrupting_boundary_once(
    engine, workers, test_tools, redis_client
):
    doc = _watched(
        "$vars.a != null or $vars.b != null",
        ("a", {"name": "'race'", "sleep": "0.3"}),
        ("b", {"name": "'race'", "sleep": "0.3"}),
    )
    version = publish_document(doc)
    instances = [start(engine, version) for _ in range(TRIALS)]
    workers.start(2)

    def results_in() -> bool:
        return all({"a", "b"} <= set(load(engine, i).vars) for i in instances)

    wait_for(results_in, timeout=60, what="both results of every instance")
    pids = {entry["pid"] for entry in tools_for_tests.seen(redis_client, "race")}
    assert len(pids) == 2, "both workers called the tool"
    for instance_id in instances:
        entries = history(engine, instance_id)
        assert _firings(engine, instance_id) == 1, entries
        assert entries.count(("entered", "alert")) == 1
        assert len(open_tasks(engine, instance_id)) == 1
        kept = engine.scalar(
            select(MessageSubscription.satisfied).where(
                MessageSubscription.instance_id == instance_id,
                MessageSubscription.kind == "condition",
            )
        )
        assert kept is True


def test_a_worker_killed_before_its_result_changes_the_data_loses_no_firing(
    engine, workers, test_tools, redis_client
):
    doc = _watched("$vars.a != null", ("a", {"name": "'killed'", "block_first": "30"}))
    instance_id = start(engine, publish_document(doc))
    first = workers.start(1)[0]
    wait_for(lambda: redis_client.llen("fdtest:started:killed") >= 1, what="the tool to start")
    assert _firings(engine, instance_id) == 0
    workers.kill(first)
    workers.start(1)
    wait_for(lambda: _firings(engine, instance_id) == 1, what="the firing", timeout=40)
    seen = tools_for_tests.seen(redis_client, "killed")
    assert [entry["attempt"] for entry in seen] == [1, 2]
    entries = history(engine, instance_id)
    assert entries.count(("entered", "alert")) == 1
    assert load(engine, instance_id).status == "running"
    assert len(open_tasks(engine, instance_id)) == 1
