"""API endpoints for webhooks out: register, list, change, rotate, delete, and the delivery log
(docs/webhooks.md); all need the admin permission."""

from __future__ import annotations

from flask import g, jsonify, request, url_for

from webapp.api.blueprint import bp
from webapp.api.contract import Reply, documented
from webapp.api.errors import api_error
from webapp.api.schemas import ref
from webapp.api.views import json_body, page_of, paging
from webapp.permissions import can
from webapp.services import webhooks

MAX_PER_PAGE = 100


@bp.before_request
def admins_only():
    """Webhooks (their secrets included) are for admins only; runs after `authenticate`."""
    if not (request.endpoint or "").startswith("api.webhook"):
        return None
    if g.get("api_user") is not None and not can(g.api_user, "admin"):
        return api_error("forbidden", "Managing webhooks needs the admin permission.", 403)
    return None


@bp.post("/webhooks")
@documented(
    "Register a webhook",
    description="Needs `admin`; `url` and `events` are required. The answer shows the secret.",
    body=ref("WebhookRequest"),
    responses={201: Reply("Registered.", ref("Webhook"), {"Location": "The webhook's URL."})},
    errors=(422,),
    tag="webhooks",
)
def webhook_create():
    webhook = webhooks.create(g.api_user, json_body())
    response = jsonify(webhooks.as_dict(webhook, with_secret=True))
    response.status_code = 201
    response.headers["Location"] = url_for("api.webhook_get", webhook_id=webhook.id)
    return response


@bp.get("/webhooks")
@documented(
    "List webhooks",
    responses={200: Reply("Every webhook (without secrets).", ref("WebhookList"))},
    tag="webhooks",
)
def webhook_list():
    return jsonify(items=[webhooks.as_dict(webhook) for webhook in webhooks.listing()])


@bp.get("/webhooks/<int:webhook_id>")
@documented(
    "Read a webhook",
    responses={200: Reply("The webhook.", ref("Webhook"))},
    tag="webhooks",
)
def webhook_get(webhook_id: int):
    return jsonify(webhooks.as_dict(webhooks.get(webhook_id), with_secret=True))


@bp.patch("/webhooks/<int:webhook_id>")
@documented(
    "Change a webhook",
    body=ref("WebhookRequest"),
    responses={200: Reply("The webhook.", ref("Webhook"))},
    errors=(422,),
    tag="webhooks",
)
def webhook_update(webhook_id: int):
    return jsonify(webhooks.as_dict(webhooks.update_webhook(webhook_id, json_body())))


@bp.delete("/webhooks/<int:webhook_id>")
@documented(
    "Delete a webhook",
    responses={204: Reply("Deleted.")},
    tag="webhooks",
)
def webhook_delete(webhook_id: int):
    webhooks.delete(webhook_id)
    return "", 204


@bp.post("/webhooks/<int:webhook_id>/rotate")
@documented(
    "Rotate a webhook's secret",
    description="Both secrets sign deliveries for `overlap_hours` (24).",
    body=ref("RotateRequest"),
    body_required=False,
    responses={200: Reply("The webhook with its new secret.", ref("Webhook"))},
    errors=(422,),
    tag="webhooks",
)
def webhook_rotate(webhook_id: int):
    body = json_body(required=False)
    webhook = webhooks.rotate(webhook_id, body.get("overlap_hours", 24))
    return jsonify(webhooks.as_dict(webhook, with_secret=True))


@bp.post("/webhooks/<int:webhook_id>/resume")
@documented(
    "Resume a paused webhook",
    body=ref("EmptyRequest"),
    body_required=False,
    responses={200: Reply("The webhook.", ref("Webhook"))},
    errors=(409, 422),
    tag="webhooks",
)
def webhook_resume(webhook_id: int):
    return jsonify(webhooks.as_dict(webhooks.resume(webhook_id)))


@bp.get("/webhooks/<int:webhook_id>/deliveries")
@documented(
    "List a webhook's deliveries",
    params=(*paging("Deliveries"),),
    responses={200: Reply("A page of deliveries, newest first.", ref("DeliveryPage"))},
    errors=(422,),
    tag="webhooks",
)
def webhook_deliveries(webhook_id: int):
    webhooks.get(webhook_id)
    return page_of(webhooks.deliveries_query(webhook_id), webhooks.delivery_dict)


@bp.post("/webhooks/<int:webhook_id>/deliveries/<int:delivery_id>/redeliver")
@documented(
    "Send a delivery again",
    body=ref("EmptyRequest"),
    body_required=False,
    responses={202: Reply("Queued again.", ref("Delivery"))},
    errors=(409, 422),
    tag="webhooks",
)
def webhook_redeliver(webhook_id: int, delivery_id: int):
    delivery = webhooks.redeliver(webhook_id, delivery_id)
    return jsonify(webhooks.delivery_dict(delivery)), 202
