"""Every boundary event on every host kind, interrupting and not: the host ends (with what is
inside it) or goes on, and the boundary's path runs once."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import complete, fire, history, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.models import Instance
from webapp.services.jobs import commit

HOSTS = ("userTask", "serviceTask", "subProcess", "callActivity")
# What can make each event fire on each host (user and service tasks throw no escalations;
# a user task throws no errors either).
FIRES = {
    "userTask": ("timer", "message"),
    "serviceTask": ("timer", "message", "error"),
    "subProcess": ("timer", "message", "error", "escalation"),
    "callActivity": ("timer", "message", "error", "escalation"),
}
CASES = [
    (host, event, interrupting)
    for host in HOSTS
    for event in FIRES[host]
    for interrupting in (True, False)
    if not (event == "error" and not interrupting)
]


def _inner(event: str) -> tuple[dict, dict]:
    """The inside of a sub-process or called child: throws `event`, or waits at a task."""
    nodes = {"i_start": node("startEvent"), "i_task": node("userTask", assignee=CLERK)}
    if event == "error":
        nodes = {"i_start": node("startEvent"), "i_end": node("endEvent", event="error", code="E")}
        return nodes, wire("i_start", "i_end")
    if event == "escalation":
        nodes["i_throw"] = node("escalationThrow", code="X")
        nodes["i_end"] = node("endEvent")
        return nodes, wire("i_start", "i_throw", "i_task", "i_end")
    nodes["i_end"] = node("endEvent")
    return nodes, wire("i_start", "i_task", "i_end")


def _process(host: str, event: str, interrupting: bool) -> dict:
    nodes = {"start": node("startEvent")}
    flows = wire("start", "host", "end")
    if host == "userTask":
        nodes["host"] = node("userTask", assignee=CLERK)
    elif host == "serviceTask":
        code = "'E'" if event == "error" else "''"
        nodes["host"] = node("serviceTask", tool="test.business", inputs={"code": code})
    elif host == "subProcess":
        nodes["host"] = node("subProcess")
        inner, inner_flows = _inner(event)
        nodes.update({node_id: {**spec, "parent": "host"} for node_id, spec in inner.items()})
        flows.update(inner_flows)
    else:
        nodes["host"] = node("callActivity", process="child")
    config = {"event": event, "interrupting": interrupting}
    if event == "timer":
        config["duration"] = "PT1H"
    elif event == "message":
        config.update(message="m", correlationKey="'k'")
    elif event in ("error", "escalation"):
        config["code"] = "E" if event == "error" else "X"
    nodes["b"] = node("boundaryEvent", attachedTo="host", **config)
    nodes["after_b"] = node("userTask", assignee=CLERK)
    nodes["b_end"] = node("endEvent")
    nodes["end"] = node("endEvent")
    flows.update(wire("b", "after_b", "b_end"))
    return document(nodes, flows)


def _all_tasks(engine, instance_id: int) -> list:
    engine.rollback()
    children = engine.scalars(select(Instance.id).where(Instance.parent_id == instance_id))
    ids = [instance_id, *children]
    return [task for i in ids for task in open_tasks(engine, i)]


@pytest.mark.parametrize(("host", "event", "interrupting"), CASES)
def test_a_boundary_event_fires_on_its_host(engine, demo, test_tools, host, event, interrupting):
    if host == "callActivity":
        inner, inner_flows = _inner(event)
        publish_document(document(inner, inner_flows), key="child")
    instance_id = start(engine, publish_document(_process(host, event, interrupting)))
    if host == "callActivity" or (event == "error" and host == "serviceTask"):
        drain(engine)
    if event == "timer":
        [timer] = [j for j in pending_jobs(engine, instance_id, "timer") if j.node_id == "b"]
        fire(engine, timer, instance_id)
    elif event == "message":
        commit(steps.deliver_message(engine, instance_id, "m", "k", {"why": "test"}))
    drain(engine)
    taken = history(engine, instance_id)
    assert ("boundary", "b") in taken
    assert taken.count(("entered", "after_b")) == 1
    tasks = _all_tasks(engine, instance_id)
    at_host = [t for t in tasks if t.node_id != "after_b"]
    if interrupting:
        assert at_host == [], "the host and everything inside it ended"
    elif host != "serviceTask":
        assert at_host, "a non-interrupting event leaves the host running"
    for _ in range(5):
        for task in _all_tasks(engine, instance_id):
            complete(engine, task)
        drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "completed", instance.error
    ended = history(engine, instance_id).count(("entered", "end"))
    assert ended == (0 if interrupting else 1)
