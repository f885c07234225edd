"""Follow-on tool calls: the worker that applied a step runs the tools it made due, leased in
that step's transaction, without a round trip through RQ; a worker killed between them is
recovered by the sweep with the same idempotency key."""

from __future__ import annotations

from datetime import timedelta

import pytest
from rq.job import Job as RQJob
from sqlalchemy import select

from tests.engine import tools_for_tests
from tests.helpers.documents import chain, node
from tests.helpers.follow_on import job_at, record, split_after_pre, wired
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import steps
from webapp.engine.calls import Outcome
from webapp.engine.dispatch import rq_job_id
from webapp.engine.sweep import sweep
from webapp.models import Job
from webapp.models.base import utcnow
from webapp.services import jobs
from webapp.services.jobs import ENTRY_POINTS, engine_queue


def test_the_next_tool_runs_in_the_same_delivery_leased_in_the_step_that_made_it_due(
    engine, test_tools, redis_client
):
    version = publish_document(chain(("first", record("first")), ("second", record("second"))))
    instance_id = start(engine, version)
    assert jobs.run_tool(job_at(engine, "first").id, instance_id) == "applied"
    assert load(engine, instance_id).status == "completed"
    second = job_at(engine, "second")
    assert (second.status, second.attempt, second.lease_until) == ("done", 1, None)
    # Never handed to RQ: it was leased, called and applied by the delivery of `first`.
    assert not RQJob.exists(rq_job_id(second.id, 0), connection=redis_client)
    assert not RQJob.exists(rq_job_id(second.id, 1), connection=redis_client)
    [call] = tools_for_tests.seen(redis_client, "second")
    assert (call["attempt"], call["key"]) == (1, second.key)
    taken = history(engine, instance_id)
    assert taken.count(("tool_attempt", "second")) == 1
    assert taken.count(("left", "second")) == 1


@pytest.fixture
def new_worker(monkeypatch):
    """A worker that has called no tool yet, so it knows none of them to be quick."""
    monkeypatch.setattr(jobs, "_call_seconds", {})


@pytest.mark.usefixtures("new_worker")
def test_parallel_tools_go_to_the_queue_when_it_is_empty_and_stay_when_it_has_a_backlog(
    engine, test_tools, redis_client
):
    version = publish_document(split_after_pre(sleep="0.05"))
    queue = engine_queue()
    idle = start(engine, version)
    redis_client.delete(queue.key)  # nothing waits: another worker may be free for `b`
    assert jobs.run_tool(job_at(engine, "pre").id, idle) == "applied"
    engine.rollback()
    branches = engine.scalars(
        select(Job).where(Job.instance_id == idle, Job.node_id.in_(("a", "b"))).order_by(Job.id)
    ).all()
    ran, sent = sorted(branches, key=lambda job: job.status)  # "done" sorts before "pending"
    assert (ran.status, ran.attempt, sent.status, sent.attempt) == ("done", 1, "pending", 0)
    assert queue.get_job_ids() == [rq_job_id(sent.id, 0)]
    assert load(engine, idle).status == "running"

    busy = start(engine, version)  # its delivery waits in the queue: a backlog
    assert queue.count == 2
    pre = engine.scalar(select(Job.id).where(Job.instance_id == busy, Job.node_id == "pre"))
    assert jobs.run_tool(pre, busy) == "applied"
    assert load(engine, busy).status == "completed"
    engine.rollback()
    statuses = engine.scalars(select(Job.status).where(Job.instance_id == busy)).all()
    assert statuses == ["done", "done", "done"]
    assert queue.count == 2, "a and b of the second instance ran here, neither was enqueued"


