"""An incident holds its scope: with one branch failed, finishing the other branches must not
complete the sub-process, the multi-instance body or the instance around it."""

from __future__ import annotations

from tests.helpers.documents import CLERK, document, inside, node, wire
from tests.helpers.instances import complete, entered, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain


def _split_inside(scope: str | None) -> tuple[dict, dict]:
    """Nodes and flows of a parallel split (inside `scope`, or at the top) whose one branch
    ends in an error nothing catches and whose other branch waits at the user task `work`."""
    prefix = f"{scope}_" if scope else ""

    def placed(kind: str, **config) -> dict:
        return inside(scope, kind, **config) if scope else node(kind, **config)

    nodes = {
        f"{prefix}start": placed("startEvent"),
        f"{prefix}split": placed("parallelGateway"),
        f"{prefix}boom": placed("endEvent", event="error", code="BROKEN"),
        "work": placed("userTask", assignee=CLERK),
        f"{prefix}end": placed("endEvent"),
    }
    flows = {
        **wire(f"{prefix}start", f"{prefix}split", f"{prefix}boom"),
        **wire(f"{prefix}split", "work", f"{prefix}end"),
    }
    return nodes, flows


def _around(sub: dict) -> tuple[dict, dict]:
    """start -> `sub` (a sub-process holding the split) -> after (a user task) -> end."""
    inner_nodes, inner_flows = _split_inside("sub")
    nodes = {
        "start": node("startEvent"),
        "sub": sub,
        **inner_nodes,
        "after": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    return nodes, {**wire("start", "sub", "after", "end"), **inner_flows}


def _assert_held(engine, instance_id: int) -> None:
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert instance.error["code"] == "error" and "BROKEN" in instance.error["message"]
    assert "after" not in entered(engine, instance_id)
    assert "end" not in entered(engine, instance_id)
    assert open_tasks(engine, instance_id) == []


def test_an_incident_in_a_sub_process_branch_keeps_the_sub_process_from_completing(engine, demo):
    nodes, flows = _around(node("subProcess"))
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert load(engine, instance_id).status == "failed"
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "work"
    complete(engine, task)
    drain(engine)
    _assert_held(engine, instance_id)
    assert "sub_end" in entered(engine, instance_id)


def test_an_incident_in_one_multi_instance_sub_process_holds_the_body(engine, demo):
    nodes, flows = _around(node("subProcess", multiInstance={"cardinality": "2"}))
    instance_id = start(engine, publish_document(document(nodes, flows)))
    tasks = open_tasks(engine, instance_id)
    assert [t.node_id for t in tasks] == ["work", "work"]
    for task in tasks:
        complete(engine, task)
    drain(engine)
    _assert_held(engine, instance_id)


def test_an_incident_in_a_top_level_branch_keeps_the_instance_from_completing(engine, demo):
    nodes, flows = _split_inside(None)
    instance_id = start(engine, publish_document(document(nodes, flows)))
    [task] = open_tasks(engine, instance_id)
    complete(engine, task)
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "failed" and "BROKEN" in instance.error["message"]
    assert instance.ended_at is None


def test_an_incident_in_an_event_sub_process_holds_the_sub_process_around_it(engine, demo):
    """An escalation inside "sub" starts its interrupting event sub-process "late", which
    splits like the others: finishing its task leaves "late" and "sub" waiting on the
    incident."""
    inner_nodes, inner_flows = _split_inside("late")
    inner_nodes["late_start"]["config"] = {"event": "escalation", "code": "LATE"}
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": inside("sub", "startEvent"),
        "shout": inside("sub", "escalationThrow", code="LATE"),
        "sub_end": inside("sub", "endEvent"),
        "late": inside("sub", "eventSubProcess"),
        **inner_nodes,
        "after": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "sub", "after", "end"),
        **wire("sub_start", "shout", "sub_end"),
        **inner_flows,
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "work"
    complete(engine, task)
    drain(engine)
    _assert_held(engine, instance_id)
    assert "late_end" in entered(engine, instance_id)
