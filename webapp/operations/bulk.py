"""Bulk cancel and retry: submit a selection, then watch the worker's progress per instance."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.htmx_support import htmx_target
from webapp.inputs import MAX_INT32, whole_number
from webapp.operations import bp
from webapp.operations.instances import render_list
from webapp.permissions import permission_required
from webapp.services.operations import bulk
from webapp.services.operations.common import OperationsError
from webapp.services.operations.filters import read_filters


@bp.route("/bulk", methods=["POST"])
@permission_required("instances.manage")
def bulk_submit():
    filters = read_filters(request.form)
    everything = request.form.get("scope") == "filter"
    ids = [i for v in request.form.getlist("ids") if (i := whole_number(v, 1, MAX_INT32))]
    try:
        operation = bulk.create(
            current_user,
            request.form.get("action", ""),
            reason=request.form.get("reason", ""),
            ids=None if everything else ids,
            filters=filters if everything else None,
        )
    except OperationsError as error:
        db.session.rollback()
        if error.status == 403:
            abort(403)
        return render_list(filters, bulk_errors=error.fields or {"selection": error.message})
    if not bulk.enqueue(operation):
        flash("The queue could not be reached; press Resume once it is back.", "error")
    return redirect(url_for("operations.bulk_progress", operation_id=operation.id), 303)


def _operation(operation_id: int):
    try:
        return bulk.get_operation(current_user, operation_id)
    except OperationsError:
        abort(404)


@bp.route("/bulk/<int:operation_id>")
def bulk_progress(operation_id: int):
    operation = _operation(operation_id)
    context = {
        "operation": operation,
        "counts": bulk.counts(operation),
        "items": bulk.items(operation),
    }
    if htmx_target() == "bulk-progress":
        return render_template("operations/_bulk_progress.html", **context)
    return render_template("operations/bulk.html", **context)


@bp.route("/bulk/<int:operation_id>/resume", methods=["POST"])
@permission_required("instances.manage")
def bulk_resume(operation_id: int):
    operation = _operation(operation_id)
    if operation.status != "done" and not bulk.enqueue(operation):
        flash("The queue still cannot be reached.", "error")
    return redirect(url_for("operations.bulk_progress", operation_id=operation.id), 303)
