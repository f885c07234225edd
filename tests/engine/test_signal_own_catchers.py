"""A signal an instance throws reaches its own catchers subscribed at that moment in the throwing
step (also those made earlier in the same step), before the instance or a scope can end; other
instances of its partition get it through the broadcast, the thrower not a second time."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.documents import CLERK, catcher, chain, document, inside, node, wire
from tests.helpers.instances import broadcast, complete, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from webapp.models import Job, MessageSubscription, Partition, SignalBroadcast, SignalReceipt


def _with_signal_event_sub_process(doc: dict, interrupting: bool) -> dict:
    """`doc` with a process-level event sub-process started by the signal "go" (a task inside)."""
    doc["nodes"].update(
        {
            "on": node("eventSubProcess"),
            "on_start": inside(
                "on", "startEvent", event="signal", signal="go", interrupting=interrupting
            ),
            "on_task": inside("on", "userTask", assignee=CLERK),
            "on_end": inside("on", "endEvent"),
        }
    )
    doc["flows"].update(wire("on_start", "on_task", "on_end"))
    return doc


def _signal_end() -> dict:
    doc = chain()
    doc["nodes"]["end"]["config"] = {"event": "signal", "signal": "go", "payload": {"n": "1"}}
    return doc


@pytest.mark.parametrize("interrupting", [True, False])
@pytest.mark.parametrize("thrower", ["end", "throw"])
def test_a_signal_thrown_in_the_first_step_starts_the_instances_own_event_sub_process(
    engine, demo, interrupting, thrower
):
    """The event sub-process begins listening in the step that throws, and the throw (a signal end,
    or an intermediate throw followed by a plain end) would otherwise complete the instance."""
    doc = _signal_end() if thrower == "end" else chain(("throw", node("signalThrow", signal="go")))
    version = publish_document(_with_signal_event_sub_process(doc, interrupting))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "running"
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["on_task"]
    assert ("signal", "on_start") in history(engine, instance_id)
    run_broadcasts(engine)
    row = engine.scalar(select(SignalBroadcast))
    assert (row.status, row.total, row.delivered) == ("done", 1, 1)
    assert history(engine, instance_id).count(("signal", "on_start")) == 1
    complete(engine, open_tasks(engine, instance_id)[0])
    assert load(engine, instance_id).status == "completed"


def test_a_throw_inside_a_sub_process_reaches_its_event_sub_process_before_the_scope_ends(
    engine, demo
):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": inside("sub", "startEvent"),
        "throw": inside("sub", "signalThrow", signal="go"),
        "sub_end": inside("sub", "endEvent"),
        "on": inside("sub", "eventSubProcess"),
        "on_start": inside("on", "startEvent", event="signal", signal="go", interrupting=False),
        "on_task": inside("on", "userTask", assignee=CLERK),
        "on_end": inside("on", "endEvent"),
        "after": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "after", "end"),
        **wire("sub_start", "throw", "sub_end"),
        **wire("on_start", "on_task", "on_end"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["on_task"]
    complete(engine, open_tasks(engine, instance_id)[0])
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["after"]


def test_a_throw_reaches_a_catch_a_gateway_and_a_boundary_subscribed_earlier_in_its_step(
    engine, demo
):
    """Parallel branches move in the order of the split's flows in the start step: the first
    three subscribe, the last one throws."""
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "wait": node("signalCatch", signal="go", saveTo="got"),
        "end_wait": node("endEvent"),
        "gate": node("eventBasedGateway"),
        "by_signal": node("signalCatch", signal="go"),
        "end_signal": node("endEvent"),
        "by_timer": node("timerCatch", duration="PT1H"),
        "end_timer": node("endEvent"),
        "work": node("userTask", assignee=CLERK),
        "end_work": node("endEvent"),
        "stop": node("boundaryEvent", attachedTo="work", event="signal", signal="go"),
        "end_stop": node("endEvent"),
        "throw": node("signalThrow", signal="go", payload={"n": "7"}),
        "end_throw": node("endEvent"),
    }
    flows = {
        **wire("start", "split"),
        **wire("split", "wait", "end_wait"),
        **wire("split", "gate", "by_signal", "end_signal"),
        **wire("gate", "by_timer", "end_timer"),
        **wire("split", "work", "end_work"),
        **wire("stop", "end_stop"),
        **wire("split", "throw", "end_throw"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    instance = load(engine, instance_id)
    assert instance.status == "completed", instance.error
    assert instance.vars["got"] == {"n": 7}
    ran = history(engine, instance_id)
    for event in [("signal", "wait"), ("signal", "by_signal"), ("signal", "stop")]:
        assert event in ran
    assert ("entered", "end_stop") in ran and ("entered", "end_work") not in ran
    assert not open_tasks(engine, instance_id)
    assert engine.scalar(select(Job.id).where(Job.status == "pending")) is None
    assert engine.scalar(select(MessageSubscription.id)) is None


def test_a_throw_inside_a_sub_process_triggers_the_signal_boundary_on_it_at_once(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": inside("sub", "startEvent"),
        "throw": inside("sub", "signalThrow", signal="go"),
        "inner": inside("sub", "userTask", assignee=CLERK),
        "sub_end": inside("sub", "endEvent"),
        "stop": node("boundaryEvent", attachedTo="sub", event="signal", signal="go"),
        "end": node("endEvent"),
        "stopped": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "end"),
        **wire("sub_start", "throw", "inner", "sub_end"),
        **wire("stop", "stopped"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert load(engine, instance_id).status == "completed"
    ran = history(engine, instance_id)
    assert ("entered", "stopped") in ran
    assert ("entered", "inner") not in ran and ("entered", "end") not in ran
    assert not open_tasks(engine, instance_id)


def test_a_catch_the_thrower_reaches_after_its_throw_waits_for_the_next_signal(engine):
    doc = chain(
        ("throw", node("signalThrow", signal="go")), ("wait", node("signalCatch", signal="go"))
    )
    instance_id = start(engine, publish_document(doc))
    run_broadcasts(engine)
    assert load(engine, instance_id).status == "running"
    assert engine.scalar(select(SignalBroadcast.total)) == 0
    broadcast(engine, "go")
    assert load(engine, instance_id).status == "completed"


def test_a_signal_end_that_ends_the_instance_first_reaches_its_waiting_catch(engine, demo):
    """The catch subscribed in an earlier step; the signal end's step would complete the
    instance. Other instances of the partition get the broadcast, the thrower not again."""
    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    hr = engine.scalar(select(Partition.id).where(Partition.key == "hr"))
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "wait": node("signalCatch", signal="go", saveTo="got"),
        "end_wait": node("endEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent", event="signal", signal="go", payload={"n": "1"}),
    }
    flows = {**wire("start", "split", "wait", "end_wait"), **wire("split", "work", "end")}
    thrower = start(engine, publish_document(document(nodes, flows)), partition_id=finance)
    listening = publish_document(catcher(), key="listening")
    same_partition = start(engine, listening, partition_id=finance)
    other_partition = start(engine, listening, partition_id=hr)
    complete(engine, open_tasks(engine, thrower)[0])
    instance = load(engine, thrower)
    assert instance.status == "completed" and instance.vars["got"] == {"n": 1}
    assert history(engine, thrower).index(("signal", "wait")) < history(engine, thrower).index(
        ("completed", None)
    )
    run_broadcasts(engine)
    assert load(engine, same_partition).status == "completed"
    assert load(engine, other_partition).status == "running"
    row = engine.scalar(select(SignalBroadcast))
    assert (row.total, row.delivered) == (2, 2)
    reached = engine.scalars(select(SignalReceipt.instance_id).order_by(SignalReceipt.id)).all()
    assert reached == [thrower, same_partition]
    assert history(engine, thrower).count(("signal", "wait")) == 1
