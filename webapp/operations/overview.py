"""The overview: where instances are, what failed, what is overdue, the last day by hour."""

from __future__ import annotations

from flask import render_template
from flask_login import current_user
from sqlalchemy import select

from webapp.extensions import db
from webapp.models import BulkOperation
from webapp.operations import bp
from webapp.services.operations import labels, overview


@bp.route("/")
def index():
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
    return render_template(
        "operations/index.html",
        totals=totals,
        per_process=per_process,
        incidents=incidents,
        process_names=labels.process_names(
            [*per_process, *(row["process_key"] for row in incidents)]
        ),
        overdue_count=overdue_count,
        overdue=overdue,
        hours=hours,
        peak=max([1, *(max(h.started, h.completed, h.failed) for h in hours)]),
        recent_bulk=recent_bulk,
    )
