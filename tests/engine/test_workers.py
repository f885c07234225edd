"""Real worker processes (`python worker.py`) running instances: joins, crashes, retries, timers."""

from __future__ import annotations

import time

from sqlalchemy import select

from tests.engine import tools_for_tests
from tests.helpers.documents import chain, node, parallel_join, sample_document
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import run_burst, wait_for
from webapp.engine import steps
from webapp.models import HistoryEntry, Job
from webapp.services.jobs import commit


def _status(engine, instance_id: int) -> str:
    return load(engine, instance_id).status


def test_the_sample_process_completes_with_a_burst_worker(engine, app_config):
    version = publish_document(sample_document())
    instances = [start(engine, version, input={"amount": 150 * n}) for n in range(3)]
    run_burst(app_config)
    for instance_id in instances:
        assert _status(engine, instance_id) == "completed"
        assert history(engine, instance_id).count(("left", "join")) <= 1
    assert ("entered", "small") in history(engine, instances[0])
    assert history(engine, instances[2]).count(("left", "join")) == 1


def test_a_starting_worker_takes_over_jobs_that_were_never_delivered(engine, app_config):
    """A process that stopped right after committing (seed-demo, a crashed web worker) leaves
    job rows without an RQ delivery; the next worker to start runs them at once."""
    version = publish_document(sample_document())
    result = steps.start_instance(engine, version, input={"amount": 500})
    engine.commit()  # committed, never enqueued
    run_burst(app_config, SWEEP_GRACE=600)  # later sweeps would wait; the first one does not
    assert _status(engine, result.instance.id) == "completed"


def _barrier_join():
    def barrier() -> dict:
        inputs = {"name": "$input.id", "parties": "2"}
        return node("serviceTask", tool="test.barrier", inputs=inputs)

    return parallel_join(barrier(), barrier())


def test_a_join_reached_by_two_workers_at_once_continues_exactly_once(engine, workers, test_tools):
    version = publish_document(_barrier_join())
    instances = [start(engine, version, input={"id": f"join-{n}"}) for n in range(4)]
    workers.start(2)
    for instance_id in instances:
        wait_for(lambda i=instance_id: _status(engine, i) == "completed", what="completion")
    for instance_id in instances:
        steps_taken = history(engine, instance_id)
        assert steps_taken.count(("entered", "join")) == 2
        assert steps_taken.count(("left", "join")) == 1
        assert steps_taken.count(("entered", "after")) == 1
        assert steps_taken.count(("completed", None)) == 1


