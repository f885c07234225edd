"""Signal broadcasts: the recent ones with their progress, and whom one reached or started."""

from __future__ import annotations

from flask import abort, render_template
from flask_login import current_user

from webapp.htmx_support import htmx_target
from webapp.operations import bp
from webapp.services import signals
from webapp.services.instances import InstanceError
from webapp.services.operations import labels


@bp.route("/signals")
def signal_list():
    broadcasts = signals.recent(current_user)
    context = {
        "broadcasts": broadcasts,
        "running": any(b.status != "done" for b in broadcasts),
        "partitions": labels.partition_names(b.partition_id for b in broadcasts),
    }
    if htmx_target() == "signal-broadcasts":
        return render_template("operations/_signal_table.html", **context)
    return render_template("operations/signals.html", **context)


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
