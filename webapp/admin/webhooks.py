"""Admin pages for webhooks out: register, the delivery log, redeliver, rotate, resume, delete."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from webapp.admin.blueprint import bp
from webapp.admin.webhook_forms import RotateForm, WebhookForm
from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.models import Partition, Webhook
from webapp.services import webhooks
from webapp.services.instances import InstanceError

PER_PAGE = 25
FORM_FIELDS = {"url", "description", "events", "process_key", "partition"}


def _partition_choices(form: WebhookForm) -> None:
    partitions = db.session.scalars(select(Partition).order_by(Partition.name))
    form.partition.choices = [("", "Any partition")] + [
        (p.key, f"{p.name} ({p.key})") for p in partitions
    ]


@bp.route("/webhooks", methods=["GET", "POST"])
def webhook_list():
    form = WebhookForm()
    _partition_choices(form)
    if form.validate_on_submit():
        data = {name: form[name].data for name in FORM_FIELDS}
        try:
            webhook = webhooks.create(current_user, data)
        except InstanceError as error:
            for name, message in error.fields.items():
                form[name if name in FORM_FIELDS else "url"].errors.append(message)
        else:
            flash("Webhook registered. Copy its signing secret below.", "success")
            return redirect(url_for("admin.webhook_detail", webhook_id=webhook.id))
    status = 422 if request.method == "POST" else 200
    return (
        render_template(
            "admin/webhooks.html",
            form=form,
            hooks=[webhooks.as_dict(hook) for hook in webhooks.listing()],
        ),
        status,
    )


@bp.route("/webhooks/<int:webhook_id>")
def webhook_detail(webhook_id: int):
    return _detail(webhook_id, RotateForm())


def _detail(webhook_id: int, rotate_form: RotateForm, status: int = 200):
    webhook = db.get_or_404(Webhook, webhook_id)
    page = paginate(
        webhooks.deliveries_query(webhook.id), request.args.get("page", 1, type=int), PER_PAGE
    )
    return (
        render_template(
            "admin/webhook.html",
            hook=webhook,
            shown=webhooks.as_dict(webhook),
            page=page,
            rotate_form=rotate_form,
            pending=webhooks.pending_count(webhook.id),
        ),
        status,
    )


@bp.post("/webhooks/<int:webhook_id>/rotate")
def webhook_rotate(webhook_id: int):
    db.get_or_404(Webhook, webhook_id)
    form = RotateForm()
    if not form.validate_on_submit():
        return _detail(webhook_id, form, 422)
    webhooks.rotate(webhook_id, float(form.overlap_hours.data or 0))
    flash("New secret made; receivers should switch to it before the old one stops.", "success")
    return redirect(url_for("admin.webhook_detail", webhook_id=webhook_id))


@bp.post("/webhooks/<int:webhook_id>/resume")
def webhook_resume(webhook_id: int):
    db.get_or_404(Webhook, webhook_id)
    webhooks.resume(webhook_id)
    flash("Webhook resumed: waiting deliveries are sent again.", "success")
    return redirect(url_for("admin.webhook_detail", webhook_id=webhook_id))


@bp.post("/webhooks/<int:webhook_id>/active")
def webhook_active(webhook_id: int):
    webhook = db.get_or_404(Webhook, webhook_id)
    webhooks.update_webhook(webhook_id, {"active": not webhook.active})
    flash("Webhook switched " + ("on." if webhook.active else "off."), "success")
    return redirect(url_for("admin.webhook_detail", webhook_id=webhook_id))


@bp.post("/webhooks/<int:webhook_id>/delete")
def webhook_delete(webhook_id: int):
    db.get_or_404(Webhook, webhook_id)
    webhooks.delete(webhook_id)
    flash("Webhook deleted.", "success")
    return redirect(url_for("admin.webhook_list"))


@bp.post("/webhooks/<int:webhook_id>/deliveries/<int:delivery_id>/redeliver")
def webhook_redeliver(webhook_id: int, delivery_id: int):
    try:
        webhooks.redeliver(webhook_id, delivery_id)
    except InstanceError:
        abort(404)
    flash(f"Delivery {delivery_id} will be sent again.", "success")
    return redirect(url_for("admin.webhook_detail", webhook_id=webhook_id))