@pytest.mark.usefixtures("new_worker")
def test_quick_parallel_tools_stay_in_the_worker_even_when_the_queue_is_empty(
    engine, test_tools, redis_client
):
    """A hand-over through RQ costs more than waiting for a quick call: once this worker has seen
    a branch's tool answer quickly, it runs the branches itself, one after the other."""
    version = publish_document(split_after_pre())
    queue = engine_queue()
    first = start(engine, version)
    redis_client.delete(queue.key)
    assert jobs.run_tool(job_at(engine, "pre").id, first) == "applied"
    assert queue.count == 1, "the other branch was not called here yet: it goes to the queue"
    engine.rollback()
    sent = engine.scalar(select(Job.id).where(Job.instance_id == first, Job.status == "pending"))
    assert jobs.run_tool(sent, first) == "applied"  # its delivery came to this worker after all
    assert load(engine, first).status == "completed"

    second = start(engine, version)
    redis_client.delete(queue.key)
    pre = engine.scalar(select(Job.id).where(Job.instance_id == second, Job.node_id == "pre"))
    assert jobs.run_tool(pre, second) == "applied"
    assert load(engine, second).status == "completed", "both branches ran here"
    assert queue.count == 0
    applied = engine.scalars(
        select(Job.updated_at).where(Job.instance_id == second, Job.node_id.in_(("a", "b")))
    ).all()
    assert len(set(applied)) == 1, "leased together, called one after the other, one step"

    slower = publish_document(split_after_pre(sleep="0.05"))  # the same nodes, now slow
    for expected in (0, 1):
        instance_id = start(engine, slower)
        redis_client.delete(queue.key)
        pre = engine.scalar(
            select(Job.id).where(Job.instance_id == instance_id, Job.node_id == "pre")
        )
        assert jobs.run_tool(pre, instance_id) == "applied"
        # Kept while its calls were quick; once one was slow, the other branch goes to the queue.
        assert queue.count == expected


def test_a_job_is_leased_only_when_due_pending_and_free(engine, test_tools):
    version = publish_document(chain(("call", record("x", sleep="0"))))
    start(engine, version)
    job = job_at(engine, "call")
    now = utcnow()
    first = steps.lease_tool_job(engine, job.id, job.timeout, lease_grace=1, now=now)
    engine.commit()
    assert (first.attempt, first.key, first.inputs) == (1, job.key, {"name": "x", "sleep": 0})
    held = now + timedelta(seconds=job.timeout)
    assert steps.lease_tool_job(engine, job.id, job.timeout, lease_grace=1, now=held) is None
    assert steps.claim_tool_job(engine, job.id, lease_grace=1, now=held) is None
    engine.rollback()
    # The sweep leaves it to its holder until the lease runs out.
    assert sweep(engine, engine_queue(), ENTRY_POINTS, grace=0, now=held).enqueued == 0
    expired = now + timedelta(seconds=job.timeout + 1.5)
    again = steps.lease_tool_job(engine, job.id, job.timeout, lease_grace=1, now=expired)
    engine.rollback()
    assert (again.attempt, again.key) == (2, first.key)
    engine.execute(Job.__table__.update().values(status="cancelled"))
    engine.commit()
    assert steps.lease_tool_job(engine, job.id, job.timeout, lease_grace=1, now=expired) is None
    engine.rollback()


def test_a_worker_killed_during_a_follow_on_call_is_recovered_with_the_same_key(
    engine, workers, test_tools, redis_client
):
    second = record("second", {"timeout": 2, "saveTo": "out"}, block_first="30")
    doc = chain(("first", record("first")), ("second", second))
    version = publish_document(doc)
    instance_id = start(engine, version)
    first_worker = workers.start(1)[0]
    try:
        wait_for(lambda: redis_client.llen("fdtest:started:second") >= 1, what="the second tool")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{workers.logs()}") from None
    [before] = tools_for_tests.seen(redis_client, "first")
    [killed] = tools_for_tests.seen(redis_client, "second")
    assert killed["pid"] == before["pid"], "the second tool followed on in the same worker"
    workers.kill(first_worker)
    # What the killed worker did before the call was committed: the first step, and the
    # second job's lease (taken in that same transaction).
    assert history(engine, instance_id).count(("left", "first")) == 1
    leased = job_at(engine, "second")
    assert (leased.status, leased.attempt, leased.lease_until is not None) == ("pending", 1, True)
    assert not RQJob.exists(rq_job_id(leased.id, 0), connection=redis_client), "never enqueued"
    workers.start(1)
    wait_for(lambda: load(engine, instance_id).status == "completed", what="recovery", timeout=40)
    calls = tools_for_tests.seen(redis_client, "second")
    assert [c["attempt"] for c in calls] == [1, 2]
    assert calls[0]["key"] == calls[1]["key"]
    assert calls[1]["pid"] != killed["pid"]
    taken = history(engine, instance_id)
    assert taken.count(("tool_attempt", "second")) == 1
    assert taken.count(("left", "second")) == 1
    assert load(engine, instance_id).vars == {"out": {"calls": 2}}


