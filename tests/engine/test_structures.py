"""Structured processes in-process: sub-processes, boundary events, errors, escalations,
terminate ends, multi-instance, event sub-processes and call activities."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from tests.helpers.documents import CLERK, document, flow, inside, node, sub_chain, wire
from tests.helpers.instances import (
    complete,
    entered,
    fire,
    history,
    load,
    open_tasks,
    pending_jobs,
    start,
)
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import steps
from webapp.models import Instance, Job, Task, Token
from webapp.models.base import utcnow
from webapp.services.jobs import commit
from webapp.services.processes import ProcessError

# --- sub-processes ----------------------------------------------------------------------------


def test_a_sub_process_runs_its_inner_flow_then_the_outer_token_moves_on(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", "Review"),
        **sub_chain("sub", ("check", node("userTask", "Check", assignee=CLERK))),
        "after": node("serviceTask", tool="noop", inputs={}),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "after", "end"), **wire("sub_start", "check", "sub_end")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "check"
    complete(engine, task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id) == [
        "start",
        "sub",
        "sub_start",
        "check",
        "sub_end",
        "after",
        "end",
    ]
    engine.rollback()
    tokens = engine.scalars(select(Token).where(Token.instance_id == instance_id)).all()
    by_node = {t.node_id: t for t in tokens}
    assert by_node["check"].parent_id == by_node["sub"].id if "check" in by_node else True


def test_sub_processes_nested_ten_deep_complete(engine):
    nodes = {"start": node("startEvent")}
    flows = {}
    outer = None
    for depth in range(10):
        sub = f"s{depth}"
        nodes[sub] = {**node("subProcess"), **({"parent": outer} if outer else {})}
        outer = sub
    for depth in range(10):
        sub = f"s{depth}"
        nodes[f"{sub}_start"] = inside(sub, "startEvent")
        nodes[f"{sub}_end"] = inside(sub, "endEvent")
        inner = f"s{depth + 1}" if depth < 9 else None
        flows.update(wire(f"{sub}_start", *([inner] if inner else []), f"{sub}_end"))
    nodes["end"] = node("endEvent")
    flows.update(wire("start", "s0", "end"))
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id)[-1] == "end"


# --- boundary events --------------------------------------------------------------------------


def _task_with_boundary(**boundary) -> dict:
    nodes = {
        "start": node("startEvent"),
        "task": node("userTask", "Approve", assignee=CLERK),
        "b": node("boundaryEvent", "Late", attachedTo="task", **boundary),
        "remind": node("serviceTask", tool="noop", inputs={}),
        "end": node("endEvent"),
        "late_end": node("endEvent"),
    }
    flows = {**wire("start", "task", "end"), **wire("b", "remind", "late_end")}
    return document(nodes, flows)


def test_an_interrupting_boundary_timer_cancels_the_task_and_takes_its_path(engine, demo):
    version = publish_document(_task_with_boundary(event="timer", duration="PT1H"))
    instance_id = start(engine, version)
    [task] = open_tasks(engine, instance_id)
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.node_id == "b"
    fire(engine, timer, instance_id)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    engine.rollback()
    assert engine.get(Task, task.id).status == "cancelled"
    assert "end" not in entered(engine, instance_id)
    assert entered(engine, instance_id)[-1] == "late_end"


def test_completing_the_task_first_withdraws_the_boundary_timer(engine, demo):
    version = publish_document(_task_with_boundary(event="timer", duration="PT1H"))
    instance_id = start(engine, version)
    [task] = open_tasks(engine, instance_id)
    [timer] = pending_jobs(engine, instance_id, "timer")
    complete(engine, task)
    assert load(engine, instance_id).status == "completed"
    late = steps.fire_timer(engine, timer.id, instance_id, now=timer.due_at + timedelta(seconds=1))
    commit(late)
    assert late.applied is False
    assert "b" not in entered(engine, instance_id)
    engine.rollback()
    assert engine.get(Job, timer.id).status == "cancelled"


def test_a_non_interrupting_timer_cycle_reminds_while_the_task_stays_open(engine, demo):
    version = publish_document(
        _task_with_boundary(event="timer", cycle="R2/PT1H", interrupting=False)
    )
    instance_id = start(engine, version)
    for _ in range(2):
        [timer] = pending_jobs(engine, instance_id, "timer")
        fire(engine, timer, instance_id)
        drain(engine)
    assert pending_jobs(engine, instance_id, "timer") == []
    assert entered(engine, instance_id).count("remind") == 2
    [task] = open_tasks(engine, instance_id)
    complete(engine, task)
    assert load(engine, instance_id).status == "completed"


def test_a_message_boundary_interrupts_a_sub_process(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        **sub_chain("sub", ("work", node("userTask", assignee=CLERK))),
        "stop": node(
            "boundaryEvent",
            attachedTo="sub",
            event="message",
            message="withdrawn",
            correlationKey="$input.order",
            saveTo="why",
        ),
        "end": node("endEvent"),
        "gone": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("sub_start", "work", "sub_end")}
    flows.update(wire("stop", "gone"))
    instance_id = start(engine, publish_document(document(nodes, flows)), input={"order": "A1"})
    [task] = open_tasks(engine, instance_id)
    [target] = steps.message_targets(engine, "withdrawn", "A1")
    commit(steps.deliver_message(engine, target, "withdrawn", "A1", {"reason": "dup"}))
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["why"] == {"reason": "dup"}
    assert engine.get(Task, task.id).status == "cancelled"
    assert entered(engine, instance_id)[-1] == "gone"


# --- errors, escalations, terminate -----------------------------------------------------------


def _error_process(thrown: str, caught: list[tuple[str, str]]) -> dict:
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": inside("sub", "startEvent"),
        "sub_end": inside("sub", "endEvent", event="error", code=thrown),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("sub_start", "sub_end")}
    for boundary, code in caught:
        nodes[boundary] = node(
            "boundaryEvent", attachedTo="sub", event="error", **({"code": code} if code else {})
        )
        nodes[f"{boundary}_end"] = node("endEvent")
        flows.update(wire(boundary, f"{boundary}_end"))
    return document(nodes, flows)


def test_an_error_end_goes_to_the_boundary_with_its_code_before_a_catch_all(engine):
    doc = _error_process("E42", [("any", ""), ("exact", "E42")])
    instance_id = start(engine, publish_document(doc))
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id)[-2:] == ["exact", "exact_end"]
    doc = _error_process("E7", [("exact", "E42"), ("any", "")])
    instance_id = start(engine, publish_document(doc, key="other"))
    assert entered(engine, instance_id)[-2:] == ["any", "any_end"]


def test_an_uncaught_error_is_an_incident_naming_its_code(engine):
    instance_id = start(engine, publish_document(_error_process("E9", [("exact", "E42")])))
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert "E9" in instance.error["message"]


def test_a_tool_business_error_is_routed_at_once_without_retries(engine, test_tools):
    nodes = {
        "start": node("startEvent"),
        "pay": node("serviceTask", tool="test.business", inputs={"code": "$input.code"}),
        "declined": node("boundaryEvent", attachedTo="pay", event="error", code="DECLINED"),
        "manual": node("endEvent"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "pay", "end"), **wire("declined", "manual")}
    version = publish_document(document(nodes, flows))
    caught = start(engine, version, input={"code": "DECLINED"})
    drain(engine)
    assert load(engine, caught).status == "completed"
    assert entered(engine, caught)[-1] == "manual"
    assert [k for k, _ in history(engine, caught)].count("tool_attempt") == 1
    uncaught = start(engine, version, input={"code": "OTHER"})
    drain(engine)
    instance = load(engine, uncaught)
    assert instance.status == "failed" and "OTHER" in instance.error["message"]


def test_a_non_interrupting_escalation_starts_a_path_and_the_sub_process_goes_on(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        **sub_chain(
            "sub",
            ("shout", node("escalationThrow", code="LATE")),
            ("work", node("userTask", assignee=CLERK)),
        ),
        "esc": node(
            "boundaryEvent", attachedTo="sub", event="escalation", code="LATE", interrupting=False
        ),
        "notify": node("userTask", assignee=CLERK),
        "n_end": node("endEvent"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("sub_start", "shout", "work", "sub_end")}
    flows.update(wire("esc", "notify", "n_end"))
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert sorted(t.node_id for t in open_tasks(engine, instance_id)) == ["notify", "work"]
    for task in open_tasks(engine, instance_id):
        complete(engine, task)
    assert load(engine, instance_id).status == "completed"


def test_terminate_ends_only_its_own_scope(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": inside("sub", "startEvent"),
        "fork": inside("sub", "parallelGateway"),
        "wait": inside("sub", "userTask", assignee=CLERK),
        "stop": inside("sub", "endEvent", event="terminate"),
        "wait_end": inside("sub", "endEvent"),
        "after": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "after", "end"), **wire("sub_start", "fork", "stop")}
    flows.update(wire("fork", "wait", "wait_end"))
    instance_id = start(engine, publish_document(document(nodes, flows)))
    [task] = open_tasks(engine, instance_id)
    assert task.node_id == "after"
    assert "terminated" in [k for k, _ in history(engine, instance_id)]


def test_terminate_at_the_top_completes_the_instance(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "fork": node("parallelGateway"),
        "wait": node("userTask", assignee=CLERK),
        "stop": node("endEvent", event="terminate"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "fork", "stop"), **wire("fork", "wait", "end")}
    instance_id = start(engine, publish_document(document(nodes, flows)))
    assert load(engine, instance_id).status == "completed"
    assert open_tasks(engine, instance_id) == []


# --- multi-instance ---------------------------------------------------------------------------


def test_parallel_multi_instance_tasks_stop_at_the_completion_condition(engine, demo):
    review = node(
        "userTask",
        "Review",
        assignee=CLERK,
        saveTo="reviews",
        multiInstance={
            "collection": "$input.reviewers",
            "element": "reviewer",
            "completion": "$loop.completed >= 2",
            "output": "$vars.reviewer + ':' + $nodes.review.verdict",
        },
    )
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    version = publish_document(document(nodes, wire("start", "review", "end")))
    instance_id = start(engine, version, input={"reviewers": ["ann", "bob", "cy"]})
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 3
    complete(engine, tasks[2], {"verdict": "no"})
    complete(engine, tasks[0], {"verdict": "yes"})
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["reviews"] == ["ann:yes", None, "cy:no"]
    assert engine.get(Task, tasks[1].id).status == "cancelled"


def test_the_output_the_panel_hint_suggests_saves_each_reviewers_answer(engine, demo):
    """The hint's `$nodes.<id>.<field>` reads the instance that just finished; the gateway after
    the reviews sees both approvals (`$vars.review` there would have saved `[null, null]`)."""
    form = {"fields": [{"key": "approved", "label": "Approve?", "type": "boolean"}]}
    review = node(
        "userTask", "Review", assignee=CLERK, form=form, saveTo="review",
        multiInstance={"collection": "$input.reviewers", "output": "$nodes.review.approved"},
    )  # fmt: skip
    nodes = {
        "start": node("startEvent"),
        "review": review,
        "decide": node("exclusiveGateway", "Approved?"),
        "yes": node("endEvent", "Approved"),
        "no": node("endEvent", "Not approved"),
    }
    flows = {
        **wire("start", "review", "decide"),
        "to_yes": flow("decide", "yes", condition="false not in $vars.review"),
        "to_no": {**flow("decide", "no"), "default": True},
    }
    review["config"]["multiInstance"]["output"] = "$vars.review"
    with pytest.raises(ProcessError) as refused:
        publish_document(document(nodes, flows), key="trap")
    assert any("$nodes.review" in p.message for p in refused.value.problems)
    engine.rollback()
    review["config"]["multiInstance"]["output"] = "$nodes.review.approved"
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"reviewers": ["alice", "bob"]})
    for task in open_tasks(engine, instance_id):
        complete(engine, task, {"approved": True})
    instance = load(engine, instance_id)
    assert instance.vars["review"] == [True, True]
    assert "yes" in entered(engine, instance_id) and "no" not in entered(engine, instance_id)


def test_sequential_multi_instance_runs_in_collection_order(engine):
    work = node(
        "serviceTask",
        tool="noop",
        inputs={"n": "$item * 10", "i": "$loop.index"},
        saveTo="out",
        multiInstance={"sequential": True, "collection": "$input.items"},
    )
    nodes = {"start": node("startEvent"), "work": work, "end": node("endEvent")}
    version = publish_document(document(nodes, wire("start", "work", "end")))
    instance_id = start(engine, version, input={"items": [3, 1, 2]})
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["out"] == [{"n": 30, "i": 0}, {"n": 10, "i": 1}, {"n": 20, "i": 2}]


def test_a_multi_instance_sub_process_with_a_cardinality(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", multiInstance={"cardinality": "3", "output": "$loop.index"}),
        **sub_chain("sub", ("t", node("userTask", assignee=CLERK))),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("sub_start", "t", "sub_end")}
    instance_id = start(engine, publish_document(document(nodes, flows)))
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 3
    for task in tasks:
        assert load(engine, instance_id).status == "running"
        complete(engine, task)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.nodes["sub"] == [0, 1, 2]


def test_an_empty_collection_completes_at_once_and_a_bad_one_is_an_incident(engine, demo):
    review = node("userTask", assignee=CLERK, multiInstance={"collection": "$input.items"})
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    version = publish_document(document(nodes, wire("start", "review", "end")))
    assert load(engine, start(engine, version, input={"items": []})).status == "completed"
    bad = load(engine, start(engine, version, input={"items": "abc"}))
    assert bad.status == "failed" and bad.error["code"] == "multi_instance"


# --- event sub-processes ----------------------------------------------------------------------


def test_an_error_event_sub_process_catches_a_tool_error(engine, test_tools):
    nodes = {
        "start": node("startEvent"),
        "pay": node("serviceTask", tool="test.business", inputs={"code": "'X'"}),
        "end": node("endEvent"),
        "on_error": node("eventSubProcess"),
        "e_start": inside("on_error", "startEvent", event="error"),
        "e_end": inside("on_error", "endEvent"),
    }
    flows = {**wire("start", "pay", "end"), **wire("e_start", "e_end")}
    instance_id = start(engine, publish_document(document(nodes, flows)))
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert entered(engine, instance_id)[-3:] == ["on_error", "e_start", "e_end"]


def test_a_timer_event_sub_process_runs_alongside_when_not_interrupting(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "ping": node("eventSubProcess"),
        "p_start": inside("ping", "startEvent", event="timer", duration="PT1H", interrupting=False),
        "p_task": inside("ping", "userTask", assignee=CLERK),
        "p_end": inside("ping", "endEvent"),
    }
    flows = {**wire("start", "work", "end"), **wire("p_start", "p_task", "p_end")}
    instance_id = start(engine, publish_document(document(nodes, flows)))
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    assert sorted(t.node_id for t in open_tasks(engine, instance_id)) == ["p_task", "work"]
    work = next(t for t in open_tasks(engine, instance_id) if t.node_id == "work")
    complete(engine, work)
    assert load(engine, instance_id).status == "running"
    [ping] = open_tasks(engine, instance_id)
    complete(engine, ping)
    assert load(engine, instance_id).status == "completed"


# --- call activities --------------------------------------------------------------------------


def _caller(**config) -> dict:
    nodes = {
        "start": node("startEvent"),
        "call": node("callActivity", process="child", saveTo="result", **config),
        "end": node("endEvent"),
    }
    return document(nodes, wire("start", "call", "end"))


def _child() -> dict:
    nodes = {
        "start": node("startEvent"),
        "t": node("userTask", assignee=CLERK, saveTo="answer"),
        "end": node("endEvent"),
    }
    return document(nodes, wire("start", "t", "end"))


def _child_of(engine, parent_id: int) -> Instance:
    engine.rollback()
    return engine.scalars(select(Instance).where(Instance.parent_id == parent_id)).one()


def test_a_call_activity_runs_a_child_and_resumes_with_its_data(engine, demo):
    publish_document(_child(), key="child")
    version = publish_document(_caller(inputs={"amount": "$input.amount * 2"}), key="parent")
    parent_id = start(engine, version, input={"amount": 21})
    drain(engine)
    child = _child_of(engine, parent_id)
    assert (child.input, child.started_via, child.call_depth) == ({"amount": 42}, "call", 1)
    [task] = open_tasks(engine, child.id)
    complete(engine, task, {"ok": True})
    drain(engine)
    parent = load(engine, parent_id)
    assert parent.status == "completed"
    assert parent.vars["result"] == {"answer": {"ok": True}}


def test_cancelling_the_caller_cancels_its_child(engine, demo):
    publish_document(_child(), key="child")
    parent_id = start(engine, publish_document(_caller(), key="parent"))
    drain(engine)
    child = _child_of(engine, parent_id)
    commit(steps.cancel_instance(engine, parent_id))
    drain(engine)
    assert load(engine, child.id).status == "cancelled"
    assert open_tasks(engine, child.id) == []


def test_a_call_that_finds_no_version_is_an_incident(engine, demo):
    """Publishing checks the called process; should it be gone when the call starts (a
    database restored from elsewhere), the caller gets an incident, not a hang."""
    publish_document(_child(), key="child")
    parent_id = start(engine, publish_document(_caller(), key="parent"))
    engine.execute(update(Job).where(Job.instance_id == parent_id).values(tool="gone"))
    engine.commit()
    drain(engine)
    parent = load(engine, parent_id)
    assert parent.status == "failed" and parent.error["code"] == "call_missing"


@pytest.mark.parametrize("caught", [True, False])
def test_an_error_thrown_in_the_child_goes_to_the_call_activity(engine, caught):
    child = document(
        {"start": node("startEvent"), "end": node("endEvent", event="error", code="NOPE")},
        wire("start", "end"),
    )
    publish_document(child, key="child")
    doc = _caller()
    if caught:
        doc["nodes"]["err"] = node("boundaryEvent", attachedTo="call", event="error")
        doc["nodes"]["err_end"] = node("endEvent")
        doc["flows"].update(wire("err", "err_end"))
    parent_id = start(engine, publish_document(doc, key="parent"))
    drain(engine)
    parent = load(engine, parent_id)
    if caught:
        assert parent.status == "completed"
        assert entered(engine, parent_id)[-1] == "err_end"
    else:
        assert parent.status == "failed" and "NOPE" in parent.error["message"]
    assert utcnow()
