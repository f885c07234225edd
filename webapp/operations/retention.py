"""Retention settings: the default, each process's own limit, and what the next run deletes."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from webapp.extensions import db
from webapp.models import Process
from webapp.operations.blueprint import bp
from webapp.permissions import can, partition_filter
from webapp.services.operations import retention
from webapp.services.operations.common import OperationsError
from webapp.web.access import permission_required
from webapp.web.failed_forms import failed_form, redirect_failed


def render_retention():
    """The page; a failed save (kept by `set_retention`) shows on its process's row."""
    failed = failed_form("retention")
    key = failed.value("key") if failed else ""
    processes = db.session.scalars(
        select(Process)
        .where(partition_filter(Process.partition_id, current_user))
        .order_by(Process.key)
    ).all()
    shown = {process.key for process in processes}
    return render_template(
        "operations/retention.html",
        processes=processes,
        policies=retention.policies(),
        default_days=retention.default_days(),
        preview={key: n for key, n in retention.preview(db.session).items() if key in shown},
        describe=retention.describe,
        may_manage={p.id: can(current_user, "instances.manage", p.partition_id) for p in processes},
        errors={key: failed.errors} if failed else {},
        values=failed.value_map() if failed else {},
    )


@bp.route("/retention")
def retention_settings():
    return render_retention()


@bp.route("/retention/<key>", methods=["POST"])
@permission_required("instances.manage")
def set_retention(key: str):
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None or not can(current_user, "instances.read", process.partition_id):
        abort(404)
    try:
        policy = retention.set_policy(current_user, process, request.form.get("days", ""))
    except OperationsError as error:
        db.session.rollback()
        if error.status == 404:
            abort(404)
        url = url_for("operations.retention_settings")
        typed = {"key": process.key, "days": request.form.get("days", "")}
        return redirect_failed(url, "retention", error.fields, typed)
    days = retention.default_days() if policy is None else policy.days
    shown = retention.describe(days) + (" (the default)" if policy is None else "")
    flash(f"Finished instances of {process.key}: {shown}.", "success")
    return redirect(url_for("operations.retention_settings"), 303)
