"""Concurrency and recovery in-process: simultaneous joins, cancel during a tool call, the sweep."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from rq.job import Job as RQJob
from rq.registry import ScheduledJobRegistry
from sqlalchemy import select

from tests.engine import tools_for_tests
from tests.helpers.documents import chain, node, parallel_join
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from webapp.engine import steps
from webapp.engine.calls import Outcome
from webapp.engine.dispatch import JobRef, enqueue, rq_job_id
from webapp.engine.sweep import sweep
from webapp.extensions import db
from webapp.models import HistoryEntry, Job, Token
from webapp.models.base import utcnow
from webapp.services.jobs import ENTRY_POINTS, commit, engine_queue


def _join_document():
    return parallel_join(
        node("serviceTask", tool="test.record", inputs={"name": "'a'"}),
        node("serviceTask", tool="test.record", inputs={"name": "'b'"}),
    )


def test_a_join_reached_by_two_steps_at_once_continues_exactly_once(app, engine, test_tools):
    version = publish_document(_join_document())
    instances = [start(engine, version) for _ in range(6)]
    claims = []
    for instance_id in instances:
        for job_id in engine.scalars(select(Job.id).where(Job.instance_id == instance_id)):
            call = steps.claim_tool_job(engine, job_id, lease_grace=5)
            engine.commit()
            claims.append((job_id, instance_id, call.attempt))
    gate = threading.Barrier(len(claims))
    errors = []

    def apply(job_id: int, instance_id: int, attempt: int) -> None:
        with app.app_context():
            try:
                gate.wait()
                result = steps.apply_tool_outcome(
                    db.session, job_id, instance_id, Outcome(True, {"ok": 1}), attempt=attempt
                )
                db.session.commit()
                assert result.applied
            except Exception as error:  # reported below
                errors.append(error)
            finally:
                db.session.remove()

    threads = [threading.Thread(target=apply, args=claim) for claim in claims]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    for instance_id in instances:
        steps_taken = history(engine, instance_id)
        assert steps_taken.count(("entered", "join")) == 2
        assert steps_taken.count(("left", "join")) == 1
        assert steps_taken.count(("entered", "after")) == 1
        after_jobs = engine.scalars(
            select(Job).where(Job.instance_id == instance_id, Job.node_id == "after")
        ).all()
        assert len(after_jobs) == 1


def test_cancel_during_a_tool_call_drops_its_result(engine, test_tools):
    version = publish_document(
        chain(
            ("call", node("serviceTask", tool="test.record", inputs={"name": "'c'"}, saveTo="out"))
        )
    )
    instance_id = start(engine, version)
    job_id = engine.scalar(select(Job.id))
    call = steps.claim_tool_job(engine, job_id, lease_grace=5)
    engine.commit()
    assert (call.attempt, call.inputs) == (1, {"name": "c"})
    commit(steps.cancel_instance(engine, instance_id, reason="stop"))
    result = steps.apply_tool_outcome(
        engine, job_id, instance_id, Outcome(True, {"late": True}), attempt=call.attempt
    )
    commit(result)
    assert result.applied is False
    instance = load(engine, instance_id)
    assert (instance.status, instance.nodes, instance.vars) == ("cancelled", {}, {})
    discarded = engine.scalar(select(HistoryEntry).where(HistoryEntry.kind == "tool_attempt"))
    assert (discarded.node_id, discarded.details) == ("call", {"attempt": 1, "status": "discarded"})
    assert steps.claim_tool_job(engine, job_id, lease_grace=5) is None
    engine.rollback()


def test_a_leased_job_is_not_claimed_twice_until_the_lease_expires(engine, test_tools):
    version = publish_document(
        chain(("call", node("serviceTask", tool="test.record", inputs={"name": "'x'"}, timeout=2)))
    )
    start(engine, version)
    job_id = engine.scalar(select(Job.id))
    now = utcnow()
    first = steps.claim_tool_job(engine, job_id, lease_grace=1, now=now)
    assert first.attempt == 1
    engine.commit()
    assert (
        steps.claim_tool_job(engine, job_id, lease_grace=1, now=now + timedelta(seconds=2)) is None
    )
    engine.commit()
    later = now + timedelta(seconds=3.1)
    again = steps.claim_tool_job(engine, job_id, lease_grace=1, now=later)
    engine.commit()
    # A tool sees the same idempotency key on every attempt, so a retry can detect a repeat.
    token = engine.scalar(select(Token).where(Token.node_id == "call"))
    assert (again.attempt, again.key) == (2, first.key)
    assert first.key == f"{token.id}:call:{token.step}"


def _states(queue, ids):
    return {
        i: (
            RQJob.fetch(i, connection=queue.connection).get_status()
            if RQJob.exists(i, connection=queue.connection)
            else None
        )
        for i in ids
    }


def test_the_sweep_enqueues_lost_expired_and_late_jobs_once(engine, test_tools):
    lost_version = publish_document(chain(("a", node("serviceTask", tool="noop"))), key="lost")
    leased_version = publish_document(
        chain(("b", node("serviceTask", tool="test.record", inputs={"name": "'s'"}, timeout=1))),
        key="leased",
    )
    timer_version = publish_document(chain(("t", node("timerCatch", duration="PT1H"))), key="t")
    queue = engine_queue()
    lost = steps.start_instance(engine, lost_version)  # committed, never enqueued: Redis "down"
    engine.commit()
    leased = steps.start_instance(engine, leased_version)
    engine.commit()
    timer = steps.start_instance(engine, timer_version)
    commit(timer)  # waits in the database for an hour; nothing in RQ
    lost_job, leased_job, timer_job = lost.jobs[0], leased.jobs[0], timer.jobs[0]
    assert _states(queue, [timer_job.rq_id]) == {timer_job.rq_id: None}

    past = utcnow() - timedelta(seconds=30)
    engine.execute(Job.__table__.update().where(Job.id == leased_job.id).values(due_at=past))
    engine.commit()
    assert steps.claim_tool_job(engine, leased_job.id, lease_grace=1, now=past).attempt == 1
    engine.commit()  # a worker took it 30 s ago and died: the 2 s lease ran out
    assert (
        sweep(engine, queue, ENTRY_POINTS, grace=60).enqueued == 0
    )  # everything is younger than the grace

    report = sweep(engine, queue, ENTRY_POINTS, grace=0)
    assert (report.examined, report.enqueued) == (2, 2)
    relisted = {rq_job_id(lost_job.id, 0), rq_job_id(leased_job.id, 1)}
    assert set(_states(queue, relisted).values()) == {"queued"}
    assert sweep(engine, queue, ENTRY_POINTS, grace=0).enqueued == 0  # already queued: not again

    # An earlier version scheduled timers in RQ, where no scheduler moves them now: run it now.
    queue.enqueue_at(
        past,
        ENTRY_POINTS["timer"],
        args=(timer_job.id, timer_job.instance_id),
        job_id=timer_job.rq_id,
    )
    assert _states(queue, [timer_job.rq_id]) == {timer_job.rq_id: "scheduled"}
    engine.execute(
        Job.__table__.update().where(Job.id == timer_job.id).values(due_at=past, wake_at=None)
    )
    engine.commit()
    assert sweep(engine, queue, ENTRY_POINTS, grace=0).enqueued == 1
    assert _states(queue, [timer_job.rq_id]) == {timer_job.rq_id: "queued"}
    registry = ScheduledJobRegistry(queue=queue)
    assert timer_job.rq_id not in registry.get_job_ids()


def test_a_started_delivery_is_left_alone_unless_it_is_stale(engine):
    version = publish_document(chain(("a", node("serviceTask", tool="noop", timeout=1))))
    result = steps.start_instance(engine, version)
    engine.commit()
    queue = engine_queue()
    ref = result.jobs[0]
    assert enqueue(queue, [ref], ENTRY_POINTS)
    key = RQJob.key_for(ref.rq_id)
    queue.connection.hset(key, mapping={"status": "started", "started_at": _rq_time(utcnow())})
    assert sweep(engine, queue, ENTRY_POINTS, grace=0).enqueued == 0
    stale = utcnow() - timedelta(seconds=5)
    queue.connection.hset(key, mapping={"started_at": _rq_time(stale)})
    assert sweep(engine, queue, ENTRY_POINTS, grace=0).enqueued == 1


def test_a_tool_job_started_but_never_leased_is_sent_again_after_the_grace(engine, test_tools):
    """A worker killed after RQ marked the job started but before it leased the row: nothing
    runs it, however long the tool's timeout."""
    version = publish_document(
        chain(
            ("call", node("serviceTask", tool="test.record", inputs={"name": "'t'"}, timeout=600))
        )
    )
    result = steps.start_instance(engine, version)
    ref = result.jobs[0]
    past = utcnow() - timedelta(seconds=30)
    engine.execute(Job.__table__.update().where(Job.id == ref.id).values(due_at=past))
    engine.commit()
    queue = engine_queue()
    assert enqueue(queue, [ref], ENTRY_POINTS)
    assert queue.connection.lpop(queue.key) == ref.rq_id.encode()
    key = RQJob.key_for(ref.rq_id)
    queue.connection.hset(key, mapping={"status": "started", "started_at": _rq_time(utcnow())})
    assert (
        sweep(engine, queue, ENTRY_POINTS, grace=2).enqueued == 0
    )  # its worker may be about to lease it
    began = _rq_time(utcnow() - timedelta(seconds=3))
    queue.connection.hset(key, mapping={"started_at": began})
    assert sweep(engine, queue, ENTRY_POINTS, grace=2).enqueued == 1


