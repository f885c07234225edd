"""The overview: where instances are, what failed, what is overdue, the last day by hour.

The page refreshes by itself part by part (webapp/web/live.py) every few seconds: a part that
changed is replaced, the rest (an opened "Numbers per hour", scroll) stays as it was.
"""

from __future__ import annotations

from typing import Any

from flask import render_template
from flask_login import current_user
from sqlalchemy import select

from webapp.extensions import db
from webapp.models import BulkOperation
from webapp.operations.blueprint import bp
from webapp.services.operations import labels, overview
from webapp.web import live

REGIONS = {
    "overview-status": "operations/overview/_status.html",
    "overview-incidents": "operations/overview/_incidents.html",
    "overview-chart": "operations/overview/_chart.html",
    "overview-hours": "operations/overview/_hours.html",
    "overview-processes": "operations/overview/_processes.html",
    "overview-overdue-count": "operations/overview/_overdue_count.html",
    "overview-overdue": "operations/overview/_overdue.html",
    "overview-bulk": "operations/overview/_bulk.html",
}
POLLER = "overview-poll"
MODE = "steady"


def _regions() -> dict[str, Any]:
    """Every part of the overview, rendered, by region id."""
    totals, per_process = overview.status_counts(current_user)
    overdue_count, overdue = overview.overdue_tasks(current_user)
    hours = overview.last_day(current_user)
    incidents = overview.incidents(current_user)
    recent_bulk = db.session.scalars(
        select(BulkOperation)
        .where(BulkOperation.actor_id == current_user.id)
        .order_by(BulkOperation.id.desc())
        .limit(5)
    ).all()
    context = {
        "totals": totals,
        "per_process": per_process,
        "incidents": incidents,
        "process_names": labels.process_names(
            [*per_process, *(row["process_key"] for row in incidents)]
        ),
        "overdue_count": overdue_count,
        "overdue": overdue,
        "hours": hours,
        "peak": max([1, *(max(h.started, h.completed, h.failed) for h in hours)]),
        "recent_bulk": recent_bulk,
    }
    return live.render_regions(REGIONS, context)


@bp.route("/")
def index():
    regions = _regions()
    poller = live.poller(POLLER, "operations.index_live", regions, MODE)
    return render_template("operations/index.html", regions=regions, poller=poller)


@bp.route("/live")
def index_live():
    """The overview's poll: the parts that changed since the digests in the query, or 204."""
    return live.poll_response(POLLER, "operations.index_live", _regions(), MODE)
