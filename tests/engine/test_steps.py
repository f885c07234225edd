"""Engine steps run in-process against the real database: every node kind and gateway path."""

from __future__ import annotations

import itertools

import pytest
from sqlalchemy import func, select

from tests.helpers.documents import chain, document, flow, node, sample_document
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain
from webapp.engine import EngineError, steps
from webapp.models import HistoryEntry, Job, Token
from webapp.services.jobs import commit


def test_start_to_end_completes_in_one_step(engine):
    version = publish_document(chain())
    instance_id = start(engine, version, input={"a": 1}, business_key="B-1")
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.ended_at is not None
    assert (instance.input, instance.business_key, instance.version) == ({"a": 1}, "B-1", 1)
    assert history(engine, instance_id) == [
        ("started", None),
        ("entered", "start"),
        ("left", "start"),
        ("entered", "end"),
        ("completed", None),
    ]


def test_sample_process_runs_tools_gateways_and_join(engine):
    version = publish_document(sample_document())
    instance_id = start(engine, version, input={"amount": 500})
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id))
    assert (job.tool, job.inputs, job.status) == ("noop", {"amount": 500}, "pending")
    assert drain(engine) == 1, "left and right (pure) ran as follow-ons of check's delivery"
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars == {"check": {"amount": 500}}
    assert instance.nodes == {
        "check": {"amount": 500},
        "left": {"side": "left"},
        "right": {"side": "right"},
    }
    steps_taken = history(engine, instance_id)
    assert steps_taken.count(("left", "join")) == 1
    assert steps_taken.count(("entered", "join")) == 2
    assert steps_taken.count(("entered", "end")) == 1
    assert ("entered", "small") not in steps_taken
    assert [k for k, _ in steps_taken].count("tool_attempt") == 3


def test_exclusive_gateway_takes_the_default_flow_when_nothing_matches(engine):
    version = publish_document(sample_document())
    instance_id = start(engine, version, input={"amount": 5})
    drain(engine)
    assert load(engine, instance_id).status == "completed"
    assert ("entered", "small") in history(engine, instance_id)


def test_first_true_flow_in_document_order_wins(engine):
    # Flow ids chosen so that sorting them (as PostgreSQL's JSONB does) would reverse the order.
    nodes = {
        "start": node("startEvent"),
        "gw": node("exclusiveGateway"),
        "first": node("endEvent"),
        "second": node("endEvent"),
        "third": node("endEvent"),
    }
    flows = {
        "s": flow("start", "gw"),
        "zz_long_first": flow("gw", "first", "$input.n > 1"),
        "a": flow("gw", "second", "$input.n > 0"),
        "b_default": flow("gw", "third", default=True),
    }
    version = publish_document(document(nodes, flows))
    both = start(engine, version, input={"n": 5})
    one = start(engine, version, input={"n": 1})
    none = start(engine, version, input={"n": 0})
    assert ("entered", "first") in history(engine, both)
    assert ("entered", "second") in history(engine, one)
    assert ("entered", "third") in history(engine, none)


def test_a_default_flow_listed_first_is_only_taken_when_no_condition_holds(engine):
    # BPMN files from other tools often list the default flow first; it must not stop the scan.
    nodes = {
        "start": node("startEvent"),
        "gw": node("exclusiveGateway"),
        "fallback": node("endEvent"),
        "big": node("endEvent"),
        "small": node("endEvent"),
    }
    flows = {
        "s": flow("start", "gw"),
        "d": flow("gw", "fallback", default=True),
        "f_big": flow("gw", "big", "$input.n > 10"),
        "f_small": flow("gw", "small", "$input.n > 0"),
    }
    version = publish_document(document(nodes, flows))
    big = start(engine, version, input={"n": 50})
    small = start(engine, version, input={"n": 5})
    neither = start(engine, version, input={"n": 0})
    for instance_id, reached in ((big, "big"), (small, "small"), (neither, "fallback")):
        taken = [n for kind, n in history(engine, instance_id) if kind == "entered"]
        assert taken[-1] == reached
        assert load(engine, instance_id).status == "completed"


def test_no_branch_fails_the_token_and_instance(engine):
    nodes = {
        "start": node("startEvent"),
        "gw": node("exclusiveGateway"),
        "a": node("endEvent"),
        "b": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "gw"),
        "f2": flow("gw", "a", "$input.x == 1"),
        "f3": flow("gw", "b", "$input.x == 2"),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"x": 3})
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert instance.error["node"] == "gw"
    assert instance.error["code"] == "no_branch"
    token = engine.scalar(select(Token).where(Token.instance_id == instance_id))
    assert (token.status, token.node_id) == ("failed", "gw")
    assert history(engine, instance_id)[-1] == ("error", "gw")


def test_a_failing_condition_is_an_incident_naming_the_flow(engine):
    nodes = {
        "start": node("startEvent"),
        "gw": node("exclusiveGateway"),
        "a": node("endEvent"),
        "b": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "gw"),
        "bad": flow("gw", "a", "$input.x > 1"),
        "f3": flow("gw", "b", default=True),
    }
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"x": "text"})
    error = load(engine, instance_id).error
    assert error["code"] == "expression" and error["node"] == "gw"
    assert error["message"].startswith(
        "The condition of the flow from the untitled exclusive gateway to an untitled end event"
    )
    details = engine.execute(
        select(HistoryEntry.details).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "error"
        )
    ).scalar_one()
    assert details["flow"] == "bad", "operators still find the flow by its id"


