"""Delivery faults with real worker processes: a delivery stuck half-way into a worker."""

from __future__ import annotations

import time

from rq.job import Job as RQJob

from tests.engine.conftest import chain, history, node, publish_document, wait_for
from tests.engine.test_steps import load
from webapp.engine import steps
from webapp.engine.dispatch import ENTRY_POINTS, JobRef
from webapp.services.jobs import commit, engine_queue

# Sweep timings for these tests: small, but large enough to measure the bound against.
INTERVAL, GRACE = 1.0, 1.0
# A worker process takes a moment to import the app before its first sweep.
STARTUP = 5.0


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


def test_a_delivery_stuck_in_the_intermediate_list_is_sent_again_in_bounded_time(
    engine, workers, capsys
):
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
    while_running = _completed_within(engine, second.instance.id, INTERVAL + GRACE + 3)

    for result in (first, second):
        instance = load(engine, result.instance.id)
        assert instance.vars == {"a": {}}
        assert history(engine, result.instance.id).count(("left", "a")) == 1
    with capsys.disabled():
        print(
            f"\nstuck delivery recovered {at_start:.2f} s after starting a worker and "
            f"{while_running:.2f} s after it was due with a worker running "
            f"(SWEEP_INTERVAL={INTERVAL}, SWEEP_GRACE={GRACE})"
        )
