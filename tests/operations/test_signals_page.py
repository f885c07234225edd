"""The Signals page: recent broadcasts with their progress (refreshed while one runs), each
linking to the instances it reached or started; partitions limit what a reader sees."""

from __future__ import annotations

import html
import re

import pytest
from sqlalchemy import select

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.documents import chain, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
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


# --- the broadcast form -----------------------------------------------------------------------

WAITS = chain(("wait", node("signalCatch", signal="recall")))


def _post(client, data: dict, page: str = "/operations/signals"):
    from tests.helpers.app import csrf_token

    return client.post("/operations/signals", data={**data, "csrf_token": csrf_token(client, page)})


def _count(session) -> int:
    from sqlalchemy import func

    from webapp.models import SignalBroadcast

    session.rollback()
    return session.scalar(select(func.count()).select_from(SignalBroadcast))


def test_an_operator_broadcasts_from_the_page_after_confirming_how_many_it_reaches(
    login_as, engine
):
    from webapp.models import SignalBroadcast

    finance = publish_document(WAITS, "finance_waits", partition="finance")
    waiting = [start(engine, finance) for _ in range(2)]
    start(engine, publish_document(WAITS, "hr_waits", partition="hr"))
    start(engine, publish_document(WAITS, "open_waits"))
    starter = chain(("review", node("userTask", assignee={"type": "role", "value": "clerk"})))
    starter["nodes"]["start"]["config"] = {"event": "signal", "signal": "recall"}
    publish_document(starter, key="recall_review", name="Recall review")
    client = login_as("operator")
    page = client.get("/operations/signals").get_data(as_text=True)
    assert "Broadcast a signal" in page
    options = re.findall(r'<option value="(\w*)"[^>]*>([^<]+)</option>', page)
    assert options == [("", "No partition: instances and processes in none"),
                       ("finance", "Finance"), ("hr", "Human resources")]  # fmt: skip

    data = {"name": " recall ", "payload": '{"lot": 7}', "partition": "finance"}
    asked = _post(client, data)
    assert asked.status_code == 303 and "/operations/signals/confirm?" in asked.location
    assert _count(engine) == 0, "nothing is broadcast before the confirmation"
    confirm = client.get(asked.location).get_data(as_text=True)
    assert "Broadcast “recall” to 2 waiting instances?" in confirm
    assert "in the partition Finance" in confirm and "Recall review" in confirm
    assert "Yes, broadcast to 2 instances" in confirm and 'name="csrf_token"' in confirm

    done = client.post(
        "/operations/signals",
        data={**data, "confirm": "yes", "csrf_token": csrf_token_of(confirm)},
    )
    assert done.status_code == 303
    broadcast = engine.scalar(select(SignalBroadcast))
    assert done.location.endswith(f"/operations/signals/{broadcast.id}")
    assert (broadcast.name, broadcast.payload, broadcast.actor) == (
        "recall",
        {"lot": 7},
        "operator",
    )
    assert broadcast.partition_id == engine.scalar(
        select(Partition.id).where(Partition.key == "finance")
    )
    run_broadcasts(engine)
    engine.rollback()
    assert engine.get(SignalBroadcast, broadcast.id).delivered == len(waiting)


def csrf_token_of(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)


@pytest.mark.parametrize(
    ("data", "field", "message"),
    [
        ({"name": "  "}, "name", "Give the signal name (1-200 characters)."),
        ({"name": "x" * 201}, "name", "Give the signal name (1-200 characters)."),
        ({"name": "go", "payload": "{lot: 7}"}, "payload", "The payload is not JSON"),
        ({"name": "go", "payload": "[1, 2]"}, "payload", "The payload must be a JSON object."),
        ({"name": "go", "partition": "nowhere"}, "partition", "Unknown partition"),
        ({"name": "go", "partition": "sales"}, "partition", "Unknown partition"),
        ({"name": "", "payload": "nope"}, "payload", "The payload is not JSON"),
    ],
    ids=["blank", "long", "bad-json", "array", "unknown-partition", "foreign-partition",
         "two-problems"],
)  # fmt: skip
def test_a_refused_broadcast_names_the_field_keeps_the_input_and_writes_nothing(
    login_as, engine, data, field, message
):
    from tests.helpers.app import failed_page
    from webapp.models import Partition as PartitionModel

    engine.add(PartitionModel(key="sales", name="Sales"))
    engine.commit()
    client = login_as("operator")
    for confirmed in ({}, {"confirm": "yes"}):
        response = _post(client, {**data, **confirmed})
        page = failed_page(client, response, "/operations/signals")
        assert message in page and f'id="{field}-msg"' in page
        if data.get("payload"):
            assert html.escape(data["payload"], quote=False) in page, "what was typed stays"
    assert _count(engine) == 0
    assert client.get("/operations/signals/confirm?name=go&partition=sales").status_code == 303


def test_broadcasting_needs_the_start_permission_and_a_csrf_token(user_with, engine):
    reader = user_with(["instances.read"], ["finance"])
    assert "Broadcast a signal" not in reader.get("/operations/signals").get_data(as_text=True)
    token = csrf_token_of(reader.get("/operations/signals").get_data(as_text=True))
    refused = reader.post("/operations/signals", data={"name": "go", "csrf_token": token})
    assert refused.status_code == 403
    assert reader.get("/operations/signals/confirm?name=go").status_code == 403
    assert reader.post("/operations/signals", data={"name": "go"}).status_code == 400
    assert _count(engine) == 0


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


def test_a_confirmation_sent_twice_broadcasts_once(login_as, engine):
    publish_document(WAITS, "open_waits")
    client = login_as("operator")
    data = {"name": "recall", "payload": "", "partition": ""}
    confirm = client.get(_post(client, data).location).get_data(as_text=True)
    once = re.search(r'name="once" value="([^"]+)"', confirm).group(1)
    sent = {**data, "confirm": "yes", "once": once, "csrf_token": csrf_token_of(confirm)}
    first = client.post("/operations/signals", data=sent)
    again = client.post("/operations/signals", data=sent)
    assert first.status_code == again.status_code == 303
    assert first.location == again.location
    assert _count(engine) == 1
    followed = client.get(again.location).get_data(as_text=True)
    assert "had already been broadcast from that page" in followed
    # A new confirmation page is a new broadcast.
    fresh = client.get(_post(client, data).location).get_data(as_text=True)
    assert re.search(r'name="once" value="([^"]+)"', fresh).group(1) != once
