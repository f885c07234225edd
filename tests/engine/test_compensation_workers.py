"""Compensation with real worker processes: a worker SIGKILLed while a handler's tool runs, and a
second compensation throw while a handler's tool job is leased. The engine keeps nothing in
memory: what is left to undo lives in the database, so each handler runs once."""

from __future__ import annotations

from sqlalchemy import select

from tests.engine import tools_for_tests
from tests.helpers.compensation import entered_nodes
from tests.helpers.documents import document, flow, node, wire
from tests.helpers.instances import load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import steps
from webapp.models import Compensation
from webapp.models.statuses import CompensationStatus
from webapp.services.jobs import commit


def _recording(name: str, timeout: int = 2, **inputs: str) -> dict:
    return node(
        "serviceTask",
        name,
        tool="test.record",
        timeout=timeout,
        retries=3,
        inputs={"name": f"'{name}'", **inputs},
    )


def _bookings(*names: str, block_first: str = "") -> dict:
    """start -> book_<n> (a pure script each, compensable) ... -> throw -> end; each handler is
    a leased tool call recording `undo_<n>` (the first call blocking `block_first` seconds)."""
    nodes = {"start": node("startEvent")}
    for name in names:
        nodes[f"book_{name}"] = node("scriptTask", script=f"booked_{name} = 1")
        nodes[f"comp_{name}"] = node(
            "boundaryEvent", event="compensate", attachedTo=f"book_{name}", handler=f"undo_{name}"
        )
        extra = {"block_first": block_first} if block_first else {}
        nodes[f"undo_{name}"] = _recording("undo", which=f"'{name}'", **extra)
    nodes["throw"] = node("compensationThrow")
    nodes["end"] = node("endEvent")
    return document(nodes, wire("start", *(f"book_{n}" for n in names), "throw", "end"))


def test_a_worker_killed_mid_compensation_resumes_and_runs_each_handler_once(
    engine, workers, test_tools, redis_client
):
    version = publish_document(_bookings("a", "b", "c", block_first="30"))
    instance_id = start(engine, version)
    first = workers.start(1)[0]
    wait_for(lambda: redis_client.llen("fdtest:started:undo") >= 1, what="the first handler")
    workers.kill(first)
    workers.start(1)
    wait_for(lambda: load(engine, instance_id).status == "completed", what="recovery", timeout=60)
    names = entered_nodes(engine, instance_id)
    assert [n for n in names if n.startswith("undo_")] == ["undo_c", "undo_b", "undo_a"]
    seen = tools_for_tests.seen(redis_client, "undo")
    # The killed call is delivered again with the same key; every handler has one key.
    assert [entry["inputs"]["which"] for entry in seen] == ["c", "c", "b", "a"]
    assert seen[0]["key"] == seen[1]["key"]
    assert len({entry["key"] for entry in seen}) == 3
    engine.rollback()
    statuses = engine.scalars(
        select(Compensation.status).where(Compensation.instance_id == instance_id)
    ).all()
    assert statuses == [CompensationStatus.COMPENSATED] * 3


def test_a_second_throw_while_a_handler_is_leased_undoes_nothing_again(
    engine, workers, test_tools, redis_client
):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "book": node("scriptTask", script="booked = 1"),
        "comp": node("boundaryEvent", event="compensate", attachedTo="book", handler="undo"),
        "undo": _recording("leased", timeout=20, block_first="3"),
        "throw1": node("compensationThrow"),
        "end1": node("endEvent"),
        "again": node("messageCatch", message="again", correlationKey="'k'"),
        "throw2": node("compensationThrow"),
        "after2": node("scriptTask", script="second_done = 1"),
        "end2": node("endEvent"),
    }
    flows = {
        **wire("start", "split"),
        "a": flow("split", "book"),
        "b": flow("split", "again"),
        **wire("book", "throw1", "end1"),
        **wire("again", "throw2", "after2", "end2"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    workers.start(1)
    wait_for(lambda: redis_client.llen("fdtest:started:leased") >= 1, what="the handler's call")
    commit(steps.deliver_message(engine, instance_id, "again", "k", {}))
    # The second throw found the booking compensated already and went straight on.
    assert load(engine, instance_id).vars.get("second_done") == 1
    assert load(engine, instance_id).status == "running"
    wait_for(
        lambda: load(engine, instance_id).status == "completed", what="the handler", timeout=40
    )
    assert entered_nodes(engine, instance_id).count("undo") == 1
    assert len(tools_for_tests.seen(redis_client, "leased")) == 1
