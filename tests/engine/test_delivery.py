"""Delivery faults with real worker processes: a delivery stuck half-way into a worker, and Redis
going away under a running worker (a private Redis the test kills and restarts)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from redis import Redis
from rq import Worker
from rq.job import Job as RQJob
from sqlalchemy import select

from tests.helpers.documents import chain, node
from tests.helpers.instances import history, load
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import steps
from webapp.engine.dispatch import JobRef
from webapp.infra.redis_server import EmbeddedRedis
from webapp.models import HistoryEntry
from webapp.services.jobs import ENTRY_POINTS, commit, engine_queue

# Sweep timings for these tests: small, but large enough to measure the bound against.
INTERVAL, GRACE = 1.0, 1.0
# A worker process takes a moment to import the app before its first sweep (longer on a busy
# machine); "a few seconds" of slack otherwise.
STARTUP, SLACK = 10.0, 4.0


def _status(engine, instance_id: int) -> str:
    return load(engine, instance_id).status


def _completed_within(engine, instance_id: int, seconds: float) -> float:
    began = time.monotonic()
    wait_for(lambda: _status(engine, instance_id) == "completed", seconds, "completion")
    return time.monotonic() - began


# --- a delivery stuck between the queue list and "started" -------------------------------------


def _strand(queue, ref: JobRef) -> None:
    """Enqueue `ref` the way RQ leaves a job whose worker was killed right after taking it: the
    hash says `queued`, the id sits only in `<queue>:intermediate` (RQ's LMOVE), in one
    transaction so that no running worker can take it from the queue list first."""
    with queue.connection.pipeline() as pipe:
        queue.enqueue_call(
            ENTRY_POINTS[ref.entry],
            args=(ref.id, ref.instance_id),
            job_id=ref.rq_id,
            timeout=-1,
            pipeline=pipe,
        )
        pipe.lrem(queue.key, 0, ref.rq_id)
        pipe.rpush(queue.intermediate_queue_key, ref.rq_id)
        pipe.execute()


def _stranded(queue, ref: JobRef) -> bool:
    connection = queue.connection
    return (
        RQJob.fetch(ref.rq_id, connection=connection).get_status() == "queued"
        and ref.rq_id.encode() not in connection.lrange(queue.key, 0, -1)
        and ref.rq_id.encode() in connection.lrange(queue.intermediate_queue_key, 0, -1)
    )


def test_a_delivery_stuck_in_the_intermediate_list_is_sent_again_in_bounded_time(engine, workers):
    """RQ's worker moves the id out of the queue list and only then marks the job started; one
    killed in between leaves `queued` forever (until RQ's own clean-up, 10+ minutes later)."""
    version = publish_document(chain(("a", node("serviceTask", tool="noop", saveTo="a"))))
    queue = engine_queue()

    # 1. The state built before any worker runs: enqueued, then moved as RQ's LMOVE does.
    first = steps.start_instance(engine, version)
    commit(first)
    ref = first.jobs[0]
    assert queue.connection.lmove(queue.key, queue.intermediate_queue_key) == ref.rq_id.encode()
    assert _stranded(queue, ref)
    workers.start(1, SWEEP_INTERVAL=INTERVAL, SWEEP_GRACE=GRACE)
    at_start = _completed_within(engine, first.instance.id, INTERVAL + GRACE + STARTUP)

    # 2. The same state while a worker runs: only the periodic sweep can find it.
    second = steps.start_instance(engine, version)
    engine.commit()
    _strand(queue, second.jobs[0])
    assert _stranded(queue, second.jobs[0])
    while_running = _completed_within(engine, second.instance.id, INTERVAL + GRACE + SLACK)

    for result in (first, second):
        instance = load(engine, result.instance.id)
        assert instance.vars == {"a": {}}
        assert history(engine, result.instance.id).count(("left", "a")) == 1
    print(  # shown with `pytest -s`
        f"\nstuck delivery recovered {at_start:.2f} s after starting a worker and "
        f"{while_running:.2f} s after it was due with a worker running "
        f"(SWEEP_INTERVAL={INTERVAL}, SWEEP_GRACE={GRACE})"
    )


# --- Redis going away under a running worker ---------------------------------------------------


def _kill(server: EmbeddedRedis) -> None:
    """SIGKILL the server: every connection drops at once, nothing is saved."""
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)
    server.process = None


def _log(tmp_path: Path) -> str:
    """The whole log of the test's first worker (`Workers.logs` keeps only its tail)."""
    return (tmp_path / "worker-0.log").read_text()


def test_a_worker_outlives_redis_dropping_during_a_tool_call(
    engine, workers, private_redis, tmp_path, test_tools
):
    gate = tmp_path / "gate"
    gate.mkdir()
    inputs = {"dir": "$input.dir"}
    version = publish_document(
        chain(
            ("first", node("serviceTask", tool="test.gate", inputs=inputs, saveTo="first")),
            ("second", node("serviceTask", tool="test.gate", inputs=inputs, saveTo="second")),
        )
    )
    result = steps.start_instance(engine, version, input={"dir": str(gate)})
    engine.commit()  # not enqueued: the worker's first sweep sends it to the private Redis
    instance_id = result.instance.id
    worker = workers.start(1, REDIS_URL=private_redis.url, SWEEP_INTERVAL=0.5, SWEEP_GRACE=0.5)[0]
    wait_for(lambda: (gate / "started").exists(), what="the tool call to start")

    def first_applied() -> bool:
        engine.rollback()
        entry = engine.scalar(
            select(HistoryEntry).where(
                HistoryEntry.kind == "tool_attempt", HistoryEntry.node_id == "first"
            )
        )
        return entry is not None and entry.details["status"] == "ok"

    _kill(private_redis)
    (gate / "open").touch()  # the tool returns while Redis is down
    # The result lands in the database while Redis is down; RQ's clean-up after the job then
    # meets the outage (the worker's own line, or RQ's while it waits for the next job).
    wait_for(
        lambda: worker.poll() is not None or first_applied(),
        timeout=60,
        what="the tool's result to be applied",
    )
    wait_for(
        lambda: (
            worker.poll() is not None
            or any(m in _log(tmp_path) for m in ("lost Redis", "could not connect"))
        ),
        timeout=60,
        what="the worker to meet the outage",
    )
    time.sleep(1)  # had the outage stopped the worker, it would have by now
    assert worker.poll() is None, _log(tmp_path)[-3000:]
    private_redis.ensure_running()  # the same socket, empty
    wait_for(lambda: _status(engine, instance_id) == "completed", 60, "the second step")
    assert worker.poll() is None
    instance = load(engine, instance_id)
    assert instance.vars == {"first": {"pid": worker.pid}, "second": {"pid": worker.pid}}
    taken = history(engine, instance_id)
    assert taken.count(("tool_attempt", "first")) == taken.count(("tool_attempt", "second")) == 1
    assert "quitting" not in _log(tmp_path)


def test_a_worker_outlives_redis_dropping_while_it_waits_for_jobs(
    engine, workers, private_redis, app_config, tmp_path
):
    """An idle worker survived before too, but Redis came back without its registration (the
    health page showed no worker) and timers waited for the sweep; its clock delivers them."""
    from webapp import create_app
    from webapp.extensions import db
    from webapp.models import ProcessVersion

    version_id = publish_document(chain(("wait", node("timerCatch", duration="PT1S")))).id
    client = Redis.from_url(private_redis.url)
    # A long grace: only the worker's clock, not the sweep, can deliver the timer in time.
    worker = workers.start(1, REDIS_URL=private_redis.url, SWEEP_GRACE=120)[0]

    def registered() -> bool:
        try:
            return [w.pid for w in Worker.all(connection=client)] == [worker.pid]
        except OSError:
            return False

    wait_for(registered, what="the worker to register")
    _kill(private_redis)
    wait_for(
        lambda: any(m in _log(tmp_path) for m in ("could not connect", "lost Redis")),
        timeout=60,
        what="the worker to meet the outage",
    )
    private_redis.ensure_running()
    wait_for(registered, timeout=30, what="the worker to register again")
    assert worker.poll() is None

    other = create_app(dict(app_config, REDIS_URL=private_redis.url))
    with other.app_context():
        result = steps.start_instance(db.session, db.session.get(ProcessVersion, version_id))
        commit(result)  # the timer waits in the database for a worker's clock
        instance_id = result.instance.id
        db.session.remove()
    _completed_within(engine, instance_id, 1 + 2 * SLACK)  # PT1S, well before the sweep's grace
    assert worker.poll() is None


def test_a_worker_started_while_redis_is_down_waits_for_it(
    engine, workers, private_redis, tmp_path
):
    version = publish_document(chain(("a", node("serviceTask", tool="noop", saveTo="a"))))
    result = steps.start_instance(engine, version)
    engine.commit()
    private_redis.stop()
    worker = workers.start(1, REDIS_URL=private_redis.url)[0]
    wait_for(
        lambda: worker.poll() is not None or "Worker: Redis unavailable" in _log(tmp_path),
        timeout=60,
        what="the worker to find Redis down",
    )
    assert worker.poll() is None, _log(tmp_path)[-3000:]
    private_redis.ensure_running()
    _completed_within(engine, result.instance.id, 20)
    assert worker.poll() is None


def test_a_worker_stopped_during_an_outage_finishes_its_tool_call_first(
    engine, workers, private_redis, tmp_path, test_tools
):
    """SIGTERM while a tool runs and Redis is down: the call completes and counts (RQ's handler
    used to raise the outage inside the tool call, which then counted as the tool's failure)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    version = publish_document(
        chain(("call", node("serviceTask", tool="test.gate", inputs={"dir": "$input.dir"})))
    )
    result = steps.start_instance(engine, version, input={"dir": str(gate)})
    engine.commit()
    worker = workers.start(1, REDIS_URL=private_redis.url)[0]
    wait_for(lambda: (gate / "started").exists(), what="the tool call to start")
    _kill(private_redis)
    os.kill(worker.pid, signal.SIGTERM)
    wait_for(lambda: "warm shut down requested" in _log(tmp_path), what="the signal handled")
    (gate / "open").touch()
    assert worker.wait(timeout=60) == 0, _log(tmp_path)[-3000:]
    assert _status(engine, result.instance.id) == "completed"
    attempts = engine.scalars(
        select(HistoryEntry.details).where(HistoryEntry.kind == "tool_attempt")
    ).all()
    assert [a["status"] for a in attempts] == ["ok"]
