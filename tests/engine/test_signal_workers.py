"""A broadcast to hundreds of waiting instances, processed in batches by real worker processes,
with the first worker SIGKILLed in the middle of a batch: the sweep hands the batch to another
worker and every instance receives the signal exactly once."""

from __future__ import annotations

from sqlalchemy import func, select

from tests.helpers.documents import CLERK, document, node, wire
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import dispatch, signals
from webapp.models import HistoryEntry, SignalBatch, SignalBroadcast, SignalReceipt
from webapp.models.base import utcnow
from webapp.services.jobs import ENTRY_POINTS, engine_queue

COUNT = 300


def _listening() -> dict:
    """A task with a non-interrupting signal boundary: a second delivery would fire it again."""
    nodes = {
        "start": node("startEvent"),
        "work": node("userTask", assignee=CLERK),
        "end": node("endEvent"),
        "sig": node(
            "boundaryEvent", attachedTo="work", event="signal", signal="go", interrupting=False
        ),
        "noted": node("endEvent"),
    }
    return document(nodes, {**wire("start", "work", "end"), **wire("sig", "noted")})


def _receipts(session) -> int:
    session.rollback()
    return session.scalar(select(func.count()).select_from(SignalReceipt)) or 0


def test_a_broadcast_survives_a_worker_killed_mid_batch(engine, demo, workers):
    version = publish_document(_listening(), key="many")
    instance_ids = [start(engine, version) for _ in range(COUNT)]
    ref = signals.record(
        engine.connection(), name="go", payload={"n": 1}, partition_id=None, now=utcnow()
    )
    engine.commit()
    dispatch.enqueue(engine_queue(), [ref], ENTRY_POINTS)
    settings = {"SIGNAL_BATCH": 50, "JOB_LEASE_GRACE": 1}
    first = workers.start(1, **settings)[0]
    wait_for(lambda: _receipts(engine) >= 20, what="the first deliveries")
    workers.kill(first)
    killed_at = _receipts(engine)
    assert killed_at < COUNT, "the worker finished before it was killed"
    workers.start(2, **settings)

    def finished():
        engine.rollback()
        return engine.get(SignalBroadcast, ref.id, populate_existing=True).status == "done"

    wait_for(finished, timeout=120, what="the broadcast to finish")
    row = engine.get(SignalBroadcast, ref.id)
    assert (row.total, row.delivered) == (COUNT, COUNT)
    assert engine.scalar(select(func.count()).select_from(SignalBatch)) == COUNT // 50
    assert engine.scalar(select(func.max(SignalBatch.attempt))) >= 2, "no batch was recovered"
    fired = dict(
        engine.execute(
            select(HistoryEntry.instance_id, func.count())
            .where(HistoryEntry.kind == "boundary", HistoryEntry.node_id == "sig")
            .group_by(HistoryEntry.instance_id)
        ).all()
    )
    assert fired == dict.fromkeys(instance_ids, 1)


def test_a_broadcast_never_handed_to_redis_is_found_by_the_sweep(engine, demo, workers):
    """The throwing step committed but Redis was down: no RQ job exists; the sweep plans it."""
    version = publish_document(_listening(), key="few")
    instance_ids = [start(engine, version) for _ in range(3)]
    ref = signals.record(
        engine.connection(), name="go", payload={}, partition_id=None, now=utcnow()
    )
    engine.commit()  # and no enqueue
    workers.start(1)

    def finished():
        engine.rollback()
        return engine.get(SignalBroadcast, ref.id, populate_existing=True).status == "done"

    wait_for(finished, timeout=60, what="the sweep to plan and run the broadcast")
    assert engine.get(SignalBroadcast, ref.id).delivered == len(instance_ids)
