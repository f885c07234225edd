"""The Signals page: recent broadcasts with their progress (refreshed while one runs), each
linking to the instances it reached or started; partitions limit what a reader sees."""

from __future__ import annotations

from sqlalchemy import select

from tests.engine.broadcasts import run_broadcasts
from tests.engine.conftest import chain, node, publish_document
from tests.engine.test_steps import start
from webapp.engine import signals
from webapp.models import Partition
from webapp.models.base import utcnow


def _broadcast(session, name: str, partition: str | None = None) -> int:
    partition_id = None
    if partition:
        partition_id = session.scalar(select(Partition.id).where(Partition.key == partition))
    ref = signals.record(
        session.connection(), name=name, payload={}, partition_id=partition_id, now=utcnow()
    )
    session.commit()
    return ref.id


def test_the_signals_page_shows_progress_and_whom_a_broadcast_reached(login_as, engine):
    version = publish_document(chain(("wait", node("signalCatch", signal="go"))), "waits")
    waiting = [start(engine, version) for _ in range(2)]
    broadcast_id = _broadcast(engine, "go")
    client = login_as("operator")
    page = client.get("/operations/signals")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert 'data-status="pending"' in html and "waiting for a worker" in html
    assert 'hx-trigger="every 2s"' in html
    run_broadcasts(engine)
    html = client.get("/operations/signals").get_data(as_text=True)
    assert "2 of 2 · done" in html and "hx-trigger" not in html
    partial = client.get(
        "/operations/signals", headers={"HX-Request": "true", "HX-Target": "div#signal-broadcasts"}
    )
    assert partial.get_data(as_text=True).lstrip().startswith('<div id="signal-broadcasts"')
    detail = client.get(f"/operations/signals/{broadcast_id}").get_data(as_text=True)
    for instance_id in waiting:
        assert f'href="/operations/instances/{instance_id}"' in detail
    assert "Finished:" in detail


def test_a_reader_sees_only_the_broadcasts_of_their_partitions(app, user_with, engine):
    in_hr = _broadcast(engine, "hr-only", "hr")
    in_finance = _broadcast(engine, "finance-only", "finance")
    client = user_with(["instances.read"], ["finance"])
    html = client.get("/operations/signals").get_data(as_text=True)
    assert "finance-only" in html and "hr-only" not in html
    assert client.get(f"/operations/signals/{in_hr}").status_code == 404
    assert client.get(f"/operations/signals/{in_finance}").status_code == 200


def test_retention_deletes_finished_broadcasts_after_the_retention_days(app, engine):
    from datetime import timedelta

    from sqlalchemy import update

    from webapp.models import SignalBroadcast
    from webapp.services.operations.retention import run_retention

    old, recent = _broadcast(engine, "old"), _broadcast(engine, "recent")
    run_broadcasts(engine)
    long_ago = utcnow() - timedelta(days=app.config["RETENTION_DAYS"] + 1)
    engine.execute(
        update(SignalBroadcast).where(SignalBroadcast.id == old).values(finished_at=long_ago)
    )
    engine.commit()
    run_retention(engine)
    engine.rollback()
    assert engine.get(SignalBroadcast, old) is None
    assert engine.get(SignalBroadcast, recent) is not None


def test_a_broadcast_in_a_partition_counts_only_the_instances_there(login_as, engine):
    finance = engine.scalar(select(Partition.id).where(Partition.key == "finance"))
    wait = chain(("wait", node("signalCatch", signal="go")))
    in_finance = start(
        engine, publish_document(wait, "in_finance", "finance"), partition_id=finance
    )
    shared = start(engine, publish_document(wait, "shared"))
    broadcast_id = _broadcast(engine, "go", "finance")
    run_broadcasts(engine)
    client = login_as("operator")
    html = client.get("/operations/signals").get_data(as_text=True)
    assert "1 of 1 · done" in html
    detail = client.get(f"/operations/signals/{broadcast_id}").get_data(as_text=True)
    assert "reached <strong>1</strong> of 1 waiting instance " in detail
    assert f'href="/operations/instances/{in_finance}"' in detail
    assert f'href="/operations/instances/{shared}"' not in detail
