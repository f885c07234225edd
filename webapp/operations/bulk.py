"""Bulk changes (cancel, retry, ...): submit a selection, then watch the progress per instance."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.inputs import MAX_INT32, whole_number
from webapp.models.statuses import BulkStatus
from webapp.operations.blueprint import bp
from webapp.services.operations import bulk
from webapp.services.operations.bulk_actions import ACTIONS, allowed, may_resume
from webapp.services.operations.common import OperationsError
from webapp.services.operations.filters import Filters, read_filters
from webapp.web.failed_forms import redirect_failed
from webapp.web.htmx import htmx_target

CONFIRM = "yes"


def _require_a_bulk_action() -> None:
    """403 unless the user may start at least one bulk action (each checks its own permission
    again when the selection is made)."""
    if not allowed(current_user):
        abort(403)


def _request_parts(values) -> tuple[str, str, str, list[int], Filters]:
    """(action, reason, scope, ticked ids, filters) of a bulk form or its confirmation URL."""
    ids = [i for v in values.getlist("ids") if (i := whole_number(v, 1, MAX_INT32))]
    scope = "filter" if values.get("scope") == "filter" else "selected"
    return values.get("action", ""), values.get("reason", ""), scope, ids, read_filters(values)


def _selection(action: str, reason: str, scope: str, ids: list[int], filters: Filters) -> list[int]:
    everything = scope == "filter"
    return bulk.selection(
        current_user,
        action,
        reason=reason,
        ids=None if everything else ids,
        filters=filters if everything else None,
    )


def _back_to_list(error: OperationsError, action, reason, scope, ids, filters: Filters):
    """Back to the list with the errors, the ticks and what was typed (Post/Redirect/Get)."""
    db.session.rollback()
    if error.status == 403:
        abort(403)
    typed = {"action": action, "reason": reason, "scope": scope, "ids": [str(i) for i in ids]}
    args: dict[str, Any] = filters.args()
    url = url_for("operations.instance_list", **args)
    return redirect_failed(url, "bulk", error.fields or {"selection": error.message}, typed)


@bp.route("/bulk", methods=["POST"])
def bulk_submit():
    """Check the action; unconfirmed, show the confirmation; confirmed, start it."""
    _require_a_bulk_action()
    action, reason, scope, ids, filters = _request_parts(request.form)
    kind = ACTIONS.get(action)
    if kind is not None and kind.setup:
        return redirect(url_for(kind.setup, ids=ids, scope=scope, **filters.args()), 303)
    if request.form.get("confirm") != CONFIRM:
        try:
            _selection(action, reason, scope, ids, filters)
        except OperationsError as error:
            return _back_to_list(error, action, reason, scope, ids, filters)
        wanted = {"action": action, "reason": reason.strip(), "scope": scope, **filters.args()}
        return redirect(url_for("operations.bulk_confirm", ids=ids, **wanted), 303)
    everything = scope == "filter"
    try:
        operation = bulk.create(
            current_user,
            action,
            reason=reason,
            ids=None if everything else ids,
            filters=filters if everything else None,
        )
    except OperationsError as error:
        return _back_to_list(error, action, reason, scope, ids, filters)
    if not bulk.enqueue(operation):
        flash("The queue could not be reached; press Resume once it is back.", "error")
    return redirect(url_for("operations.bulk_progress", operation_id=operation.id), 303)


@bp.route("/bulk/confirm")
def bulk_confirm():
    """ "Cancel N instances?": what the action would take now, to confirm or go back."""
    _require_a_bulk_action()
    action, reason, scope, ids, filters = _request_parts(request.args)
    kind = ACTIONS.get(action)
    if kind is not None and kind.setup:
        return redirect(url_for(kind.setup, ids=ids, scope=scope, **filters.args()), 303)
    try:
        selected = _selection(action, reason, scope, ids, filters)
    except OperationsError as error:
        return _back_to_list(error, action, reason, scope, ids, filters)
    back = url_for("operations.instance_list", ids=ids, action=action, reason=reason.strip(),
                   scope=scope, **filters.args())  # fmt: skip
    return render_template(
        "operations/bulk_confirm.html",
        action=action,
        kind=ACTIONS[action],
        reason=reason.strip(),
        scope=scope,
        ids=ids,
        filters=filters,
        selected=selected,
        back=back,
        confirm=CONFIRM,
    )


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
    context["may_resume"] = may_resume(current_user, operation.action)
    if htmx_target() == "bulk-progress":
        return render_template("operations/_bulk_progress.html", **context)
    return render_template("operations/bulk.html", **context)


@bp.route("/bulk/<int:operation_id>/resume", methods=["POST"])
def bulk_resume(operation_id: int):
    """Send a stuck operation to the workers again; needs its action's permission."""
    operation = _operation(operation_id)
    if not may_resume(current_user, operation.action):
        abort(403)
    if operation.status != BulkStatus.DONE and not bulk.enqueue(operation):
        flash("The queue still cannot be reached.", "error")
    return redirect(url_for("operations.bulk_progress", operation_id=operation.id), 303)
