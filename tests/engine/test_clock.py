"""Jobs due later wait in the database and every worker's clock delivers them: timers, boundary
timers and retries after their backoff fire once with several workers, on time with the sweep
held off (a long SWEEP_GRACE), after a Redis outage, and when a clock died after its claim."""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from redis import Redis
from rq import Worker
from rq.registry import ScheduledJobRegistry
from sqlalchemy import select, update

from tests.engine import tools_for_tests
from tests.helpers.documents import chain, document, flow, node
from tests.helpers.instances import history, load, pending_jobs, start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import clock, steps
from webapp.engine.dispatch import JobRef, enqueue
from webapp.models import Job
from webapp.models.base import utcnow
from webapp.services.jobs import ENTRY_POINTS, commit, engine_queue

# The sweep waits this long before it sends a due job again: only the clocks deliver on time.
NO_SWEEP = {"SWEEP_GRACE": 600}
# A worker process starting, a busy shared machine: the bound on "on time" beyond the due time.
SLACK = 6.0


def _status(engine, instance_id: int) -> str:
    return load(engine, instance_id).status


def _registered(redis_client, count: int) -> None:
    wait_for(
        lambda: len(Worker.all(connection=redis_client)) == count,
        timeout=60,
        what=f"{count} worker(s) to register",
    )


def _deliveries(folder: Path, job_id: int) -> int:
    """How many times RQ ran the delivery of job `job_id` in the workers logging to `folder`."""
    pattern = re.compile(rf"Job OK .*\bjob={job_id}\]|job={job_id}\].*Job OK")
    return sum(
        1
        for path in folder.glob("worker-*.log")
        for line in path.read_text().splitlines()
        if pattern.search(line)
    )


def _timer_then_record() -> dict:
    record = node("serviceTask", tool="test.record", inputs={"name": "'after-timer'"})
    return chain(("wait", node("timerCatch", duration="PT1S")), ("after", record))


def _task_with_boundary_timer() -> dict:
    """A user task nobody works; its interrupting boundary timer fires after a second."""
    late = node("serviceTask", tool="test.record", inputs={"name": "'late'"})
    nodes = {
        "start": node("startEvent"),
        "review": node("userTask", assignee={"type": "user", "value": "alice"}),
        "b": node("boundaryEvent", attachedTo="review", event="timer", duration="PT1S"),
        "late": late,
        "late_end": node("endEvent"),
        "end": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "review"),
        "f2": flow("review", "end"),
        "f3": flow("b", "late"),
        "f4": flow("late", "late_end"),
    }
    return document(nodes, flows)


# --- held in the database -------------------------------------------------------------------


def test_a_job_due_later_waits_in_the_database_not_in_redis(engine, redis_client):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))))
    instance_id = start(engine, version)
    [timer] = pending_jobs(engine, instance_id, "timer")
    assert timer.wake_at == timer.due_at > utcnow() + timedelta(minutes=59)
    queue = engine_queue()
    assert len(queue) == 0 and ScheduledJobRegistry(queue=queue).count == 0
    assert clock.claim_due(engine, utcnow()) == []  # not due: no clock takes it
    engine.commit()

    commit(steps.cancel_instance(engine, instance_id, reason="test"))
    engine.rollback()
    assert engine.scalar(select(Job.wake_at).where(Job.id == timer.id)) is None


def test_jobs_held_for_the_clock_are_left_out_of_an_enqueue(app, redis_client):
    from rq import Queue

    queue = Queue("held", connection=redis_client)
    now = utcnow()
    later = now + timedelta(seconds=30)
    refs = [
        JobRef(1, 1, "timer", later, 0, held=True),
        JobRef(2, 1, "tool", now, 1),
        JobRef(3, 1, "tool", later, 1, held=True),
    ]
    assert enqueue(queue, refs, ENTRY_POINTS)
    assert queue.job_ids == ["flowdesk-job-2-1"]
    assert ScheduledJobRegistry(queue=queue).count == 0


def _due_now(engine, count: int) -> list[int]:
    """`count` waiting timers whose time has come."""
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))))
    instances = [start(engine, version) for _ in range(count)]
    past = utcnow() - timedelta(seconds=1)
    engine.execute(
        update(Job)
        .where(Job.instance_id.in_(instances), Job.kind == "timer")
        .values(due_at=past, wake_at=past)
    )
    engine.commit()
    return list(engine.scalars(select(Job.id).where(Job.instance_id.in_(instances))))


def test_two_clocks_claiming_at_once_never_take_the_same_job(app, engine):
    from webapp.extensions import db

    job_ids = _due_now(engine, 40)
    engine.remove()
    barrier = threading.Barrier(2)
    claimed: list[list[int]] = [[], []]
    errors: list[BaseException] = []

    def one_clock(index: int) -> None:
        try:
            with app.app_context():
                barrier.wait()
                while True:
                    refs = clock.claim_due(db.session, utcnow(), limit=3)
                    db.session.commit()
                    if not refs:
                        break
                    claimed[index].extend(ref.id for ref in refs)
                db.session.remove()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=one_clock, args=(index,)) for index in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert not set(claimed[0]) & set(claimed[1]), "two clocks claimed the same job"
    assert sorted(claimed[0] + claimed[1]) == sorted(job_ids)


def test_a_claim_given_back_is_claimed_again_but_not_once_a_step_changed_the_job(engine):
    first, second = _due_now(engine, 2)
    refs = clock.claim_due(engine, utcnow())
    engine.commit()
    assert sorted(ref.id for ref in refs) == [first, second]
    engine.execute(update(Job).where(Job.id == second).values(status="cancelled"))
    clock.release(engine, refs)  # Redis was down: back to the clocks
    engine.commit()
    assert [ref.id for ref in clock.claim_due(engine, utcnow())] == [first]
    engine.commit()


