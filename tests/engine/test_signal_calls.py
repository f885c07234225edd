"""A called child that throws a signal and ends in the same step: the caller's catchers subscribed
at the throw (a signal boundary on the call activity, a process-level event sub-process) receive
it before the call completes, whichever of the caller's resume and the broadcast a worker runs
first, and exactly once. And a caller's throw reaches its waiting child."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.documents import CLERK, document, inside, node, wire
from tests.helpers.instances import complete, history, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain, wait_for
from webapp.models import Instance, Job, SignalBatch, SignalBroadcast, SignalReceipt
from webapp.services import jobs
from webapp.services import signals as signal_service


def _throwing_child() -> None:
    """Process "child": it throws the signal "go" with a payload and ends, in its first step."""
    nodes = {
        "start": node("startEvent"),
        "throw": node("signalThrow", signal="go", payload={"n": "7"}),
        "end": node("endEvent"),
    }
    publish_document(document(nodes, wire("start", "throw", "end")), key="child")


def _caller(catcher: str) -> dict:
    """Process "parent": a call of "child", then a task "next"; `catcher` listens for "go" as a
    signal boundary on the call (interrupting or not) or an event sub-process of the process
    (then the call is the process's last activity, so completing it would end the instance)."""
    nodes = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child"),
        "next": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    flows = wire("start", "call", "next", "end")
    if catcher.startswith("boundary"):
        nodes["sig"] = node(
            "boundaryEvent",
            attachedTo="call",
            event="signal",
            signal="go",
            interrupting=catcher == "boundary",
            saveTo="got",
        )
        nodes["caught"] = node("userTask", assignee=CLERK)
        nodes["end2"] = node("endEvent")
        flows.update(wire("sig", "caught", "end2"))
    else:
        del nodes["next"]
        flows = wire("start", "call", "end")
        nodes["on"] = node("eventSubProcess")
        nodes["on_start"] = inside("on", "startEvent", event="signal", signal="go", saveTo="got")
        nodes["on_start"]["config"]["interrupting"] = False
        nodes["caught"] = inside("on", "userTask", assignee=CLERK)
        nodes["on_end"] = inside("on", "endEvent")
        flows.update(wire("on_start", "caught", "on_end"))
    return document(nodes, flows)


# What the caller's tasks are once the signal and the child's end both reached it.
EXPECTED = {
    "boundary": ["caught"],
    "boundary_non_interrupting": ["caught", "next"],
    "event_sub_process": ["caught"],
}


def _run_call(engine, parent_id: int) -> None:
    """Run the caller's `call` job: the child starts, throws and ends in that one step."""
    job_id = engine.scalar(select(Job.id).where(Job.instance_id == parent_id, Job.kind == "call"))
    engine.rollback()
    jobs.start_called(job_id, parent_id)
    child = engine.scalar(select(Instance).where(Instance.parent_id == parent_id))
    assert child is not None and child.status == "completed"
    engine.rollback()


def _resume(engine, parent_id: int) -> None:
    job_id = engine.scalar(
        select(Job.id).where(
            Job.instance_id == parent_id, Job.kind == "resume", Job.status == "pending"
        )
    )
    engine.rollback()
    jobs.resume_from_child(job_id, parent_id)


def _plan(engine) -> int:
    """Plan the pending broadcast (its batch lists the caller, not run yet); the batch id."""
    broadcast_id = engine.scalar(select(SignalBroadcast.id))
    engine.rollback()
    signal_service.plan_broadcast(broadcast_id, 0)
    batch_id = engine.scalar(select(SignalBatch.id))
    engine.rollback()
    return batch_id


def _tasks(engine, instance_id: int) -> list[str]:
    return sorted(t.node_id for t in open_tasks(engine, instance_id))


ORDERS = ["resume_first", "planned_then_resume", "broadcast_first"]


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("catcher", sorted(EXPECTED))
def test_a_child_throwing_as_it_ends_reaches_the_callers_catchers_in_any_worker_order(
    engine, demo, catcher, order
):
    _throwing_child()
    parent_id = start(engine, publish_document(_caller(catcher), key="parent"))
    _run_call(engine, parent_id)
    if order == "resume_first":
        _resume(engine, parent_id)
        run_broadcasts(engine)
    elif order == "planned_then_resume":
        batch_id = _plan(engine)
        _resume(engine, parent_id)
        signal_service.run_batch(batch_id, 0)
    else:
        signal_service.run_batch(_plan(engine), 0)
        _resume(engine, parent_id)
    drain(engine)
    assert _tasks(engine, parent_id) == EXPECTED[catcher]
    assert load(engine, parent_id).vars["got"] == {"n": 7}
    fired = "sig" if catcher.startswith("boundary") else "on_start"
    assert history(engine, parent_id).count(("signal", fired)) == 1
    engine.rollback()
    row = engine.scalar(select(SignalBroadcast))
    assert (row.status, row.total, row.delivered) == ("done", 1, 1)
    receipts = engine.scalars(select(SignalReceipt.instance_id)).all()
    assert receipts == [parent_id]
    for task in open_tasks(engine, parent_id):
        complete(engine, task)
    drain(engine)
    assert load(engine, parent_id).status == "completed"


def test_the_resume_first_gives_the_signal_to_the_caller_once_with_the_child_data(engine, demo):
    """The interrupting boundary wins over the child's completion: the call's output is not
    applied, and the broadcast run afterwards fires nothing a second time."""
    _throwing_child()
    doc = _caller("boundary")
    doc["nodes"]["call"]["config"]["saveTo"] = "child_out"
    parent_id = start(engine, publish_document(doc, key="parent"))
    _run_call(engine, parent_id)
    _resume(engine, parent_id)
    assert _tasks(engine, parent_id) == ["caught"]
    assert "child_out" not in load(engine, parent_id).vars
    run_broadcasts(engine)
    drain(engine)
    assert history(engine, parent_id).count(("boundary", "sig")) == 1
    assert _tasks(engine, parent_id) == ["caught"]


def test_a_signal_the_caller_subscribed_after_the_throw_does_not_receive_it(engine, demo):
    """Only subscriptions that existed at the throw are covered: a caller whose boundary
    listens for another name keeps waiting, and the resume completes the call."""
    _throwing_child()
    doc = _caller("boundary")
    doc["nodes"]["sig"]["config"]["signal"] = "other"
    parent_id = start(engine, publish_document(doc, key="parent"))
    _run_call(engine, parent_id)
    _resume(engine, parent_id)
    run_broadcasts(engine)
    assert _tasks(engine, parent_id) == ["next"]
    assert engine.scalar(select(func.count()).select_from(SignalReceipt)) == 0


def _waiting_child() -> None:
    nodes = {
        "start": node("startEvent"),
        "wait": node("signalCatch", signal="go", saveTo="got"),
        "end": node("endEvent"),
    }
    publish_document(document(nodes, wire("start", "wait", "end")), key="child")


def test_a_callers_throw_reaches_its_waiting_child_which_then_resumes_it(engine, demo):
    _waiting_child()
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "call": node("callActivity", process="child", saveTo="child"),
        "ready": node("userTask", assignee=CLERK),
        "throw": node("signalThrow", signal="go", payload={"n": "1"}),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "split", "call", "join", "end"),
        **wire("split", "ready", "throw", "join"),
    }
    parent_id = start(engine, publish_document(document(nodes, flows), key="parent"))
    drain(engine)
    child = engine.scalar(select(Instance).where(Instance.parent_id == parent_id))
    assert child.status == "running"
    engine.rollback()
    complete(engine, open_tasks(engine, parent_id)[0])
    run_broadcasts(engine)
    drain(engine)
    assert load(engine, child.id).vars["got"] == {"n": 1}
    parent = load(engine, parent_id)
    assert parent.status == "completed"
    assert parent.vars["child"] == {"got": {"n": 1}}