def _rq_time(value) -> str:
    from rq.utils import utcformat

    return utcformat(value.replace(tzinfo=None))


def test_enqueue_without_redis_is_logged_not_raised_and_does_not_wait(app_config, tmp_path):
    from webapp import create_app

    ref = JobRef(1, 1, "inline", utcnow(), 0)
    assert enqueue(None, [ref], ENTRY_POINTS) is False
    down = create_app(dict(app_config, REDIS_URL=f"unix://{tmp_path}/nothing-here.sock"))
    with down.app_context():
        began = time.monotonic()
        assert enqueue(engine_queue(), [ref], ENTRY_POINTS) is False
        assert time.monotonic() - began < 1


def _noop_jobs(engine, count: int) -> list[JobRef]:
    """`count` due noop jobs, each enqueued in RQ (one instance each)."""
    version = publish_document(chain(("a", node("serviceTask", tool="noop"))))
    refs = []
    for _ in range(count):
        result = steps.start_instance(engine, version)
        engine.commit()
        refs.append(result.jobs[0])
    assert enqueue(engine_queue(), refs, ENTRY_POINTS)
    return refs


def _take(queue, ref: JobRef) -> None:
    """What RQ's worker does first when it takes a job: the id moves to the intermediate list."""
    queue.connection.lrem(queue.key, 0, ref.rq_id)
    queue.connection.rpush(queue.intermediate_queue_key, ref.rq_id)


