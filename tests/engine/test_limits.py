"""The engine's ceilings: a call chain deeper than CALL_DEPTH_LIMIT and a multi-instance over
MULTI_INSTANCE_LIMIT end in an incident naming the limit; exactly at the limit runs."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.documents import CLERK, document, inside, node, wire
from tests.helpers.instances import complete, load, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import limits
from webapp.models import Instance


def _calls(callee: str | None) -> dict:
    """start -> a call of `callee` (none: a plain step) -> end."""
    step = node("callActivity", process=callee) if callee else node("serviceTask", tool="noop")
    nodes = {"start": node("startEvent"), "step": step, "end": node("endEvent")}
    return document(nodes, wire("start", "step", "end"))


def _chain(engine, top_id: int) -> list[Instance]:
    """The top instance and every instance it called, directly or further down, by depth."""
    engine.rollback()
    found = [engine.get(Instance, top_id)]
    while True:
        child = engine.scalars(select(Instance).where(Instance.parent_id == found[-1].id)).first()
        if child is None:
            return found
        found.append(child)


@pytest.fixture
def depth_two(monkeypatch):
    monkeypatch.setattr(limits, "CALL_DEPTH", 2)


def test_a_call_chain_exactly_at_the_depth_limit_completes(engine, depth_two):
    publish_document(_calls(None), key="leaf")
    publish_document(_calls("leaf"), key="middle")
    top_id = start(engine, publish_document(_calls("middle"), key="top"))
    drain(engine)
    chain = _chain(engine, top_id)
    assert [(i.call_depth, i.status) for i in chain] == [
        (0, "completed"),
        (1, "completed"),
        (2, "completed"),
    ]


def test_a_call_one_level_past_the_depth_limit_is_an_incident_naming_it(engine, depth_two):
    publish_document(_calls(None), key="bottom")
    publish_document(_calls("bottom"), key="leaf")
    publish_document(_calls("leaf"), key="middle")
    top_id = start(engine, publish_document(_calls("middle"), key="top"))
    drain(engine)
    chain = _chain(engine, top_id)
    assert [i.call_depth for i in chain] == [0, 1, 2]
    assert [i.status for i in chain] == ["running", "running", "failed"]
    deepest = chain[-1]
    assert deepest.error["code"] == "call_depth"
    assert deepest.error["node"] == "step"
    assert "deeper than 2" in deepest.error["message"]


def test_a_process_calling_itself_stops_at_the_depth_limit(engine, depth_two):
    publish_document(_calls(None), key="again")
    top_id = start(engine, publish_document(_calls("again"), key="again"))
    drain(engine)
    chain = _chain(engine, top_id)
    assert [i.call_depth for i in chain] == [0, 1, 2]
    assert chain[-1].status == "failed"
    assert "deeper than 2" in chain[-1].error["message"]
    engine.rollback()
    assert len(engine.scalars(select(Instance)).all()) == 3


# --- multi-instance ---------------------------------------------------------------------------


@pytest.fixture
def three(monkeypatch):
    monkeypatch.setattr(limits, "MULTI_INSTANCE", 3)


def _multi(**settings) -> dict:
    review = node("userTask", assignee=CLERK, multiInstance=settings)
    nodes = {"start": node("startEvent"), "review": review, "end": node("endEvent")}
    return document(nodes, wire("start", "review", "end"))


def test_a_collection_exactly_at_the_multi_instance_limit_runs_every_instance(engine, demo, three):
    version = publish_document(_multi(collection="$input.items"))
    instance_id = start(engine, version, input={"items": ["a", "b", "c"]})
    tasks = open_tasks(engine, instance_id)
    assert len(tasks) == 3
    for task in tasks:
        complete(engine, task)
    assert load(engine, instance_id).status == "completed"


@pytest.mark.parametrize(
    ("settings", "given"),
    [
        ({"collection": "$input.items"}, {"items": [1, 2, 3, 4]}),
        ({"cardinality": "$input.n"}, {"n": 4}),
        ({"collection": "$input.items", "sequential": True}, {"items": [1, 2, 3, 4]}),
        ({"cardinality": "$input.n", "sequential": True}, {"n": 4}),
    ],
    ids=["collection", "cardinality", "sequential-collection", "sequential-cardinality"],
)
def test_one_over_the_multi_instance_limit_is_an_incident_naming_it(
    engine, demo, three, settings, given
):
    instance_id = start(engine, publish_document(_multi(**settings)), input=given)
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert instance.error["code"] == "multi_instance"
    assert instance.error["node"] == "review"
    assert "4 instances are over the limit of 3" in instance.error["message"]
    assert open_tasks(engine, instance_id) == []


def test_a_cardinality_exactly_at_the_limit_runs_on_a_sub_process(engine, demo, three):
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess", multiInstance={"cardinality": "$input.n"}),
        "sub_start": inside("sub", "startEvent"),
        "t": inside("sub", "userTask", assignee=CLERK),
        "sub_end": inside("sub", "endEvent"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "sub", "end"), **wire("sub_start", "t", "sub_end")}
    version = publish_document(document(nodes, flows))
    assert len(open_tasks(engine, start(engine, version, input={"n": 3}))) == 3
    over = load(engine, start(engine, version, input={"n": 4}))
    assert over.status == "failed" and "over the limit of 3" in over.error["message"]


def test_a_huge_cardinality_is_refused_before_any_instance_is_made(engine, demo, three):
    """A cardinality is checked as a number, so a typo of a trillion is an incident at once,
    not a list of a trillion slots."""
    version = publish_document(_multi(cardinality="$input.n"))
    instance = load(engine, start(engine, version, input={"n": 10**12}))
    assert instance.status == "failed"
    assert f"{10**12} instances are over the limit of 3" in instance.error["message"]
