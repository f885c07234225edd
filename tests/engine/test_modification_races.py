"""Instance modification racing real workers: a timer falling due while the change holds the
instance, and a tool's outcome arriving for a token moved away, or before the change. No step
is lost or doubled."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import func, select

from tests.helpers.documents import CLERK, document, flow, node, wire
from tests.helpers.instances import history, open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import EngineError, modification
from webapp.models import HistoryEntry, Token
from webapp.services.jobs import commit


def task(title: str) -> dict:
    return node("userTask", title, assignee=CLERK)


def change(session, instance_id: int, *operations, stamp=None, hold: float = 0.0):
    """Apply a modification, holding the instance's lock `hold` seconds before the commit."""
    done = modification.modify(
        session,
        instance_id,
        modification.parse_operations(list(operations)),
        {},
        reason="race",
        actor="operator",
        stamp=stamp,
    )
    time.sleep(hold)
    commit(done.result)
    return done.preview


def token_at(session, instance_id: int, node_id: str) -> int:
    session.rollback()
    return session.scalar(
        select(Token.id).where(
            Token.instance_id == instance_id,
            Token.node_id == node_id,
            Token.status.in_(("active", "waiting")),
        )
    )


def count(session, instance_id: int, kind: str, node_id: str | None = None) -> int:
    session.rollback()
    query = select(func.count()).where(
        HistoryEntry.instance_id == instance_id, HistoryEntry.kind == kind
    )
    if node_id is not None:
        query = query.where(HistoryEntry.node_id == node_id)
    return session.scalar(query)


def timer_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "wait": node("timerCatch", "Short wait", duration="PT1S"),
        "late": task("After the wait"),
        "a": task("Check"),
        "b": task("Check again"),
        "end": node("endEvent"),
        "end2": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "wait"),
        "f3": flow("wait", "late"),
        "f4": flow("late", "end"),
        "f5": flow("split", "a"),
        "f6": flow("a", "b"),
        "f7": flow("b", "end2"),
    }
    return document(nodes, flows)


def test_a_timer_falling_due_while_the_change_holds_the_instance_fires_once_after_it(
    engine, demo, workers
):
    version = publish_document(timer_document())
    workers.start(1)
    instance_id = start(engine, version)
    # The change holds the instance while the timer comes due; the timer's step waits for it.
    change(engine, instance_id, {"move": token_at(engine, instance_id, "a"), "to": "b"}, hold=2.5)
    wait_for(lambda: "late" in [t.node_id for t in open_tasks(engine, instance_id)], 30, "timer")
    time.sleep(1.0)
    assert count(engine, instance_id, "timer") == 1
    assert sorted(t.node_id for t in open_tasks(engine, instance_id)) == ["b", "late"]
    assert [n for k, n in history(engine, instance_id) if k == "entered"].count("late") == 1


def test_a_timer_falling_due_for_the_token_moved_away_is_dropped(engine, demo, workers):
    version = publish_document(timer_document())
    workers.start(1)
    instance_id = start(engine, version)
    wait = token_at(engine, instance_id, "wait")
    change(engine, instance_id, {"move": wait, "to": "late"}, hold=2.5)
    time.sleep(2.0)  # the worker's clock had the due timer; its step finds it withdrawn
    assert count(engine, instance_id, "timer") == 0
    assert sorted(t.node_id for t in open_tasks(engine, instance_id)) == ["a", "late"]
    assert [n for k, n in history(engine, instance_id) if k == "entered"].count("late") == 1


def tool_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "call": node(
            "serviceTask", "Call the vendor", tool="test.gate", inputs={"dir": "$input.dir"}
        ),
        "route": node("exclusiveGateway", "Answered?"),
        "next": task("Use the answer"),
        "alt": task("Ask by phone"),
        "end": node("endEvent"),
    }
    flows = {
        **wire("start", "call", "route"),
        "yes": flow("route", "next", default=True),
        "no": flow("route", "alt", "$input.phone == true"),
        **wire("next", "end"),
        "w_alt_end": flow("alt", "end"),
    }
    return document(nodes, flows)


def test_a_tool_outcome_for_a_token_moved_away_is_discarded(
    engine, demo, workers, tmp_path, test_tools
):
    version = publish_document(tool_document())
    workers.start(1)
    instance_id = start(engine, version, input={"dir": str(tmp_path)})
    wait_for(lambda: (tmp_path / "started").exists(), 30, "the tool call")
    preview = change(
        engine, instance_id, {"move": token_at(engine, instance_id, "call"), "to": "alt"}
    )
    assert [j["node"] for j in preview["jobs_cancelled"]] == ["call"]
    (tmp_path / "open").touch()

    def discarded() -> bool:
        engine.rollback()
        rows = engine.scalars(
            select(HistoryEntry.details).where(
                HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "tool_attempt"
            )
        )
        return any(details.get("status") == "discarded" for details in rows)

    wait_for(discarded, 30, "the late outcome")
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["alt"]
    assert count(engine, instance_id, "entered", "next") == 0


def test_a_tool_outcome_applied_first_makes_the_preview_stale(
    engine, demo, workers, tmp_path, test_tools
):
    version = publish_document(tool_document())
    workers.start(1)
    instance_id = start(engine, version, input={"dir": str(tmp_path)})
    wait_for(lambda: (tmp_path / "started").exists(), 30, "the tool call")
    token = token_at(engine, instance_id, "call")
    done = modification.modify(
        engine,
        instance_id,
        modification.parse_operations([{"move": token, "to": "alt"}]),
        {},
        reason="race",
        actor="operator",
    )
    engine.rollback()
    (tmp_path / "open").touch()
    wait_for(lambda: open_tasks(engine, instance_id), 30, "the outcome")
    with pytest.raises(EngineError) as refused:
        change(engine, instance_id, {"move": token, "to": "alt"}, stamp=done.preview["stamp"])
    engine.rollback()
    assert refused.value.code == "stale"
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["next"]
    assert count(engine, instance_id, "entered", "alt") == 0
    assert count(engine, instance_id, "modified") == 0