def _broadcast_status(engine) -> str | None:
    engine.rollback()
    return engine.scalar(select(SignalBroadcast.status))


def test_real_workers_give_the_caller_the_childs_signal_before_the_call_ends(engine, workers):
    _throwing_child()
    parent_id = start(engine, publish_document(_caller("event_sub_process"), key="parent"))
    workers.start(2)
    wait_for(
        lambda: _tasks(engine, parent_id) == ["caught"],
        what="the event sub-process of the caller",
    )
    wait_for(lambda: _broadcast_status(engine) == "done", what="the broadcast to finish")
    assert history(engine, parent_id).count(("signal", "on_start")) == 1
    engine.rollback()
    assert engine.scalars(select(SignalReceipt.instance_id)).all() == [parent_id]


def _cancel(engine, child_id: int) -> None:
    job_id = engine.scalar(select(Job.id).where(Job.instance_id == child_id, Job.kind == "cancel"))
    engine.rollback()
    jobs.cancel_called(job_id, child_id)


@pytest.mark.parametrize("order", ["cancel_first", "broadcast_first"])
def test_a_callers_throw_that_interrupts_the_call_reaches_the_waiting_child_first(
    engine, demo, order
):
    """The caller throws "go" and its own interrupting boundary on the call catches it in that
    step, which cancels the child; the child's catch, subscribed at the throw, receives the
    signal before the cancel, whichever of the two a worker runs first."""
    nodes = {
        "start": node("startEvent"),
        "wait": node("signalCatch", signal="go", saveTo="got"),
        "after": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    publish_document(document(nodes, wire("start", "wait", "after", "end")), key="child")
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "call": node("callActivity", process="child"),
        "sig": node("boundaryEvent", attachedTo="call", event="signal", signal="go"),
        "stopped": node("endEvent"),
        "ready": node("userTask", assignee=CLERK),
        "throw": node("signalThrow", signal="go", payload={"n": "2"}),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "split", "call", "join", "end"),
        **wire("split", "ready", "throw", "join"),
        **wire("sig", "stopped"),
    }
    parent_id = start(engine, publish_document(document(nodes, flows), key="parent"))
    drain(engine)
    child_id = engine.scalar(select(Instance.id).where(Instance.parent_id == parent_id))
    engine.rollback()
    complete(engine, open_tasks(engine, parent_id)[0])
    assert ("boundary", "sig") in history(engine, parent_id)
    if order == "cancel_first":
        _cancel(engine, child_id)
        run_broadcasts(engine)
    else:
        signal_service.run_batch(_plan(engine), 0)
        _cancel(engine, child_id)
    drain(engine)
    child = load(engine, child_id)
    assert child.status == "cancelled"
    assert child.vars["got"] == {"n": 2}
    assert history(engine, child_id).count(("signal", "wait")) == 1
    assert ("entered", "after") in history(engine, child_id)
    engine.rollback()
    assert engine.scalars(select(SignalReceipt.instance_id)).all() == [parent_id, child_id]
    row = engine.scalar(select(SignalBroadcast))
    assert (row.status, row.total, row.delivered) == ("done", 2, 2)


def test_a_grandchilds_signal_reaches_the_top_caller_before_the_chain_completes(engine, demo):
    """The bottom of a call chain throws and ends; the middle's resume completes it and ends the
    middle, whose resume of the top comes before the broadcast: the top's boundary fires."""
    _throwing_child()
    middle = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child"),
        "end": node("endEvent"),
    }
    publish_document(document(middle, wire("start", "call", "end")), key="middle")
    doc = _caller("boundary")
    doc["nodes"]["call"]["config"]["process"] = "middle"
    top_id = start(engine, publish_document(doc, key="top"))
    drain(engine)
    assert engine.scalar(select(SignalBroadcast.status)) == "pending"
    engine.rollback()
    assert _tasks(engine, top_id) == ["caught"]
    run_broadcasts(engine)
    assert history(engine, top_id).count(("signal", "sig")) == 1
    assert _tasks(engine, top_id) == ["caught"]
