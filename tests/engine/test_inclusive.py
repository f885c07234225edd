"""Inclusive gateways in-process: splits by condition, joins that wait only for branches that can
still arrive (slow, nested, looping, interrupted and failed branches)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tests.helpers.documents import NOOP, diamond, document, flow, node, task
from tests.helpers.instances import (
    complete,
    details,
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
from webapp.services.jobs import commit


def three(**overrides: dict) -> dict[str, dict]:
    return {name: overrides.get(name, node("serviceTask", **NOOP)) for name in ("a", "b", "c")}


def joined(session, instance_id: int, join: str = "join") -> list[int]:
    return [e["joined"] for e in details(session, instance_id, "left", join) if "joined" in e]


def splits(session, instance_id: int, gateway: str) -> list[dict[str, Any]]:
    """The `left` entries of the token that went on from `gateway` (they list every flow taken)."""
    return [e for e in details(session, instance_id, "left", gateway) if "taken" in e]


@pytest.mark.parametrize("default", [False, True])
@pytest.mark.parametrize("vector", list(itertools.product([False, True], repeat=3)))
def test_every_condition_vector_takes_its_branches_and_joins_once(engine, vector, default):
    """Table-driven over all condition vectors: the true branches run, the default only when
    none is true, and the join fires exactly once with the number of branches taken."""
    version = publish_document(diamond(three(), default=default))
    given = dict(zip("abc", vector, strict=True))
    instance_id = start(engine, version, input=given)
    drain(engine)
    instance = load(engine, instance_id)
    taken = [name for name in "abc" if given[name]] or (["d"] if default else [])
    if not taken:
        assert instance.status == "failed"
        assert instance.error["code"] == "no_branch"
        assert instance.error["node"] == "split"
        return
    assert instance.status == "completed"
    ran = [n for n in entered(engine, instance_id) if n in "abcd"]
    assert sorted(ran) == taken
    [split] = splits(engine, instance_id, "split")
    assert split["taken"] == [f"to_{name}" for name in taken]
    assert bool(split.get("default")) == (taken == ["d"])
    assert joined(engine, instance_id) == [len(taken)]
    assert entered(engine, instance_id).count("end") == 1


def test_a_flow_without_condition_is_always_taken(engine):
    version = publish_document(diamond(three(), conditions=False))
    instance_id = start(engine, version)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [3]


def test_the_join_waits_for_a_slow_branch_and_fires_when_it_completes(engine):
    version = publish_document(diamond(three(b=task("Slow"))))
    instance_id = start(engine, version, input={"a": True, "b": True, "c": True})
    drain(engine)
    assert load(engine, instance_id).status == "running"
    assert joined(engine, instance_id) == []
    [open_task] = open_tasks(engine, instance_id)
    complete(engine, open_task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [3]


def test_the_join_does_not_wait_for_a_branch_that_was_not_taken(engine):
    version = publish_document(diamond(three(c=task("Never"))))
    instance_id = start(engine, version, input={"a": True, "b": True, "c": False})
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert open_tasks(engine, instance_id) == []
    assert joined(engine, instance_id) == [2]


def test_an_inclusive_split_and_join_inside_a_sub_process(engine):
    inner = diamond(three(b=task("Slow")))
    nodes = {"start": node("startEvent"), "sub": node("subProcess", "Inner")}
    for node_id, spec in inner["nodes"].items():
        nodes[f"s_{node_id}"] = {**spec, "parent": "sub"}
    nodes["end"] = node("endEvent")
    flows = {
        f"s_{fid}": {**f, "source": f"s_{f['source']}", "target": f"s_{f['target']}"}
        for fid, f in inner["flows"].items()
    }
    for fid in ("s_to_a", "s_to_b", "s_to_c"):
        flows[fid]["condition"] = f"$input.{fid[-1]}"
    flows.update({"o1": flow("start", "sub"), "o2": flow("sub", "end")})
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"a": True, "b": True, "c": False})
    drain(engine)
    assert load(engine, instance_id).status == "running"
    [open_task] = open_tasks(engine, instance_id)
    complete(engine, open_task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id, "s_join") == [2]
    assert entered(engine, instance_id)[-1] == "end"


def test_a_sub_process_on_a_branch_keeps_the_join_waiting_until_it_completes(engine):
    """Tokens inside a nested sub-process count at the sub-process's node."""
    nodes = {
        "start": node("startEvent"),
        "split": node("inclusiveGateway"),
        "a": node("serviceTask", **NOOP),
        "sub": node("subProcess"),
        "sub_start": {**node("startEvent"), "parent": "sub"},
        "sub_task": {**task("Inside"), "parent": "sub"},
        "sub_end": {**node("endEvent"), "parent": "sub"},
        "join": node("inclusiveGateway"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "split"),
        "to_a": flow("split", "a"),
        "to_sub": flow("split", "sub"),
        "from_a": flow("a", "join"),
        "from_sub": flow("sub", "join"),
        "f9": flow("join", "end"),
        "i1": flow("sub_start", "sub_task"),
        "i2": flow("sub_task", "sub_end"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    drain(engine)
    assert joined(engine, instance_id) == []
    [open_task] = open_tasks(engine, instance_id)
    complete(engine, open_task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [2]


def test_a_loop_back_to_before_the_split_joins_each_round(engine):
    nodes = {
        "start": node("startEvent"),
        "ask": task("Ask", saveTo="ask"),
        "split": node("inclusiveGateway"),
        "a": node("serviceTask", **NOOP),
        "b": node("serviceTask", **NOOP),
        "join": node("inclusiveGateway"),
        "again": node("exclusiveGateway"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "ask"),
        "f1": flow("ask", "split"),
        "to_a": flow("split", "a", "$vars.ask.a"),
        "to_b": flow("split", "b", "$vars.ask.b"),
        "from_a": flow("a", "join"),
        "from_b": flow("b", "join"),
        "f2": flow("join", "again"),
        "back": flow("again", "ask", "$vars.ask.again"),
        "done": flow("again", "end", default=True),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    for values in ({"a": True, "b": True, "again": True}, {"a": True, "b": False, "again": False}):
        [open_task] = open_tasks(engine, instance_id)
        complete(engine, open_task, values)
        drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [2, 1]


def test_a_branch_interrupted_by_a_boundary_event_releases_the_join(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("inclusiveGateway"),
        "a": node("serviceTask", **NOOP),
        "slow": task("Slow"),
        "late": node("boundaryEvent", attachedTo="slow", event="timer", duration="PT1H"),
        "late_end": node("endEvent"),
        "join": node("inclusiveGateway"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "split"),
        "to_a": flow("split", "a"),
        "to_slow": flow("split", "slow"),
        "from_a": flow("a", "join"),
        "from_slow": flow("slow", "join"),
        "b1": flow("late", "late_end"),
        "f9": flow("join", "end"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    drain(engine)
    assert joined(engine, instance_id) == []
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [1]
    assert {"late_end", "end"} <= set(entered(engine, instance_id))


def test_a_failed_branch_keeps_the_join_waiting_and_retry_releases_it(engine, test_tools):
    flaky = node("serviceTask", tool="test.flaky", inputs={"name": "'incl'", "fail_times": "1"})
    flaky["config"]["retries"] = 0
    version = publish_document(diamond(three(b=flaky), conditions=False))
    instance_id = start(engine, version)
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert instance.error["node"] == "b"
    assert joined(engine, instance_id) == []
    commit(steps.retry_instance(engine, instance_id))
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [3]


def test_a_mixed_gateway_joins_then_splits(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("inclusiveGateway"),
        "a": node("serviceTask", **NOOP),
        "b": node("serviceTask", **NOOP),
        "mixed": node("inclusiveGateway"),
        "x": node("serviceTask", **NOOP),
        "y": node("serviceTask", **NOOP),
        "z": node("serviceTask", **NOOP),
        "join": node("inclusiveGateway"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "split"),
        "to_a": flow("split", "a"),
        "to_b": flow("split", "b"),
        "m_a": flow("a", "mixed"),
        "m_b": flow("b", "mixed"),
        "to_x": flow("mixed", "x", "true"),
        "to_y": flow("mixed", "y", "false"),
        "to_z": flow("mixed", "z"),
        "j_x": flow("x", "join"),
        "j_y": flow("y", "join"),
        "j_z": flow("z", "join"),
        "f9": flow("join", "end"),
    }
    instance_id = start(engine, publish_document(document(nodes, flows)))
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    [mixed] = splits(engine, instance_id, "mixed")
    assert (mixed["joined"], mixed["taken"]) == (2, ["to_x", "to_z"])
    assert joined(engine, instance_id) == [2]
    assert "y" not in entered(engine, instance_id)
    assert [k for k, n in history(engine, instance_id) if n == "end"] == ["entered"]


def test_a_multi_instance_branch_keeps_the_join_waiting_until_every_instance_is_done(engine):
    review = task("Review", multiInstance={"collection": "[1, 2]"})
    version = publish_document(diamond(three(b=review), conditions=False))
    instance_id = start(engine, version)
    drain(engine)
    first, second = open_tasks(engine, instance_id)
    complete(engine, first)
    drain(engine)
    assert joined(engine, instance_id) == []
    complete(engine, second)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [3]


def test_a_cancelled_scope_never_fires_its_join(engine):
    """An interrupting boundary on the sub-process ends the slow branch and the token waiting at
    the join inside it: the join does not fire, the boundary's path is taken."""
    inner = diamond(three(b=task("Slow")), conditions=False)
    nodes = {"start": node("startEvent"), "sub": node("subProcess", "Inner")}
    for node_id, spec in inner["nodes"].items():
        nodes[f"s_{node_id}"] = {**spec, "parent": "sub"}
    nodes["stop"] = node("boundaryEvent", attachedTo="sub", event="timer", duration="PT1H")
    nodes["stopped"] = node("endEvent")
    nodes["end"] = node("endEvent")
    flows = {
        f"s_{fid}": {**f, "source": f"s_{f['source']}", "target": f"s_{f['target']}"}
        for fid, f in inner["flows"].items()
    }
    flows.update(
        {"o1": flow("start", "sub"), "o2": flow("sub", "end"), "o3": flow("stop", "stopped")}
    )
    instance_id = start(engine, publish_document(document(nodes, flows)))
    drain(engine)
    assert load(engine, instance_id).status == "running"
    assert {"s_a", "s_c", "s_join"} <= set(entered(engine, instance_id))
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id, "s_join") == []
    assert entered(engine, instance_id)[-1] == "stopped"
    assert "end" not in entered(engine, instance_id)


def test_a_failed_branch_interrupted_by_its_boundary_releases_the_join(engine, test_tools):
    doc = diamond(three(b=node("serviceTask", tool="test.fatal", inputs={})), conditions=False)
    doc["nodes"]["late"] = node("boundaryEvent", attachedTo="b", event="timer", duration="PT1H")
    doc["nodes"]["late_end"] = node("endEvent")
    doc["flows"]["l1"] = flow("late", "late_end")
    instance_id = start(engine, publish_document(doc))
    drain(engine)
    assert load(engine, instance_id).status == "failed"
    assert joined(engine, instance_id) == []
    [timer] = pending_jobs(engine, instance_id, "timer")
    fire(engine, timer, instance_id)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [2]
    assert {"late_end", "end"} <= set(entered(engine, instance_id))


def test_a_branch_that_reaches_the_join_through_a_link_keeps_it_waiting(engine):
    """A link jump is a path like a flow: a token before the link throw can still reach the
    join, so the join waits for it instead of firing with the other branch alone."""
    doc = diamond(three(b=task("Slow")))
    doc["nodes"]["jump"] = node("linkThrow", "Jump", link="to-join")
    doc["nodes"]["land"] = node("linkCatch", "Land", link="to-join")
    doc["flows"]["from_b"] = flow("land", "join")
    doc["flows"]["b_jump"] = flow("b", "jump")
    version = publish_document(doc)
    instance_id = start(engine, version, input={"a": True, "b": True, "c": False})
    drain(engine)
    assert load(engine, instance_id).status == "running"
    assert joined(engine, instance_id) == [], "the join waits for the branch behind the link"
    [open_task] = open_tasks(engine, instance_id)
    complete(engine, open_task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id) == [2]


def test_nested_inclusive_blocks_in_a_loop_do_not_wait_for_each_other(engine):
    """An inner join's token can reach the outer join's empty flow; the outer join's token can
    loop round to the inner join's empty flow but also to its filled one (BPMN 2.0.2 §13.4.3):
    the inner join fires, then the outer one, instead of each waiting for the other."""
    nodes = {
        "start": node("startEvent"),
        "merge": node("exclusiveGateway", "Merge"),
        "outer": node("inclusiveGateway", "Outer split"),
        "a": task("Slow A"),
        "inner": node("inclusiveGateway", "Inner split"),
        "b1": node("serviceTask", **NOOP),
        "b2": node("serviceTask", **NOOP),
        "inner_join": node("inclusiveGateway", "Inner join"),
        "outer_join": node("inclusiveGateway", "Outer join"),
        "again": node("exclusiveGateway", "Again?"),
        "end": node("endEvent"),
    }
    flows = {
        "f0": flow("start", "merge"),
        "f1": flow("merge", "outer"),
        "to_a": flow("outer", "a", "$input.a"),
        "to_b": flow("outer", "inner", "$input.b"),
        "a_out": flow("a", "outer_join"),
        "to_b1": flow("inner", "b1", "$input.b1"),
        "to_b2": flow("inner", "b2", "$input.b2"),
        "b1_out": flow("b1", "inner_join"),
        "b2_out": flow("b2", "inner_join"),
        "inner_out": flow("inner_join", "outer_join"),
        "outer_out": flow("outer_join", "again"),
        "back": flow("again", "merge", "$input.loop == true"),
        "done": flow("again", "end", default=True),
    }
    version = publish_document(document(nodes, flows))
    given = {"a": True, "b": True, "b1": True, "b2": False, "loop": False}
    instance_id = start(engine, version, input=given)
    drain(engine)
    [open_task] = open_tasks(engine, instance_id)
    complete(engine, open_task)
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert joined(engine, instance_id, "inner_join") == [1]
    assert joined(engine, instance_id, "outer_join") == [2]