def _listed(queue, key: str) -> list[str]:
    return [item.decode() for item in queue.connection.lrange(key, 0, -1)]


def test_the_sweep_sends_again_a_queued_job_that_left_the_queue_list_but_never_started(engine):
    backlog, stranded, vanished, deferred = _noop_jobs(engine, 4)
    queue = engine_queue()
    _take(queue, stranded)  # a worker took it and was killed before marking it started
    queue.connection.lrem(queue.key, 0, vanished.rq_id)  # e.g. taken with LPOP (Redis < 6.2)
    queue.connection.lrem(queue.key, 0, deferred.rq_id)
    queue.connection.hset(RQJob.key_for(deferred.rq_id), "status", "deferred")
    assert _listed(queue, queue.key) == [backlog.rq_id]

    report = sweep(engine, queue, ENTRY_POINTS, grace=0, handover=0)
    assert (report.examined, report.enqueued) == (4, 3)
    assert sorted(_listed(queue, queue.key)) == sorted(
        [backlog.rq_id, stranded.rq_id, vanished.rq_id, deferred.rq_id]
    )  # the backlog job was not queued a second time
    assert _listed(queue, queue.intermediate_queue_key) == []
    assert set(_states(queue, [stranded.rq_id, deferred.rq_id]).values()) == {"queued"}
    assert sweep(engine, queue, ENTRY_POINTS, grace=0, handover=0).enqueued == 0