def test_a_long_delivery_hands_its_follow_ons_to_the_queue_when_others_wait(
    engine, test_tools, redis_client
):
    """Past FOLLOW_ON_SECONDS a delivery stops following on while deliveries wait in the queue
    (a timer, another instance's tool), and keeps going while nothing waits."""
    slow = [(n, record(n, sleep="0.3")) for n in ("one", "two", "three")]
    version = publish_document(chain(*slow))
    queue = engine_queue()
    alone = start(engine, version)
    redis_client.delete(queue.key)
    assert jobs.run_tool(job_at(engine, "one").id, alone) == "applied"
    assert load(engine, alone).status == "completed", "nothing waited: all three ran here"

    crowded = start(engine, version)  # its own delivery waits in the queue
    first = engine.scalar(select(Job.id).where(Job.instance_id == crowded, Job.node_id == "one"))
    assert jobs.run_tool(first, crowded) == "applied"
    engine.rollback()
    two = engine.scalar(select(Job).where(Job.instance_id == crowded, Job.node_id == "two"))
    assert (two.status, two.attempt) == ("pending", 0)
    assert queue.get_job_ids()[-1] == rq_job_id(two.id, 0)


def _pure(**config) -> dict:
    return node("serviceTask", tool="noop", inputs={"n": "1"}, **config)


def test_pure_tools_a_worker_step_makes_due_run_in_that_same_transaction(
    engine, test_tools, redis_client
):
    """tool -> noop -> split -> noop, noop -> join -> end: the delivery of the tool applies its
    outcome and runs the three pure calls, each with its job and history as before, all in the
    transaction of that one step (one `now`), with nothing handed to RQ."""
    nodes = {
        "start": node("startEvent"),
        "first": record("first"),
        "p1": _pure(),
        "split": node("parallelGateway"),
        "p2": _pure(),
        "p3": _pure(saveTo="three"),
        "join": node("parallelGateway"),
        "end": node("endEvent"),
    }
    pairs = (
        ("start", "first"),
        ("first", "p1"),
        ("p1", "split"),
        ("split", "p2"),
        ("split", "p3"),
        ("p2", "join"),
        ("p3", "join"),
        ("join", "end"),
    )
    version = publish_document(wired(nodes, *pairs))
    instance_id = start(engine, version)
    queue = engine_queue()
    redis_client.delete(queue.key)
    assert jobs.run_tool(job_at(engine, "first").id, instance_id) == "applied"
    instance = load(engine, instance_id)
    assert instance.status == "completed"
    assert instance.vars == {"three": {"n": 1}}
    pure_jobs = engine.scalars(
        select(Job).where(Job.instance_id == instance_id, Job.tool == "noop").order_by(Job.id)
    ).all()
    assert sorted((j.node_id, j.status, j.attempt) for j in pure_jobs) == [
        ("p1", "done", 1),
        ("p2", "done", 1),
        ("p3", "done", 1),
    ]
    assert len({j.updated_at for j in pure_jobs}) == 1, "one transaction: one step time"
    assert queue.count == 0
    taken = history(engine, instance_id)
    for node_id in ("p1", "p2", "p3"):
        assert taken.count(("tool_attempt", node_id)) == 1
        assert taken.count(("left", node_id)) == 1
    assert taken[-1] == ("completed", None)


