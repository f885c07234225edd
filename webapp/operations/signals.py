"""Signal broadcasts: the recent ones with their progress, whom one reached or started, and the
form that broadcasts one (checked, then confirmed with how many it reaches, like the API)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.models.statuses import BroadcastStatus
from webapp.operations.blueprint import bp
from webapp.permissions import can
from webapp.services import signals
from webapp.services.instances import InstanceError
from webapp.services.operations import labels
from webapp.web.access import permission_required
from webapp.web.failed_forms import failed_form, redirect_failed
from webapp.web.htmx import htmx_target

CONFIRM = "yes"
FIELDS = ("name", "payload", "partition")


def _typed(values: Mapping[str, str]) -> dict[str, str]:
    return {name: values.get(name, "") for name in FIELDS}


@bp.route("/signals")
def signal_list():
    broadcasts = signals.recent(current_user)
    context = {
        "broadcasts": broadcasts,
        "running": any(b.status != BroadcastStatus.DONE for b in broadcasts),
        "partitions": labels.partition_names(b.partition_id for b in broadcasts),
    }
    if htmx_target() == "signal-broadcasts":
        return render_template("operations/_signal_table.html", **context)
    failed = failed_form("signal")
    context.update(
        may_broadcast=can(current_user, "instances.start", scoped=False),
        choices=signals.partition_choices(current_user),
        errors=failed.errors if failed else {},
        values=failed.value_map() if failed else _typed(request.args),
    )
    return render_template("operations/signals.html", **context)


def _refused(error: InstanceError, typed: dict[str, str]):
    """Back to the form with the messages and what was typed; 403 for a user who may not."""
    db.session.rollback()
    if error.status == 403:
        abort(403)
    fields = error.fields or {"name": error.message}
    return redirect_failed(url_for("operations.signal_list"), "signal", fields, typed)


@bp.route("/signals", methods=["POST"])
@permission_required("instances.start")
def signal_broadcast():
    """Unconfirmed: check the form and show the confirmation; confirmed: broadcast."""
    typed = _typed(request.form)
    try:
        if request.form.get("confirm") != CONFIRM:
            signals.check_form(current_user, **typed)
            return redirect(url_for("operations.signal_confirm", **typed), 303)
        broadcast, made = signals.broadcast_form(
            current_user, **typed, once=request.form.get("once", "")
        )
    except InstanceError as error:
        return _refused(error, typed)
    if made:
        flash(f"Signal “{broadcast.name}” was broadcast.", "success")
    else:
        flash(f"Signal “{broadcast.name}” had already been broadcast from that page.", "info")
    return redirect(url_for("operations.signal_detail", broadcast_id=broadcast.id), 303)


@bp.route("/signals/confirm")
@permission_required("instances.start")
def signal_confirm():
    """ "Broadcast “go” to 3 waiting instances?": whom it reaches now, to confirm or go back."""
    typed = _typed(request.args)
    try:
        planned = signals.check_form(current_user, **typed)
    except InstanceError as error:
        return _refused(error, typed)
    waiting, starts = signals.audience(planned)
    partition = labels.partition_names([planned.partition_id]).get(planned.partition_id or 0)
    return render_template(
        "operations/signal_confirm.html",
        planned=planned,
        typed=typed,
        waiting=waiting,
        starts=starts,
        partition=partition,
        confirm=CONFIRM,
        once=secrets.token_urlsafe(16),
        back=url_for("operations.signal_list", **typed),
    )


@bp.route("/signals/<int:broadcast_id>")
def signal_detail(broadcast_id: int):
    try:
        broadcast = signals.get_broadcast(current_user, broadcast_id)
    except InstanceError:
        abort(404)
    context = {
        "broadcast": broadcast,
        "receipts": signals.reached(broadcast),
        "reached": signals.reached_count(broadcast),
        "partitions": labels.partition_names([broadcast.partition_id]),
    }
    if htmx_target() == "signal-progress":
        return render_template("operations/_signal_progress.html", **context)
    return render_template("operations/signal.html", **context)
