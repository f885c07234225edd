"""Webhooks out: deliveries signed per Standard Webhooks 1.0 reach a real receiver from the
workers, retried with backoff, in order per instance, refused at private addresses, paused when
they keep failing."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook as Verifier
from standardwebhooks.webhooks import WebhookVerificationError

from tests.helpers.documents import catcher
from tests.helpers.instances import open_tasks, start
from tests.helpers.processes import publish_document
from tests.helpers.processes import published as latest
from tests.helpers.statements import statements
from tests.helpers.webhooks import receiver, register
from tests.helpers.workers import wait_for
from webapp.engine import signals
from webapp.extensions import db
from webapp.models import SignalBatch, User, Webhook, WebhookDelivery
from webapp.models.base import utcnow
from webapp.services import signals as signal_service
from webapp.services import tasks, webhooks
from webapp.worker.webhooks import WebhookSender


def _sender(app, allow_private: bool = True) -> WebhookSender:
    sender = WebhookSender(app)
    sender.allow_private = allow_private
    return sender


def _deliveries(engine, webhook_id: int) -> list[WebhookDelivery]:
    engine.rollback()
    return list(
        engine.scalars(
            select(WebhookDelivery)
            .where(WebhookDelivery.webhook_id == webhook_id)
            .order_by(WebhookDelivery.id)
        )
    )


@pytest.fixture
def quick(monkeypatch):
    """Retries after 0.2 s (doubling) and a pause after 3 failures in a row."""
    monkeypatch.setitem(webhooks.SETTINGS, "WEBHOOK_BACKOFF", 0.2)
    monkeypatch.setitem(webhooks.SETTINGS, "WEBHOOK_PAUSE_AFTER", 3)
    monkeypatch.setitem(webhooks.SETTINGS, "WEBHOOK_PAUSE_SPAN", 0.0)


def test_a_worker_delivers_signed_events_that_the_reference_verifier_accepts(
    app, published, engine, workers
):
    with receiver() as hook:
        webhook_id, secret = register(
            app, hook.url, ["instance.started", "task.created"], process_key="open"
        )
        workers.start(1, WEBHOOK_ALLOW_PRIVATE=1, WEBHOOK_INTERVAL=0.1)
        instance_id = start(engine, latest("open"))
        start(engine, latest("fin"))  # another process: filtered out
        wait_for(lambda: len(hook.delivered()) >= 2, what="two deliveries")
        time.sleep(0.5)
    assert hook.types() == ["instance.started", "task.created"]
    verifier = Verifier(secret)
    first = hook.received[0]
    payload = verifier.verify(first.body, first.headers)
    assert payload["type"] == "instance.started"
    assert payload["data"]["id"] == instance_id
    assert payload["data"]["process_key"] == "open"
    task = verifier.verify(hook.received[1].body, hook.received[1].headers)
    assert task["data"]["title"] == "Review"
    assert task["data"]["role"] == "approver"
    assert task["data"]["instance"]["id"] == instance_id
    assert abs(int(first.headers["webhook-timestamp"]) - time.time()) < 30
    assert first.headers["webhook-id"] == _deliveries(engine, webhook_id)[0].message_id

    with pytest.raises(WebhookVerificationError):
        verifier.verify(first.body.replace('"open"', '"evil"'), first.headers)
    old = int(time.time()) - 3600
    resigned = {
        **first.headers,
        "webhook-timestamp": str(old),
        "webhook-signature": webhooks.sign(secret, first.headers["webhook-id"], old, first.body),
    }
    with pytest.raises(WebhookVerificationError, match="too old"):
        verifier.verify(first.body, resigned)


def test_a_failed_delivery_is_retried_with_backoff_and_later_events_wait_for_it(
    app, published, engine, quick
):
    with receiver(statuses=[500, 503]) as hook:
        webhook_id, _ = register(app, hook.url, ["instance.started", "task.created"])
        start(engine, latest("open"))
        sender = _sender(app)
        wait_for(lambda: sender.tick() >= 0 and len(hook.delivered()) == 2, what="both sent")
    types = [json.loads(item.body)["type"] for item in hook.received]
    assert types == ["instance.started"] * 3 + ["task.created"]
    assert [item.status for item in hook.received] == [500, 503, 200, 200]
    assert len({item.headers["webhook-id"] for item in hook.received[:3]}) == 1
    first_wait = hook.received[1].at - hook.received[0].at
    second_wait = hook.received[2].at - hook.received[1].at
    assert first_wait >= 0.2
    assert second_wait >= 0.4
    started, created = _deliveries(engine, webhook_id)
    assert (started.status, started.attempts, started.response_code) == ("delivered", 3, 200)
    assert (created.status, created.attempts) == ("delivered", 1)


def test_a_rotation_signs_with_both_secrets_during_the_overlap(app, published, engine):
    with receiver() as hook:
        webhook_id, old_secret = register(app, hook.url, ["instance.started"])
        with app.app_context():
            new_secret = webhooks.rotate(webhook_id, 24).secret
        start(engine, latest("open"))
        _sender(app).tick()
    (delivery,) = hook.received
    assert len(delivery.headers["webhook-signature"].split(" ")) == 2
    for secret in (old_secret, new_secret):
        assert Verifier(secret).verify(delivery.body, delivery.headers)["type"] == (
            "instance.started"
        )
    with app.app_context():
        webhooks.rotate(webhook_id, 0)
        webhooks.redeliver(webhook_id, _deliveries(engine, webhook_id)[0].id)
    with receiver() as hook:
        with app.app_context():
            webhooks.update_webhook(webhook_id, {"url": hook.url})
        _sender(app).tick()
    assert len(hook.received[0].headers["webhook-signature"].split(" ")) == 1


def test_a_private_address_is_refused_without_sending(app, published, engine):
    with receiver() as hook:
        webhook_id, _ = register(app, hook.url, ["instance.started"])
        start(engine, latest("open"))
        _sender(app, allow_private=False).tick()
        time.sleep(0.2)
    assert hook.received == []
    (delivery,) = _deliveries(engine, webhook_id)
    assert delivery.status == "failed"
    assert "loopback" in delivery.last_error
    assert "WEBHOOK_ALLOW_PRIVATE" in delivery.last_error


def test_a_webhook_that_keeps_failing_is_paused_until_resumed(app, published, engine, quick):
    with receiver(statuses=[500] * 3) as hook:
        webhook_id, _ = register(app, hook.url, ["instance.started"])
        start(engine, latest("open"))
        sender = _sender(app)

        def paused() -> bool:
            sender.tick()
            engine.rollback()
            return engine.get(Webhook, webhook_id, populate_existing=True).paused_at is not None

        wait_for(paused, what="the webhook paused")
        time.sleep(0.5)
        sender.tick()
        assert len(hook.received) == 3
        assert "3 failed attempts" in engine.get(Webhook, webhook_id).paused_reason
        with app.app_context():
            webhooks.resume(webhook_id)
        wait_for(lambda: sender.tick() and hook.delivered(), what="delivery after resume")
    assert _deliveries(engine, webhook_id)[0].status == "delivered"


def test_a_task_assignment_and_completion_are_events(app, published, engine):
    with receiver() as hook:
        register(app, hook.url, ["task.assigned", "task.completed"])
        instance_id = start(engine, latest("open"))
        (task,) = open_tasks(engine, instance_id)
        with app.app_context():
            bob = db.session.scalar(select(User).where(User.username == "bob"))
            tasks.claim(bob, task.id)
            db.session.remove()
        sender = _sender(app)
        wait_for(lambda: sender.tick() >= 0 and len(hook.delivered()) == 1, what="assigned")
    payload = json.loads(hook.received[0].body)
    assert payload["type"] == "task.assigned"
    assert payload["data"]["assignee"] == "bob"


def test_with_no_webhook_a_step_reads_nothing_about_webhooks(app, published, engine, monkeypatch):
    monkeypatch.setitem(webhooks.SETTINGS, "WEBHOOK_REFRESH", 1.0)
    webhooks.forget_cache()
    with statements(app) as seen:
        start(engine, latest("open"))  # reads the (empty) list once
        start(engine, latest("open"))
    reads = [query for query in seen.queries if "webhook" in query.lower()]
    assert len(reads) == 1
    time.sleep(1.1)
    with statements(app) as seen:
        start(engine, latest("open"))
    assert len([query for query in seen.queries if "webhook" in query.lower()]) == 1


def test_a_signal_broadcast_is_an_event_once_every_instance_has_it(app, published, engine):
    publish_document(catcher("go"), key="waits")
    with receiver() as hook:
        register(app, hook.url, ["broadcast.done"])
        instance_id = start(engine, latest("waits"))
        broadcast_id = signals.record(
            engine.connection(), name="go", payload={}, partition_id=None, now=utcnow(), actor="ann"
        ).id
        engine.commit()
        with app.app_context():
            signal_service.plan_broadcast(broadcast_id, 0)
            for batch_id in db.session.scalars(select(SignalBatch.id)).all():
                signal_service.run_batch(batch_id, 0)
            db.session.remove()
        _sender(app).tick()
    (done,) = [json.loads(item.body) for item in hook.delivered()]
    assert done["type"] == "broadcast.done"
    assert done["data"]["id"] == broadcast_id
    assert done["data"]["delivered"] == 1
    assert done["data"]["thrown_by"] == {"user": "ann"}
    assert instance_id


def test_a_webhook_deleted_by_another_process_does_not_break_steps(app, published, engine):
    webhook_id, _ = register(app, "https://hooks.example.org/x", ["instance.started"])
    start(engine, latest("open"))  # this process now caches the webhook
    engine.execute(WebhookDelivery.__table__.delete())
    engine.execute(Webhook.__table__.delete().where(Webhook.id == webhook_id))
    engine.commit()
    instance_id = start(engine, latest("open"))
    assert instance_id
    assert _deliveries(engine, webhook_id) == []


def test_old_finished_deliveries_leave_the_log_and_pending_ones_stay(app, published, engine):
    webhook_id, _ = register(app, "https://hooks.example.org/x", ["instance.started"])
    for _ in range(3):
        start(engine, latest("open"))
    first, second, third = _deliveries(engine, webhook_id)
    old = utcnow() - timedelta(days=31)
    table = WebhookDelivery.__table__
    engine.execute(
        table.update().where(table.c.id.in_([first.id, second.id])).values(created_at=old)
    )
    engine.execute(table.update().where(table.c.id == first.id).values(status="delivered"))
    engine.commit()
    with app.app_context():
        assert webhooks.prune(db.session, utcnow(), 30) == 1
        assert webhooks.prune(db.session, utcnow(), 0) == 0
    assert [d.id for d in _deliveries(engine, webhook_id)] == [second.id, third.id]