def test_a_job_ended_by_a_later_pure_call_of_the_same_transaction_is_cancelled(
    engine, test_tools, redis_client
):
    """split -> (noop -> noop -> terminate end) and (noop -> a tool with side effects -> end):
    the tool's job is written by the first wave of pure calls, and the terminate end, reached by
    the second wave in the same transaction, ends its branch; no job is left pending for the
    sweep to deliver."""
    nodes = {
        "start": node("startEvent"),
        "first": record("first"),
        "split": node("parallelGateway"),
        "quick": _pure(),
        "quicker": _pure(),
        "stop": node("endEvent", event="terminate"),
        "other": _pure(),
        "late": record("late"),
        "end": node("endEvent"),
    }
    pairs = (
        ("start", "first"),
        ("first", "split"),
        ("split", "quick"),
        ("quick", "quicker"),
        ("quicker", "stop"),
        ("split", "other"),
        ("other", "late"),
        ("late", "end"),
    )
    version = publish_document(wired(nodes, *pairs))
    instance_id = start(engine, version)
    redis_client.delete(engine_queue().key)
    assert jobs.run_tool(job_at(engine, "first").id, instance_id) == "applied"
    assert load(engine, instance_id).status == "completed"
    engine.rollback()
    left = engine.scalars(
        select(Job.node_id).where(Job.instance_id == instance_id, Job.status == "pending")
    ).all()
    assert left == []
    assert tools_for_tests.seen(redis_client, "late") == [], "the ended branch called nothing"
    late = engine.scalar(select(Job).where(Job.instance_id == instance_id, Job.node_id == "late"))
    assert (late.status, late.attempt) == ("cancelled", 0)


def test_outcomes_applied_in_one_step_follow_in_order_and_an_earlier_one_can_end_a_branch(
    engine, test_tools
):
    """Two leased calls of parallel branches inside a sub-process, applied together: the first
    throws the error the sub-process's boundary catches, which ends the second branch, so the
    second outcome is dropped as it would be in a step of its own."""
    nodes = {
        "start": node("startEvent"),
        "sub": node("subProcess"),
        "sub_start": {**node("startEvent"), "parent": "sub"},
        "split": {**node("parallelGateway"), "parent": "sub"},
        "a": {**record("a"), "parent": "sub"},
        "b": {**record("b"), "parent": "sub"},
        "join": {**node("parallelGateway"), "parent": "sub"},
        "sub_end": {**node("endEvent"), "parent": "sub"},
        "caught": node("boundaryEvent", attachedTo="sub", event="error", code="E1"),
        "caught_end": node("endEvent"),
        "end": node("endEvent"),
    }
    pairs = (
        ("start", "sub"),
        ("sub", "end"),
        ("sub_start", "split"),
        ("split", "a"),
        ("split", "b"),
        ("a", "join"),
        ("b", "join"),
        ("join", "sub_end"),
        ("caught", "caught_end"),
    )
    instance_id = start(engine, publish_document(wired(nodes, *pairs)))
    a, b = job_at(engine, "a"), job_at(engine, "b")
    for job in (a, b):
        assert steps.lease_tool_job(engine, job.id, job.timeout, lease_grace=1) is not None
    engine.commit()
    thrown = Outcome(False, code="E1", message="refused", bpmn_error=True)
    result = steps.apply_tool_outcomes(
        engine, instance_id, [(a.id, thrown, 1), (b.id, Outcome(True, output={"x": 1}), 1)]
    )
    engine.commit()
    assert result.applied and result.instance.status == "completed"
    taken = history(engine, instance_id)
    assert ("entered", "caught_end") in taken
    assert ("left", "b") not in taken
    assert job_at(engine, "b").status == "cancelled"
    assert load(engine, instance_id).vars == {}


def test_a_tool_delivery_carries_its_timeout_so_the_worker_leases_it_in_one_statement(
    engine, test_tools, redis_client
):
    version = publish_document(chain(("only", record("only", {"timeout": 7}))))
    instance_id = start(engine, version)
    job = job_at(engine, "only")
    delivery = RQJob.fetch(rq_job_id(job.id, 0), connection=redis_client)
    assert delivery.args == (job.id, instance_id, 7.0)
    assert jobs.run_tool(*delivery.args) == "applied"
    assert (job_at(engine, "only").status, job_at(engine, "only").attempt) == ("done", 1)
    assert load(engine, instance_id).status == "completed"
    # A second delivery of the same job (a stray duplicate) finds nothing to lease.
    assert jobs.run_tool(*delivery.args) == "not claimed"
