"""Schedules: each published timer start event with its next runs; pause and resume."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.infra.pagination import paginate
from webapp.inputs import MAX_INT32
from webapp.models.base import utcnow
from webapp.models.schedules import Schedule
from webapp.operations.blueprint import bp
from webapp.services import schedules
from webapp.web.access import permission_required
from webapp.web.htmx import htmx_target, is_htmx

PER_PAGE = 25


@bp.app_template_filter("schedule_time")
def schedule_time(value: datetime | None, timezone: str = "UTC") -> str:
    """A run time in UTC to the second, and on the schedule's own clock when that is not UTC."""
    if value is None:
        return ""
    shown = value.strftime("%Y-%m-%d %H:%M:%S UTC")
    if timezone and timezone != "UTC":
        local = value.astimezone(ZoneInfo(timezone))
        shown += f" ({local.strftime('%Y-%m-%d %H:%M:%S')} {timezone})"
    return shown


@bp.route("/schedules")
def schedule_list():
    now = utcnow()
    number = request.args.get("page", 1, type=int) or 1
    page = paginate(schedules.visible(current_user), min(number, MAX_INT32), PER_PAGE)
    views = [schedules.describe(row, current_user, now) for row in page.items]
    partial = htmx_target() == "schedules-table"
    template = "operations/_schedules_table.html" if partial else "operations/schedules.html"
    return render_template(template, page=page, views=views)


@bp.route("/schedules/<int:schedule_id>/pause", methods=["POST"])
@permission_required("instances.manage")
def pause_schedule(schedule_id: int):
    return _change(schedules.pause, schedule_id, "paused")


@bp.route("/schedules/<int:schedule_id>/resume", methods=["POST"])
@permission_required("instances.manage")
def resume_schedule(schedule_id: int):
    return _change(schedules.resume, schedule_id, "resumed")


def _change(action: Callable[..., Schedule], schedule_id: int, done: str):
    """Pause or resume; htmx gets the schedule's row back, a plain form a redirect."""
    if schedule_id > MAX_INT32:
        abort(404)
    try:
        row = action(current_user, schedule_id)
    except schedules.ScheduleRefused as error:
        db.session.rollback()
        abort(error.status)
    if is_htmx():
        view = schedules.describe(row, current_user)
        return render_template("operations/_schedule_row.html", view=view, announce=done)
    flash(f"Schedule of {row.process.key} ({row.node_id}) {done}.", "success")
    page = request.form.get("page", type=int) or 1
    return redirect(url_for("operations.schedule_list", page=page), 303)