def test_a_job_a_live_worker_is_taking_is_not_sent_again(engine):
    """Between taking the id and marking the job started a live worker needs milliseconds: the
    sweep looks again before it sends a second delivery."""
    (ref,) = _noop_jobs(engine, 1)
    queue = engine_queue()
    _take(queue, ref)

    def start_it() -> None:
        time.sleep(0.2)
        queue.connection.hset(RQJob.key_for(ref.rq_id), "status", "started")
        queue.connection.lrem(queue.intermediate_queue_key, 0, ref.rq_id)

    worker = threading.Thread(target=start_it)
    worker.start()
    report = sweep(engine, queue, ENTRY_POINTS, grace=0, handover=2)
    worker.join()
    assert report.enqueued == 0
    assert _listed(queue, queue.key) == []


def test_a_queue_list_too_long_to_read_leaves_only_the_intermediate_list_to_check(
    engine, monkeypatch
):
    from webapp.engine import sweep as sweep_module

    monkeypatch.setattr(sweep_module, "QUEUE_READ_LIMIT", 2)
    first, second, third, stranded, vanished = _noop_jobs(engine, 5)
    queue = engine_queue()
    _take(queue, stranded)
    queue.connection.lrem(queue.key, 0, vanished.rq_id)
    assert sweep(engine, queue, ENTRY_POINTS, grace=0, handover=0).enqueued == 1
    assert _listed(queue, queue.key) == [r.rq_id for r in (first, second, third, stranded)]


def test_a_second_delivery_of_any_kind_of_job_is_dropped(engine, test_tools, redis_client):
    """What makes the sweep's extra deliveries harmless: each entry point checks the job is
    still pending for its token, so the second delivery of a tool, pure tool or timer does
    nothing."""
    from webapp.services import jobs

    version = publish_document(
        chain(
            ("call", node("serviceTask", tool="test.record", inputs={"name": "'once'"})),
            ("pure", node("serviceTask", tool="noop")),
            ("wait", node("timerCatch", duration="PT0S")),
        )
    )
    instance_id = start(engine, version)

    def job(node_id: str) -> int:
        engine.rollback()
        return engine.scalar(select(Job.id).where(Job.node_id == node_id))

    assert jobs.run_tool(job("call"), instance_id) == "applied"  # the pure tool follows on
    assert jobs.run_tool(job("call"), instance_id) == "not claimed"
    assert jobs.run_inline_tool(job("pure"), instance_id) == "job no longer pending"
    assert jobs.fire_timer(job("wait"), instance_id) == "applied"
    assert jobs.fire_timer(job("wait"), instance_id) == "job no longer pending"
    assert load(engine, instance_id).status == "completed"
    taken = history(engine, instance_id)
    assert [taken.count(("left", n)) for n in ("call", "pure", "wait")] == [1, 1, 1]
    assert len(tools_for_tests.seen(redis_client, "once")) == 1


# The RQ function names an earlier version stored (engine/dispatch.py named them as text).
EARLIER_FUNCTION_NAMES = {
    "tool": "webapp.services.jobs.run_tool",
    "inline": "webapp.services.jobs.run_inline_tool",
    "timer": "webapp.services.jobs.fire_timer",
    "call": "webapp.services.jobs.start_called",
    "resume": "webapp.services.jobs.resume_from_child",
    "cancel": "webapp.services.jobs.cancel_called",
    "signal": "webapp.services.signals.plan_broadcast",
    "signal_batch": "webapp.services.signals.run_batch",
}


def test_every_kind_of_delivery_is_queued_under_the_function_name_earlier_versions_use(engine):
    """Deliveries queued before an upgrade find their function, and an older worker still running
    during a rolling restart runs the deliveries a newer process queues."""
    queue = engine_queue()
    refs = [
        JobRef(900 + number, 1, kind, utcnow(), 1)
        for number, kind in enumerate(EARLIER_FUNCTION_NAMES)
    ]
    assert enqueue(queue, refs, ENTRY_POINTS)
    queued = {ref.entry: RQJob.fetch(ref.rq_id, connection=queue.connection) for ref in refs}
    assert {kind: job.func_name for kind, job in queued.items()} == EARLIER_FUNCTION_NAMES
    assert all(callable(job.func) for job in queued.values())
    queue.empty()
