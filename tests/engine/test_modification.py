"""Moving, cancelling and adding tokens of a running instance (instance modification): the engine's
own rules for leaving and entering nodes, scopes opened and closed, the preview and its stamp."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from tests.helpers.documents import CLERK, document, flow, node, wire
from tests.helpers.instances import complete, load, open_tasks, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain, run_burst
from webapp.engine import EngineError, modification
from webapp.models import HistoryEntry, Token
from webapp.services.jobs import commit


def task(title: str) -> dict:
    return node("userTask", title, assignee=CLERK)


def inner(parent: str, spec: dict) -> dict:
    return {**spec, "parent": parent}


def modify(session, instance_id: int, *operations, variables=None, stamp=None, dry=False):
    """Run a modification; apply (commit) it, or roll back a dry run; the preview."""
    done = modification.modify(
        session,
        instance_id,
        modification.parse_operations(list(operations)),
        modification.parse_variables(variables),
        reason="test",
        actor="operator",
        stamp=stamp,
    )
    if dry:
        session.rollback()
    else:
        commit(done.result)
    return done.preview


def token_at(session, instance_id: int, node_id: str) -> int:
    session.rollback()
    return session.scalar(
        select(Token.id).where(
            Token.instance_id == instance_id,
            Token.node_id == node_id,
            Token.status.in_(("active", "waiting", "failed")),
        )
    )


def open_nodes(session, instance_id: int) -> list[str]:
    session.rollback()
    return sorted(
        session.scalars(
            select(Token.node_id).where(
                Token.instance_id == instance_id, Token.status.in_(("active", "waiting", "failed"))
            )
        )
    )


def chain_of_tasks() -> dict:
    nodes = {
        "start": node("startEvent"),
        "a": task("First check"),
        "b": task("Second check"),
        "c": node("serviceTask", "Record", tool="noop"),
        "end": node("endEvent"),
    }
    return document(nodes, wire("start", "a", "b", "c", "end"))


def test_a_token_moved_to_another_task_withdraws_the_old_task_and_the_instance_completes(
    app, app_config, engine, demo
):
    version = publish_document(chain_of_tasks())
    instance_id = start(engine, version)
    [first] = open_tasks(engine, instance_id)
    preview = modify(engine, instance_id, {"move": token_at(engine, instance_id, "a"), "to": "b"})
    assert [t["title"] for t in preview["tasks_withdrawn"]] == ["First check"]
    assert [t["title"] for t in preview["tasks_created"]] == ["Second check"]
    assert [t["node"] for t in preview["tokens_before"]] == ["a"]
    assert [t["node"] for t in preview["tokens_after"]] == ["b"]
    [second] = open_tasks(engine, instance_id)
    assert second.node_id == "b"
    engine.refresh(first)
    assert first.status == "cancelled"
    entry = engine.scalar(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "modified"
        )
    )
    assert entry.actor == "operator"
    assert entry.details["reason"] == "test"
    assert entry.details["before"][0]["node"] == "a"
    assert entry.details["before"][0]["name"] == "First check"
    assert entry.details["after"][0]["name"] == "Second check"
    complete(engine, second)
    run_burst(app_config)
    assert load(engine, instance_id).status == "completed"


def test_a_dry_run_changes_nothing_and_a_stale_stamp_is_refused(engine, demo):
    version = publish_document(chain_of_tasks())
    instance_id = start(engine, version)
    token = token_at(engine, instance_id, "a")
    preview = modify(engine, instance_id, {"move": token, "to": "b"}, dry=True)
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a"]
    assert open_nodes(engine, instance_id) == ["a"]
    [task_a] = open_tasks(engine, instance_id)
    complete(engine, task_a)  # the instance moves on after the preview
    with pytest.raises(EngineError) as refused:
        modify(engine, instance_id, {"cancel": token}, stamp=preview["stamp"])
    engine.rollback()
    assert refused.value.status == 409
    assert "moved since the preview" in refused.value.message
    assert open_nodes(engine, instance_id) == ["b"]
    fresh = modify(engine, instance_id, {"add": "a"}, dry=True)
    applied = modify(engine, instance_id, {"add": "a"}, stamp=fresh["stamp"])
    assert applied["stamp"] == fresh["stamp"]
    assert open_nodes(engine, instance_id) == ["a", "b"]


def sub_process_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "before": task("Prepare"),
        "sub": node("subProcess", "Review"),
        "s_start": inner("sub", node("startEvent")),
        "inside": inner("sub", task("Check offer")),
        "s_end": inner("sub", node("endEvent")),
        "after": task("Decide"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "before", "sub", "after", "end"), **wire("s_start", "inside", "s_end")}
    return document(nodes, flows)


def test_moving_into_a_sub_process_opens_its_scope_and_it_completes_as_usual(engine, demo):
    version = publish_document(sub_process_document())
    instance_id = start(engine, version)
    preview = modify(
        engine, instance_id, {"move": token_at(engine, instance_id, "before"), "to": "inside"}
    )
    assert sorted(t["node"] for t in preview["tokens_after"]) == ["inside", "sub"]
    assert open_nodes(engine, instance_id) == ["inside", "sub"]
    [check] = open_tasks(engine, instance_id)
    assert check.node_id == "inside"
    complete(engine, check)
    assert open_nodes(engine, instance_id) == ["after"]


def test_moving_out_of_a_sub_process_closes_the_scope_left_empty(engine, demo):
    version = publish_document(sub_process_document())
    instance_id = start(engine, version)
    [prepare] = open_tasks(engine, instance_id)
    complete(engine, prepare)
    assert open_nodes(engine, instance_id) == ["inside", "sub"]
    scope = token_at(engine, instance_id, "sub")
    modify(engine, instance_id, {"move": token_at(engine, instance_id, "inside"), "to": "after"})
    assert open_nodes(engine, instance_id) == ["after"]
    assert engine.get(Token, scope).status == "cancelled"
    [decide] = open_tasks(engine, instance_id)
    complete(engine, decide)
    assert load(engine, instance_id).status == "completed"


def multi_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "review": node("userTask", "Review", assignee=CLERK, multiInstance={"cardinality": "2"}),
        "after": task("Decide"),
        "end": node("endEvent"),
    }
    return document(nodes, wire("start", "review", "after", "end"))


def test_moving_a_multi_instance_body_out_withdraws_every_instance(engine, demo):
    version = publish_document(multi_document())
    instance_id = start(engine, version)
    assert len(open_tasks(engine, instance_id)) == 2
    engine.rollback()
    body = engine.scalar(
        select(Token.id).where(Token.instance_id == instance_id, Token.parent_id.is_(None))
    )
    preview = modify(engine, instance_id, {"move": body, "to": "after"})
    assert len(preview["tasks_withdrawn"]) == 2
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["after"]
    assert open_nodes(engine, instance_id) == ["after"]


def test_one_instance_moved_out_of_a_body_counts_as_finished_so_the_body_goes_on(engine, demo):
    version = publish_document(multi_document())
    instance_id = start(engine, version)
    first, second = open_tasks(engine, instance_id)
    modify(engine, instance_id, {"cancel": first.token_id})
    assert [t.id for t in open_tasks(engine, instance_id)] == [second.id]
    complete(engine, second)
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["after"]


def test_moving_into_a_multi_instance_sub_process_opens_a_body_with_one_instance(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "before": task("Prepare"),
        "sub": node("subProcess", "Reviews", multiInstance={"collection": "$input.people"}),
        "s_start": inner("sub", node("startEvent")),
        "inside": inner("sub", task("Review offer")),
        "s_end": inner("sub", node("endEvent")),
        "after": task("Decide"),
        "end": node("endEvent"),
    }
    flows = {**wire("start", "before", "sub", "after", "end"), **wire("s_start", "inside", "s_end")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"people": ["a", "b"]})
    modify(engine, instance_id, {"move": token_at(engine, instance_id, "before"), "to": "inside"})
    assert open_nodes(engine, instance_id) == ["inside", "sub", "sub"]
    [review] = open_tasks(engine, instance_id)
    complete(engine, review)
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["after"]
    assert open_nodes(engine, instance_id) == ["after"]


def parallel_document() -> dict:
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway", "Split"),
        "a": task("Left"),
        "b": task("Right"),
        "join": node("parallelGateway", "Join"),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "split"),
        "f2": flow("split", "a"),
        "f3": flow("split", "b"),
        "f4": flow("a", "join"),
        "f5": flow("b", "join"),
        "f6": flow("join", "end"),
    }
    return document(nodes, flows)


def test_cancelling_one_branch_of_a_split_warns_that_the_join_waits_for_ever(engine, demo):
    version = publish_document(parallel_document())
    instance_id = start(engine, version)
    left, right = open_tasks(engine, instance_id)
    complete(engine, right)
    assert open_nodes(engine, instance_id) == ["a", "join"]
    preview = modify(engine, instance_id, {"cancel_branch": left.token_id}, dry=True)
    [warning] = preview["warnings"]
    assert "'Join'" in warning and "'Left' (f4)" in warning and "for ever" in warning
    assert open_nodes(engine, instance_id) == ["a", "join"]
    calm = modify(engine, instance_id, {"move": left.token_id, "to": "a"}, dry=True)
    assert calm["warnings"] == []
    modify(engine, instance_id, {"cancel_branch": left.token_id})
    assert open_nodes(engine, instance_id) == ["join"]
    assert open_tasks(engine, instance_id) == []


def test_a_token_added_at_a_node_and_variables_edited_in_the_same_change(engine, demo):
    version = publish_document(parallel_document())
    instance_id = start(engine, version)
    left, right = open_tasks(engine, instance_id)
    complete(engine, left)
    complete(engine, right)
    assert load(engine, instance_id).status == "completed"
    instance_id = start(engine, version)
    preview = modify(
        engine, instance_id, {"add": "b"}, variables={"amount": 1200, "note": {"ok": True}}
    )
    assert preview["variables"]["amount"] == {"before": None, "after": 1200}
    assert len(preview["tasks_created"]) == 1
    assert load(engine, instance_id).vars == {"amount": 1200, "note": {"ok": True}}
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a", "b", "b"]


def test_moving_a_token_waiting_at_a_timer_cancels_its_timer_job(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "wait": node("timerCatch", "Wait a day", duration="P1D"),
        "after": task("Decide"),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, wire("start", "wait", "after", "end")))
    instance_id = start(engine, version)
    [timer] = pending_jobs(engine, instance_id, "timer")
    preview = modify(
        engine, instance_id, {"move": token_at(engine, instance_id, "wait"), "to": "after"}
    )
    assert [j["id"] for j in preview["jobs_cancelled"]] == [timer.id]
    assert pending_jobs(engine, instance_id, "timer") == []
    back = modify(
        engine, instance_id, {"move": token_at(engine, instance_id, "after"), "to": "wait"}
    )
    assert [j["kind"] for j in back["jobs_created"]] == ["timer"]
    assert back["tasks_withdrawn"][0]["title"] == "Decide"


@pytest.mark.parametrize(
    ("operation", "field", "words"),
    [
        ({"move": 999999, "to": "b"}, "operations[0]", "no live token"),
        ({"move": None, "to": "nowhere"}, "operations[0].move", "token id"),
        ({"jump": 1}, "operations[0]", "unknown operation"),
        ({"add": "nowhere"}, "operations[0]", "no node 'nowhere'"),
    ],
)
def test_bad_operations_are_refused_naming_them_and_change_nothing(
    engine, demo, operation, field, words
):
    version = publish_document(chain_of_tasks())
    instance_id = start(engine, version)
    with pytest.raises(EngineError) as refused:
        modify(engine, instance_id, {"cancel": token_at(engine, instance_id, "a")}, operation)
    engine.rollback()
    field = field.replace("[0]", "[1]")
    assert refused.value.status == 422
    assert field in refused.value.details["fields"]
    assert words in refused.value.message
    assert open_nodes(engine, instance_id) == ["a"]
    assert [t.node_id for t in open_tasks(engine, instance_id)] == ["a"]


def test_cancelling_the_last_token_is_refused(engine, demo):
    version = publish_document(chain_of_tasks())
    instance_id = start(engine, version)
    with pytest.raises(EngineError, match="cancel the instance instead"):
        modify(engine, instance_id, {"cancel": token_at(engine, instance_id, "a")})
    engine.rollback()
    assert open_nodes(engine, instance_id) == ["a"]


def test_moving_the_failed_token_of_an_incident_lets_the_instance_run_again(engine, demo):
    nodes = {
        "start": node("startEvent"),
        "charge": node("serviceTask", "Charge", tool="fail", retries=0),
        "manual": task("Charge by hand"),
        "end": node("endEvent"),
    }
    version = publish_document(document(nodes, wire("start", "charge", "manual", "end")))
    instance_id = start(engine, version)
    drain(engine)
    assert load(engine, instance_id).status == "failed"
    failed = token_at(engine, instance_id, "charge")
    preview = modify(engine, instance_id, {"move": failed, "to": "manual"})
    assert preview["status"] == "running"
    instance = load(engine, instance_id)
    assert (instance.status, instance.error) == ("running", None)
    [by_hand] = open_tasks(engine, instance_id)
    complete(engine, by_hand)
    assert load(engine, instance_id).status == "completed"
