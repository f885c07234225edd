"""Every event sub-process start (timer, message, error, escalation), interrupting and not, at
the process level and inside a sub-process: what it ends, what goes on, and that it runs once."""

from __future__ import annotations

import pytest

from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import complete, fire, history, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.services.jobs import commit

CASES = [
    (event, interrupting, nested)
    for event in ("timer", "message", "error", "escalation")
    for interrupting in (True, False)
    for nested in (False, True)
    if not (event == "error" and not interrupting)
]


def _process(event: str, interrupting: bool, nested: bool) -> dict:
    """A scope (the process, or a sub-process) waiting at `work`, with an event sub-process whose
    start reacts to `event`; errors and escalations are thrown by a parallel branch."""
    scope = "sub" if nested else None

    def at(spec: dict) -> dict:
        return {**spec, "parent": scope} if scope else spec

    start_config: dict = {"event": event, "interrupting": interrupting}
    if event == "timer":
        start_config["duration"] = "PT1H"
    elif event == "message":
        start_config.update(message="m", correlationKey="'k'")
    else:
        start_config["code"] = "C"
    nodes = {
        "in_start": at(node("startEvent")),
        "fork": at(node("parallelGateway")),
        "work": at(node("userTask", assignee=CLERK)),
        "in_end": at(node("endEvent")),
        "on": at(node("eventSubProcess")),
        "on_start": {**node("startEvent", **start_config), "parent": "on"},
        "on_task": {**node("userTask", assignee=CLERK), "parent": "on"},
        "on_end": {**node("endEvent"), "parent": "on"},
    }
    flows = {**wire("in_start", "fork", "work", "in_end"), **wire("on_start", "on_task", "on_end")}
    if event in ("error", "escalation"):
        thrower = (
            node("endEvent", event="error", code="C")
            if event == "error"
            else node("escalationThrow", code="C")
        )
        nodes["throw"] = at(thrower)
        flows.update(wire("fork", "throw"))
        if event == "escalation":
            nodes["after_throw"] = at(node("endEvent"))
            flows.update(wire("throw", "after_throw"))
    if nested:
        nodes = {"start": node("startEvent"), "sub": node("subProcess"), **nodes}
        nodes["end"] = node("endEvent")
        flows.update(wire("start", "sub", "end"))
    return document(nodes, flows)


@pytest.mark.parametrize(("event", "interrupting", "nested"), CASES)
def test_an_event_sub_process_starts_in_its_scope(engine, demo, event, interrupting, nested):
    instance_id = start(engine, publish_document(_process(event, interrupting, nested)))
    if event == "timer":
        [timer] = pending_jobs(engine, instance_id, "timer")
        fire(engine, timer, instance_id)
    elif event == "message":
        commit(steps.deliver_message(engine, instance_id, "m", "k", {}))
    drain(engine)
    tasks = {t.node_id for t in open_tasks(engine, instance_id)}
    assert "on_task" in tasks
    assert ("work" in tasks) is (not interrupting)
    assert history(engine, instance_id).count(("entered", "on")) == 1
    for _ in range(3):
        for task in open_tasks(engine, instance_id):
            complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed", instance.error
    assert pending_jobs(engine, instance_id, "timer") == []
    if nested:
        assert history(engine, instance_id).count(("entered", "end")) == 1
