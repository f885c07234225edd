"""The admin's webhook pages: register with checked fields, the secret, the delivery log with
Redeliver, rotation, a paused webhook's notice with Resume, deletion; admins only."""

from __future__ import annotations

import re

from sqlalchemy import func, select

from tests.helpers.app import csrf_token
from tests.helpers.documents import chain, node
from tests.helpers.instances import start
from tests.helpers.processes import publish_document
from tests.helpers.webhooks import register
from webapp.extensions import db
from webapp.models import Webhook, WebhookDelivery
from webapp.models.base import utcnow


def _post(client, path: str, data: dict | None = None, page: str = "/admin/webhooks"):
    return client.post(path, data={"csrf_token": csrf_token(client, page), **(data or {})})


def test_an_admin_registers_a_webhook_and_sees_its_secret(login_as, db_session):
    client = login_as("admin")
    answer = _post(
        client,
        "/admin/webhooks",
        {
            "url": "https://hooks.example.org/in",
            "events": ["instance.started", "task.created"],
            "process_key": "open",
            "partition": "finance",
        },
    )
    assert answer.status_code == 302, answer.get_data(as_text=True)
    hook = db_session.scalar(select(Webhook))
    assert hook.events == ["instance.started", "task.created"]
    assert hook.process_key == "open"
    page = client.get(answer.headers["Location"]).get_data(as_text=True)
    assert hook.secret in page
    assert "Webhook registered" in page
    listed = client.get("/admin/webhooks").get_data(as_text=True)
    assert "https://hooks.example.org/in" in listed
    assert "process open partition finance" in listed


def test_wrong_values_are_shown_by_their_fields_and_nothing_is_saved(login_as, db_session):
    client = login_as("admin")
    answer = _post(client, "/admin/webhooks", {"url": "ftp://nowhere", "events": []})
    assert answer.status_code == 422
    page = answer.get_data(as_text=True)
    assert "Choose at least one event type." in page
    answer = _post(
        client, "/admin/webhooks", {"url": "ftp://nowhere", "events": ["instance.started"]}
    )
    assert answer.status_code == 422
    assert "Give an http:// or https:// address." in answer.get_data(as_text=True)
    assert db_session.scalar(select(func.count()).select_from(Webhook)) == 0


def test_the_delivery_log_redelivers_rotates_and_resumes(app, login_as, db_session):
    with app.app_context():
        version = publish_document(chain(("wait", node("timerCatch", duration="PT1H"))))
        webhook_id, secret = register(app, "https://hooks.example.org/in", ["instance.started"])
        for _ in range(30):
            start(db.session, version)
    client = login_as("admin")
    path = f"/admin/webhooks/{webhook_id}"
    page = client.get(path).get_data(as_text=True)
    assert page.count(">Redeliver<") == 25
    assert "Page 1 of 2 (30)" in page
    assert client.get(f"{path}?page=2").get_data(as_text=True).count(">Redeliver<") == 5

    delivery = db_session.scalar(select(WebhookDelivery).order_by(WebhookDelivery.id))
    db_session.execute(
        WebhookDelivery.__table__.update()
        .where(WebhookDelivery.id == delivery.id)
        .values(status="failed", next_attempt_at=None)
    )
    db_session.commit()
    assert _post(client, f"{path}/deliveries/{delivery.id}/redeliver", page=path).status_code == 302
    db_session.rollback()
    assert db_session.get(WebhookDelivery, delivery.id, populate_existing=True).status == "pending"
    assert _post(client, f"{path}/deliveries/999999/redeliver", page=path).status_code == 404

    assert _post(client, f"{path}/rotate", {"overlap_hours": "2"}, page=path).status_code == 302
    page = client.get(path).get_data(as_text=True)
    assert secret not in page
    assert "still signs until" in page
    refused = _post(client, f"{path}/rotate", {"overlap_hours": "-3"}, page=path)
    assert refused.status_code == 422
    assert "Use 0 to 168 hours." in refused.get_data(as_text=True)

    db_session.execute(
        Webhook.__table__.update()
        .where(Webhook.id == webhook_id)
        .values(paused_at=utcnow(), paused_reason="Paused after 20 failed attempts in a row.")
    )
    db_session.commit()
    page = client.get(path).get_data(as_text=True)
    assert re.search(r"Paused since .*Paused after 20 failed attempts", page, re.S)
    assert ">Resume<" in page
    assert _post(client, f"{path}/resume", page=path).status_code == 302
    db_session.rollback()
    assert db_session.get(Webhook, webhook_id, populate_existing=True).paused_at is None
    assert "Paused since" not in client.get(path).get_data(as_text=True)

    assert _post(client, f"{path}/delete", page=path).status_code == 302
    assert client.get(path).status_code == 404


def test_only_admins_see_webhooks(app, login_as, demo):
    webhook_id, _ = register(app, "https://hooks.example.org/in", ["instance.started"])
    client = login_as("operator")
    assert client.get("/admin/webhooks").status_code == 403
    assert client.get(f"/admin/webhooks/{webhook_id}").status_code == 403