def test_tool_inputs_are_evaluated_once_when_the_job_is_written(engine):
    doc = chain(
        (
            "set",
            node(
                "serviceTask",
                tool="vars.set",
                inputs={"total": "$input.a + $input.b", "when": "now()"},
                saveTo="sums",
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version, input={"a": 2, "b": 3})
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id))
    assert job.inputs["total"] == 5
    assert isinstance(job.inputs["when"], str)
    drain(engine)
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["sums"]["total"] == 5


def test_failing_tool_retries_with_backoff_then_fails_the_instance(engine):
    doc = chain(
        (
            "pay",
            node(
                "serviceTask",
                tool="fail",
                inputs={"message": "'card declined'"},
                retries=2,
                backoff=0.05,
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    assert drain(engine) == 3
    instance = load(engine, instance_id)
    assert instance.status == "failed"
    assert (instance.error["node"], instance.error["code"]) == ("pay", "failed")
    assert instance.error["message"] == "card declined"
    attempts = engine.execute(
        select(HistoryEntry.details, HistoryEntry.created_at)
        .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "tool_attempt")
        .order_by(HistoryEntry.id)
    ).all()
    assert [a.details["attempt"] for a in attempts] == [1, 2, 3]
    assert {a.details["status"] for a in attempts} == {"error"}
    gaps = [(b.created_at - a.created_at).total_seconds() for a, b in itertools.pairwise(attempts)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1, gaps
    job = engine.scalar(select(Job).where(Job.instance_id == instance_id))
    assert (job.status, job.attempt, job.last_error["code"]) == ("failed", 3, "failed")


def test_retry_reenters_the_failed_node_with_fresh_attempts(engine, test_tools, redis_client):
    doc = chain(
        (
            "call",
            node(
                "serviceTask",
                tool="test.flaky",
                inputs={"name": "'retry'", "fail_times": "3"},
                retries=2,
                backoff=0.01,
                saveTo="call",
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    drain(engine)
    assert load(engine, instance_id).status == "failed"
    with pytest.raises(EngineError) as missing:
        steps.retry_instance(engine, instance_id + 1000)
    engine.rollback()
    assert missing.value.status == 404

    commit(steps.retry_instance(engine, instance_id))
    instance = load(engine, instance_id)
    assert (instance.status, instance.error) == ("running", None)
    jobs = engine.scalars(select(Job).where(Job.instance_id == instance_id).order_by(Job.id)).all()
    assert [(j.status, j.attempt) for j in jobs] == [("failed", 3), ("pending", 0)]
    assert jobs[0].key != jobs[1].key
    assert drain(engine) == 1
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars["call"] == {"calls": 4}
    assert ("retried", "call") in history(engine, instance_id)
    with pytest.raises(EngineError) as conflict:
        steps.retry_instance(engine, instance_id)
    engine.rollback()
    assert (conflict.value.code, conflict.value.status) == ("not_failed", 409)


def test_parallel_split_without_join_finishes_each_branch(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "a": node("endEvent"),
        "b": node("endEvent"),
    }
    flows = {"f1": flow("start", "split"), "f2": flow("split", "a"), "f3": flow("split", "b")}
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version)
    assert load(engine, instance_id).status == "completed"
    assert (
        engine.scalar(
            select(func.count()).select_from(Token).where(Token.instance_id == instance_id)
        )
        == 2
    )


def test_cancel_closes_tokens_jobs_subscriptions_and_tasks(engine):
    nodes = {
        "start": node("startEvent"),
        "split": node("parallelGateway"),
        "work": node("serviceTask", tool="noop"),
        "wait": node("timerCatch", duration="PT1H"),
        "msg": node("messageCatch", message="paid", correlationKey="$input.order"),
        "review": node("userTask", "Review", assignee={"type": "role", "value": "approver"}),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    flows = {"f0": flow("start", "split")}
    for branch in ("work", "wait", "msg", "review"):
        flows[f"in_{branch}"] = flow("split", branch)
        flows[f"out_{branch}"] = flow(branch, "join")
    flows["f9"] = flow("join", "end")
    version = publish_document(document(nodes, flows))
    instance_id = start(engine, version, input={"order": "A-1"})
    from webapp.models import MessageSubscription, Task

    assert engine.scalar(select(func.count()).select_from(MessageSubscription)) == 1
    task = engine.scalar(select(Task))
    assert (task.title, task.status, task.candidate_role.name) == ("Review", "open", "approver")

    result = steps.cancel_instance(engine, instance_id, reason="duplicate order", actor=None)
    commit(result)
    instance = load(engine, instance_id)
    assert instance.status == "cancelled"
    assert {t.status for t in engine.scalars(select(Token))} == {"cancelled"}
    assert {j.status for j in engine.scalars(select(Job))} == {"cancelled"}
    assert engine.scalar(select(func.count()).select_from(MessageSubscription)) == 0
    assert engine.scalar(select(Task.status)) == "cancelled"
    assert history(engine, instance_id)[-1] == ("cancelled", None)
    with pytest.raises(EngineError) as again:
        steps.cancel_instance(engine, instance_id)
    engine.rollback()
    assert (again.value.code, again.value.status) == ("not_active", 409)
    assert drain(engine) == 0
