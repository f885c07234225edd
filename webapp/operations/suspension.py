"""Suspend and resume: an instance from its page, a process version from its versions page."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.operations.blueprint import bp
from webapp.services.operations import suspension
from webapp.services.operations.common import OperationsError
from webapp.web.access import permission_required
from webapp.web.failed_forms import failed_form, redirect_failed

PERMISSION = "instances.modify"


@bp.app_template_global()
def suspension_of(instance: Any) -> dict[str, Any]:
    """What the instance page shows about suspending: whether the user may, and what waits."""
    suspended = instance.suspended_at is not None
    return {
        "may_modify": suspension.may_modify(current_user, instance.partition_id),
        "held": suspension.held_count(instance.id) if suspended else 0,
    }


def _back_to_instance(instance_id: int, errors: dict[str, str], values: dict[str, str]):
    url = url_for("operations.instance_detail", instance_id=instance_id)
    return redirect_failed(url, "instance", errors, values)


def _change_instance(instance_id: int, change, done: str, field: str, reason: str):
    try:
        change()
    except OperationsError as error:
        db.session.rollback()
        if error.status == 404:
            abort(404)
        if error.status == 403:
            abort(403)
        errors = {field: error.fields["reason"]} if "reason" in error.fields else {}
        return _back_to_instance(instance_id, errors or {"action": error.message}, {field: reason})
    flash(done, "success")
    return redirect(url_for("operations.instance_detail", instance_id=instance_id), 303)


@bp.route("/instances/<int:instance_id>/suspend", methods=["POST"])
@permission_required(PERMISSION)
def suspend_instance(instance_id: int):
    reason = request.form.get("reason", "")
    return _change_instance(
        instance_id,
        lambda: suspension.suspend(current_user, instance_id, reason),
        f"Instance {instance_id} is suspended: nothing of it moves until it is resumed.",
        "suspend_reason",
        reason,
    )


@bp.route("/instances/<int:instance_id>/resume", methods=["POST"])
@permission_required(PERMISSION)
def resume_instance(instance_id: int):
    reason = request.form.get("reason", "")
    return _change_instance(
        instance_id,
        lambda: suspension.resume(current_user, instance_id, reason),
        f"Instance {instance_id} is resumed: what waited is applied.",
        "resume_reason",
        reason,
    )


# --- versions ---------------------------------------------------------------------------------


@bp.route("/processes/<key>/versions")
@permission_required(PERMISSION)
def process_versions(key: str):
    try:
        process, versions = suspension.process_versions(current_user, key)
    except OperationsError:
        abort(404)
    failed = failed_form("versions")
    return render_template(
        "operations/versions.html",
        process=process,
        versions=versions,
        errors=failed.errors if failed else {},
        values=failed.value_map() if failed else {},
    )


def _change_version(key: str, number: int, change, done: str):
    reason = request.form.get("reason", "")
    try:
        version, operation_id = change(reason, request.form.get("instances") == "1")
    except OperationsError as error:
        db.session.rollback()
        if error.status == 404:
            abort(404)
        url = url_for("operations.process_versions", key=key)
        field = f"reason-{number}"
        errors = {field: error.fields["reason"]} if "reason" in error.fields else {}
        return redirect_failed(
            url, "versions", errors or {"action": error.message}, {field: reason}
        )
    flash(done.format(number=version.number), "success")
    if operation_id is not None:
        return redirect(url_for("operations.bulk_progress", operation_id=operation_id), 303)
    return redirect(url_for("operations.process_versions", key=key), 303)


@bp.route("/processes/<key>/versions/<int:number>/suspend", methods=["POST"])
@permission_required(PERMISSION)
def suspend_version(key: str, number: int):
    return _change_version(
        key,
        number,
        lambda reason, instances: suspension.suspend_version(
            current_user, key, number, reason, instances=instances
        ),
        "Version {number} is suspended: it starts no instance until it is resumed.",
    )


@bp.route("/processes/<key>/versions/<int:number>/resume", methods=["POST"])
@permission_required(PERMISSION)
def resume_version(key: str, number: int):
    return _change_version(
        key,
        number,
        lambda reason, instances: suspension.resume_version(
            current_user, key, number, reason, instances=instances
        ),
        "Version {number} is resumed: it starts instances again.",
    )