# --- with worker processes ------------------------------------------------------------------


def test_timers_and_boundary_timers_fire_once_with_two_workers(
    engine, demo, workers, test_tools, redis_client, tmp_path
):
    timers = publish_document(_timer_then_record(), key="timers")
    boundaries = publish_document(_task_with_boundary_timer(), key="boundaries")
    workers.start(2, **NO_SWEEP)
    _registered(redis_client, 2)
    began = time.monotonic()
    waiting = [start(engine, timers) for _ in range(4)]
    interrupted = [start(engine, boundaries) for _ in range(4)]
    timer_jobs = [job.id for i in waiting + interrupted for job in pending_jobs(engine, i, "timer")]
    assert len(timer_jobs) == 8
    for instance_id in waiting + interrupted:
        wait_for(lambda i=instance_id: _status(engine, i) == "completed", 1 + SLACK, "timers")
    assert time.monotonic() - began >= 1
    for instance_id in waiting:
        assert history(engine, instance_id).count(("timer", "wait")) == 1
    for instance_id in interrupted:
        assert history(engine, instance_id).count(("boundary", "b")) == 1
        assert history(engine, instance_id).count(("entered", "late")) == 1
    calls = tools_for_tests.seen(redis_client, "after-timer") + tools_for_tests.seen(
        redis_client, "late"
    )
    assert len(calls) == 8 and len({call["key"] for call in calls}) == 8
    wait_for(lambda: all(_deliveries(tmp_path, j) for j in timer_jobs), 10, "the log lines")
    assert Counter(_deliveries(tmp_path, j) for j in timer_jobs) == {1: 8}, workers.logs()


def test_a_retry_with_backoff_runs_after_its_delay(engine, workers, test_tools, redis_client):
    flaky = node(
        "serviceTask",
        tool="test.flaky",
        retries=2,
        backoff=0.5,
        inputs={"name": "'backoff'", "fail_times": "2"},
    )
    version = publish_document(chain(("call", flaky)))
    workers.start(1, **NO_SWEEP)
    _registered(redis_client, 1)
    instance_id = start(engine, version)
    wait_for(lambda: _status(engine, instance_id) == "completed", 1.5 + SLACK, "the retries")
    times = [float(t) for t in redis_client.lrange("fdtest:flaky-times:backoff", 0, -1)]
    assert len(times) == 3
    assert times[1] - times[0] >= 0.5 and times[2] - times[1] >= 1.0, times


def test_a_timer_claimed_by_a_clock_that_died_is_delivered_by_the_sweep(
    engine, workers, redis_client
):
    """The clock committed its claim and was killed before it enqueued: no RQ delivery exists,
    and no other clock takes the job again; the sweep sends it once it is SWEEP_GRACE late."""
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))))
    workers.start(1, SWEEP_INTERVAL=0.5, SWEEP_GRACE=1)
    _registered(redis_client, 1)
    instance_id = start(engine, version)
    [timer] = pending_jobs(engine, instance_id, "timer")
    refs = clock.claim_due(engine, timer.due_at)  # ahead of the worker's own clock
    engine.commit()
    assert [ref.id for ref in refs] == [timer.id]
    assert clock.claim_due(engine, timer.due_at + timedelta(hours=1)) == []
    engine.commit()
    wait_for(lambda: _status(engine, instance_id) == "completed", 1 + 1.5 + SLACK, "the sweep")
    assert history(engine, instance_id).count(("timer", "wait")) == 1


def test_a_timer_due_while_redis_is_down_fires_once_redis_is_back(
    app_config, engine, workers, private_redis, tmp_path
):
    from webapp import create_app
    from webapp.extensions import db
    from webapp.models import ProcessVersion

    version_id = publish_document(chain(("wait", node("timerCatch", duration="PT1S")))).id
    workers.start(1, REDIS_URL=private_redis.url, **NO_SWEEP)
    _registered(Redis.from_url(private_redis.url), 1)
    other = create_app(dict(app_config, REDIS_URL=private_redis.url))
    with other.app_context():
        result = steps.start_instance(db.session, db.session.get(ProcessVersion, version_id))
        commit(result)  # nothing for Redis: the timer waits in the database
        instance_id = result.instance.id
        db.session.remove()
    assert private_redis.process is not None
    os.kill(private_redis.process.pid, signal.SIGKILL)
    private_redis.process.wait(timeout=10)
    private_redis.process = None
    log = tmp_path / "worker-0.log"
    wait_for(lambda: "timers wait until Redis is back" in log.read_text(), 30, "the clock")
    assert _status(engine, instance_id) == "running"
    private_redis.ensure_running()  # empty
    wait_for(lambda: _status(engine, instance_id) == "completed", 2 * SLACK, "the timer")
    assert history(engine, instance_id).count(("timer", "wait")) == 1


@pytest.mark.parametrize("value", ["0", "-1", "soon", "nan", "inf"])
def test_the_timer_interval_must_be_a_positive_number_of_seconds(tmp_path, monkeypatch, value):
    from webapp import create_app
    from webapp.config import ConfigError

    monkeypatch.setenv("TIMER_INTERVAL", value)
    with pytest.raises(ConfigError, match="TIMER_INTERVAL"):
        create_app({"INSTANCE_PATH": str(tmp_path)})
    monkeypatch.setenv("TIMER_INTERVAL", "0.2")
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["TIMER_INTERVAL"] == 0.2
