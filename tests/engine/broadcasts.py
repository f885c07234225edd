"""Signal broadcasts run in-process, as workers would: for engine, API and differential tests."""

from __future__ import annotations

from sqlalchemy import select


def broadcast_round(session, batch_size: int = 500) -> bool:
    """Plan every pending broadcast and run every pending batch once; False when there was none."""
    from webapp.engine import signals
    from webapp.models import SignalBatch, SignalBroadcast
    from webapp.models.base import utcnow
    from webapp.services import signals as signal_service

    session.rollback()
    pending = list(
        session.scalars(select(SignalBroadcast.id).where(SignalBroadcast.status == "pending"))
    )
    batches = list(session.scalars(select(SignalBatch.id).where(SignalBatch.status == "pending")))
    session.rollback()
    for broadcast_id in pending:
        signals.claim_broadcast(session, broadcast_id, utcnow())
        session.commit()
        signals.plan(session, broadcast_id, batch_size, utcnow())
        session.commit()
    for batch_id in batches:
        signal_service.run_batch(batch_id, 0)
    return bool(pending or batches)


def run_broadcasts(session, batch_size: int = 500) -> None:
    """Run broadcasts (and the jobs their deliveries make) until none is pending."""
    from tests.helpers.workers import drain

    for _ in range(20):
        if not broadcast_round(session, batch_size):
            return
        drain(session)
    raise AssertionError("broadcasts kept coming")