def test_a_worker_killed_during_a_tool_call_is_recovered_by_the_sweep(
    engine, workers, test_tools, redis_client
):
    doc = chain(
        (
            "call",
            node(
                "serviceTask",
                tool="test.record",
                timeout=2,
                saveTo="out",
                inputs={"name": "'kill'", "block_first": "30"},
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    first = workers.start(1)[0]
    try:
        wait_for(lambda: redis_client.llen("fdtest:started:kill") >= 1, what="the tool to start")
    except AssertionError as error:  # twice in loaded CI runs: keep what the worker said
        jobs = engine.execute(
            select(Job.id, Job.instance_id, Job.status, Job.attempt, Job.lease_until, Job.due_at)
        ).all()
        engine.rollback()
        found = f"jobs: {jobs}\nhistory: {history(engine, instance_id)}"
        raise AssertionError(f"{error}\n{found}\n{workers.logs()}") from None
    workers.kill(first)
    workers.start(1)
    wait_for(lambda: _status(engine, instance_id) == "completed", what="recovery", timeout=40)
    seen = tools_for_tests.seen(redis_client, "kill")
    assert len(seen) == 2
    assert seen[0]["key"] == seen[1]["key"]
    assert [entry["attempt"] for entry in seen] == [1, 2]
    assert seen[0]["pid"] != seen[1]["pid"]
    steps_taken = history(engine, instance_id)
    assert steps_taken.count(("entered", "call")) == 1
    assert steps_taken.count(("left", "call")) == 1
    assert steps_taken.count(("tool_attempt", "call")) == 1
    assert load(engine, instance_id).vars == {"out": {"calls": 2}}


def test_cancel_during_a_tool_call_in_a_worker_drops_the_result(
    engine, workers, test_tools, redis_client
):
    doc = chain(
        (
            "call",
            node(
                "serviceTask",
                tool="test.record",
                saveTo="out",
                inputs={"name": "'slow'", "sleep": "1"},
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    workers.start(1)
    wait_for(lambda: redis_client.llen("fdtest:started:slow") >= 1, what="the tool to start")
    commit(steps.cancel_instance(engine, instance_id, reason="changed my mind"))

    def discarded():
        engine.rollback()
        return engine.scalar(select(HistoryEntry).where(HistoryEntry.kind == "tool_attempt"))

    entry = wait_for(discarded, what="the late result")
    assert entry.details["status"] == "discarded"
    instance = load(engine, instance_id)
    assert (instance.status, instance.vars, instance.nodes) == ("cancelled", {}, {})


def test_a_failing_tool_backs_off_fails_the_instance_and_retry_completes_it(
    engine, workers, test_tools, redis_client
):
    doc = chain(
        (
            "call",
            node(
                "serviceTask",
                tool="test.flaky",
                retries=2,
                backoff=0.3,
                inputs={"name": "'flaky'", "fail_times": "3"},
            ),
        )
    )
    version = publish_document(doc)
    instance_id = start(engine, version)
    workers.start(1)
    wait_for(lambda: _status(engine, instance_id) == "failed", what="the incident")
    times = [float(t) for t in redis_client.lrange("fdtest:flaky-times:flaky", 0, -1)]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.3 and times[2] - times[1] >= 0.6, times
    error = load(engine, instance_id).error
    assert (error["code"], error["node"], error["message"]) == ("flaky", "call", "failure number 3")

    commit(steps.retry_instance(engine, instance_id))
    wait_for(lambda: _status(engine, instance_id) == "completed", what="the retry")
    attempts = engine.scalars(
        select(HistoryEntry.details)
        .where(HistoryEntry.kind == "tool_attempt")
        .order_by(HistoryEntry.id)
    ).all()
    assert [(a["attempt"], a["status"]) for a in attempts] == [
        (1, "error"),
        (2, "error"),
        (3, "error"),
        (1, "ok"),
    ]


def test_a_timer_fires_in_a_worker(engine, workers):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))))
    began = time.monotonic()
    instance_id = start(engine, version)
    workers.start(1)
    wait_for(lambda: _status(engine, instance_id) == "completed", what="the timer")
    assert time.monotonic() - began >= 1
    assert ("timer", "wait") in history(engine, instance_id)


def test_redis_down_while_starting_then_the_job_runs_when_it_is_back(app_config, tmp_path, engine):
    from webapp import create_app
    from webapp.extensions import db
    from webapp.infra.redis_server import EmbeddedRedis

    version = publish_document(chain(("a", node("serviceTask", tool="noop", saveTo="a"))))
    version_id = version.id
    server = EmbeddedRedis(tmp_path / "redis")
    server.ensure_running()
    down = create_app(dict(app_config, REDIS_URL=server.url))
    server.stop()
    try:
        with down.app_context():
            from webapp.models import ProcessVersion

            began = time.monotonic()
            result = steps.start_instance(db.session, db.session.get(ProcessVersion, version_id))
            commit(result)
            assert time.monotonic() - began < 2
            instance_id = result.instance.id
            db.session.remove()
        assert _status(engine, instance_id) == "running"
        assert engine.scalar(select(Job.status)) == "pending"
        server.ensure_running()
        run_burst(dict(app_config, REDIS_URL=server.url), SWEEP_GRACE=0)
        assert _status(engine, instance_id) == "completed"
    finally:
        server.stop()


def test_one_step_that_makes_a_timer_and_a_tool_due_delivers_both_on_time(
    engine, workers, test_tools, redis_client
):
    """A parallel split starting a timer and a tool in one step: both reach RQ in one enqueue,
    so the tool runs at once and the timer on time, with no help from the sweep."""
    from rq import Worker

    record = node("serviceTask", tool="test.record", inputs={"name": "'split'"})
    version = publish_document(parallel_join(record, node("timerCatch", duration="PT2S")))
    workers.start(1, SWEEP_GRACE=600)
    wait_for(lambda: Worker.all(connection=redis_client), what="the worker to register")
    began = time.monotonic()
    instance_id = start(engine, version)
    wait_for(lambda: tools_for_tests.seen(redis_client, "split"), what="the tool", timeout=3)
    tool_ran = time.monotonic() - began
    wait_for(lambda: _status(engine, instance_id) == "completed", what="the timer", timeout=6)
    finished = time.monotonic() - began
    assert tool_ran < 1.5, tool_ran
    assert 2 <= finished < 4, finished
    assert "could not enqueue" not in workers.logs()


def test_any_mix_of_immediate_and_delayed_jobs_is_enqueued_in_one_call(app, redis_client):
    """The immediate ones go to the queue; the delayed ones wait in the database for a
    worker's clock, so RQ's scheduler gets nothing."""
    from datetime import timedelta

    from rq import Queue
    from rq.registry import ScheduledJobRegistry

    from webapp.engine.dispatch import JobRef, enqueue
    from webapp.models.base import utcnow
    from webapp.services.jobs import ENTRY_POINTS

    queue = Queue("mix", connection=redis_client)
    now = utcnow()
    later = now + timedelta(seconds=30)
    batches = [
        [JobRef(1, 1, "timer", later, 1, held=True), JobRef(2, 1, "tool", now, 1)],
        [
            JobRef(3, 1, "tool", now, 1),
            JobRef(4, 1, "timer", later, 1, held=True),
            JobRef(5, 1, "tool", now, 1),
        ],
    ]
    for batch in batches:
        assert enqueue(queue, batch, ENTRY_POINTS)
    assert queue.job_ids == ["flowdesk-job-2-1", "flowdesk-job-3-1", "flowdesk-job-5-1"]
    assert ScheduledJobRegistry(queue=queue).get_job_ids() == []
