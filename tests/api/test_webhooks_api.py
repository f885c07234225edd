"""`/api/webhooks`: admins register, list, change, rotate and delete webhooks and read their
delivery log; every wrong field is named and nothing is half-written; others get 403."""

from __future__ import annotations

import base64

from sqlalchemy import func, select

from tests.helpers.http import basic
from tests.helpers.instances import start
from tests.helpers.processes import published as latest
from webapp.models import Webhook, WebhookDelivery

HOOK = {"url": "https://hooks.example.org/flowdesk", "events": ["instance.started"]}


def _count(db_session, model) -> int:
    db_session.rollback()
    return db_session.scalar(select(func.count()).select_from(model))


def test_an_admin_registers_a_webhook_and_sees_its_secret_once_made(client, demo, db_session):
    answer = client.post(
        "/api/webhooks",
        json={**HOOK, "process_key": "open", "partition": "finance", "description": "CRM"},
        headers=basic("admin"),
    )
    assert answer.status_code == 201, answer.json
    made = answer.json
    assert made["secret"].startswith("whsec_")
    assert len(base64.b64decode(made["secret"].removeprefix("whsec_"))) >= 24
    assert (made["process_key"], made["partition"], made["events"]) == (
        "open",
        "finance",
        ["instance.started"],
    )
    assert answer.headers["Location"].endswith(f"/api/webhooks/{made['id']}")
    listed = client.get("/api/webhooks", headers=basic("admin")).json["items"]
    assert [item["id"] for item in listed] == [made["id"]]
    assert "secret" not in listed[0]
    assert (
        client.get(answer.headers["Location"], headers=basic("admin")).json["secret"]
        == (made["secret"])
    )


def test_wrong_fields_are_named_and_nothing_is_stored(client, demo, db_session):
    answer = client.post(
        "/api/webhooks",
        json={"url": "ftp://x", "events": ["instance.exploded"], "partition": "nope", "x": 1},
        headers=basic("admin"),
    )
    assert answer.status_code == 422
    fields = answer.json["details"]["fields"]
    assert set(fields) == {"url", "events", "partition", "x"}
    assert "instance.exploded" in fields["events"]
    assert _count(db_session, Webhook) == 0
    assert client.post("/api/webhooks", json={}, headers=basic("admin")).json["details"][
        "fields"
    ] == {"url": "Required.", "events": "Required."}
    not_json = client.post(
        "/api/webhooks",
        data="url=x",
        content_type="application/x-www-form-urlencoded",
        headers=basic("admin"),
    )
    assert not_json.status_code == 415


def test_changes_rotation_and_deletion(client, demo, db_session):
    made = client.post("/api/webhooks", json=HOOK, headers=basic("admin")).json
    path = f"/api/webhooks/{made['id']}"
    changed = client.patch(
        path,
        json={"events": ["task.created", "task.completed"], "active": False},
        headers=basic("admin"),
    )
    assert changed.status_code == 200
    assert (changed.json["events"], changed.json["active"]) == (
        ["task.created", "task.completed"],
        False,
    )
    refused = client.patch(path, json={"url": "", "active": "yes"}, headers=basic("admin"))
    assert refused.status_code == 422
    assert set(refused.json["details"]["fields"]) == {"url", "active"}
    db_session.rollback()
    assert db_session.get(Webhook, made["id"]).url == HOOK["url"]

    rotated = client.post(f"{path}/rotate", json={"overlap_hours": 2}, headers=basic("admin"))
    assert rotated.status_code == 200
    assert rotated.json["secret"] != made["secret"]
    assert rotated.json["rotation_ends_at"]
    bad = client.post(f"{path}/rotate", json={"overlap_hours": -1}, headers=basic("admin"))
    assert bad.status_code == 422

    assert client.delete(path, headers=basic("admin")).status_code == 204
    assert client.get(path, headers=basic("admin")).status_code == 404
    assert client.delete(path, headers=basic("admin")).status_code == 404


def test_the_delivery_log_pages_and_redelivers(app, client, published, engine, db_session):
    made = client.post(
        "/api/webhooks", json={**HOOK, "events": ["instance.started"]}, headers=basic("admin")
    ).json
    for _ in range(3):
        start(engine, latest("open"))
    path = f"/api/webhooks/{made['id']}/deliveries"
    page = client.get(f"{path}?per_page=2", headers=basic("admin")).json
    assert (page["total"], len(page["items"])) == (3, 2)
    item = page["items"][0]
    assert item["type"] == "instance.started"
    assert item["status"] == "pending"
    assert item["webhook_id"].startswith("msg_")
    again = client.post(f"{path}/{item['id']}/redeliver", headers=basic("admin"))
    assert again.status_code == 202
    assert client.post(f"{path}/999999/redeliver", headers=basic("admin")).status_code == 404
    assert client.get(f"{path}?page=0", headers=basic("admin")).status_code == 422
    assert _count(db_session, WebhookDelivery) == 3


def test_only_admins_manage_webhooks(client, demo):
    for user in ("operator", "designer", "alice"):
        assert client.get("/api/webhooks", headers=basic(user)).status_code == 403
        answer = client.post("/api/webhooks", json=HOOK, headers=basic(user))
        assert answer.status_code == 403
        assert answer.json["error"] == "forbidden"
    assert client.get("/api/webhooks").status_code == 401
