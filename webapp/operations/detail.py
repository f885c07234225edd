"""One instance: diagram with tokens, live history, data, tasks, jobs; cancel, retry, variables."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.extensions import db
from webapp.inputs import MAX_INT64, whole_number
from webapp.operations.blueprint import bp
from webapp.permissions import can
from webapp.process.naming import Namer
from webapp.services import adhoc, scopes
from webapp.services import instances as instance_service
from webapp.services.instances import InstanceError
from webapp.services.operations import detail, structure
from webapp.services.operations.common import OperationsError, get_instance
from webapp.services.watch import live_mode
from webapp.web import live
from webapp.web.access import permission_required
from webapp.web.failed_forms import failed_form, redirect_failed

# Region element id -> template; the history region only on its first (newest) page.
REGIONS = {
    "live-actions": "operations/live/_actions.html",
    "live-outcome": "operations/live/_outcome.html",
    "live-facts": "operations/live/_facts.html",
    "live-tasks": "operations/live/_tasks.html",
    "live-jobs": "operations/live/_jobs.html",
    "live-tokens": "operations/live/_tokens.html",
    "live-calls": "operations/live/_calls.html",
    "live-decisions": "operations/live/_decisions.html",
    "data-vars": "operations/live/_vars.html",
    "data-nodes": "operations/live/_nodes.html",
    "live-adhoc": "operations/live/_adhoc.html",
}
HISTORY_REGION = {"history": "operations/_history.html"}
POLLER = "live-poll"


def _instance(instance_id: int, permission: str = "instances.read"):
    try:
        return get_instance(current_user, instance_id, permission)
    except OperationsError:
        abort(404)


def _before() -> int | None:
    return whole_number(request.args.get("before", ""), 0, MAX_INT64)


def _poll_args(instance, before: int | None) -> dict[str, Any]:
    return {"instance_id": instance.id, **({"before": before} if before is not None else {})}


def _live_context(instance, before: int | None = None) -> dict[str, Any]:
    """The live regions, rendered, and the poller that refreshes those that change."""
    version = instance.process_version
    nodes = version.document.get("nodes") or {}
    mode = live_mode(instance)
    state = detail.diagram_state(instance)
    for node_id, call in state["calls"].items():
        call["href"] = url_for("operations.instance_detail", instance_id=call["latest"])
        if call["count"] > 1:
            call["href"] = url_for("operations.instance_list", parent=instance.id)
        call["text"] = _calls_text(call["count"], call["latest"], node_id, nodes)
    children, children_total = structure.called(instance)
    tasks = detail.open_tasks(instance.id)
    context = {
        "instance": instance,
        "titles": Namer(nodes, version.document.get("flows") or {}).labels(),
        "scopes": scopes.scopes_by_node(version.document),
        "state": state,
        "tokens": structure.token_table(instance),
        "caller": structure.caller(current_user, instance),
        "children": children,
        "children_total": children_total,
        "decisions": detail.decision_evaluations(instance.id),
        "child_incidents": structure.child_incidents([instance.id]).get(instance.id, []),
        "history": detail.history_page(instance.id, before),
        "before": before,
        "tasks": tasks,
        "task_places": scopes.task_places(tasks),
        "jobs": detail.jobs(instance.id),
        "mode": mode,
        "cancellation": detail.cancellation(instance),
        "may_manage": can(current_user, "instances.manage", instance.partition_id),
        "may_modify": can(current_user, "instances.modify", instance.partition_id),
        "editable": detail.editable(instance),
        "adhoc": adhoc.running(instance),
    }
    templates = REGIONS if before is not None else {**REGIONS, **HISTORY_REGION}
    context["regions"] = live.render_regions(templates, context)
    return context


def _calls_text(count: int, latest: int, node_id: str, nodes: dict[str, Any]) -> str:
    """The link on a call activity in the diagram: its child, or how many it started."""
    title = (nodes.get(node_id) or {}).get("title") or node_id
    if count == 1:
        return f"Called instance {latest} of {title}"
    return f"{count} instances called by {title}"


def render_detail(
    instance,
    *,
    errors: dict[str, str] | None = None,
    values: dict[str, str] | None = None,
    status: int = 200,
):
    """The detail page; `errors` show inline (actions, cancel reason, variable fields)."""
    before = _before()
    context = _live_context(instance, before)
    context.update(
        poller=live.poller(
            POLLER,
            "operations.instance_live",
            context["regions"],
            context["mode"],
            **_poll_args(instance, before),
        ),
        version=instance.process_version,
        errors=errors or {},
        values=values or {},
    )
    return render_template("operations/instance.html", **context), status


@bp.route("/instances/<int:instance_id>")
def instance_detail(instance_id: int):
    instance = _instance(instance_id)
    failed = failed_form("instance")
    if failed is not None:
        return render_detail(instance, errors=failed.errors, values=failed.value_map())
    return render_detail(instance)


@bp.route("/instances/<int:instance_id>/live")
def instance_live(instance_id: int):
    """The page's poll: the regions that changed since the digests in the query, or 204."""
    instance = _instance(instance_id)
    before = _before()
    context = _live_context(instance, before)
    return live.poll_response(
        POLLER,
        "operations.instance_live",
        context["regions"],
        context["mode"],
        **_poll_args(instance, before),
    )


def _failed(instance_id: int, errors: dict[str, str], values: dict[str, str] | None = None):
    """Back to the instance page with the errors and typed values (Post/Redirect/Get)."""
    url = url_for("operations.instance_detail", instance_id=instance_id)
    return redirect_failed(url, "instance", errors, values)


def _act(instance_id: int, change, done: str, values: dict[str, str] | None = None):
    """Make one change to the instance; a refusal goes back to its page with the message."""
    _instance(instance_id, "instances.manage")
    try:
        change()
    except InstanceError as error:
        db.session.rollback()
        if error.status == 404:
            abort(404)
        return _failed(instance_id, error.fields or {"action": error.message}, values)
    flash(done, "success")
    return redirect(url_for("operations.instance_detail", instance_id=instance_id), 303)


@bp.route("/instances/<int:instance_id>/cancel", methods=["POST"])
@permission_required("instances.manage")
def cancel_instance(instance_id: int):
    reason = request.form.get("reason", "").strip()
    if not reason:
        _instance(instance_id, "instances.manage")
        return _failed(instance_id, {"reason": "Say why the instance is cancelled."})
    return _act(
        instance_id,
        lambda: instance_service.cancel(current_user, instance_id, reason),
        f"Instance {instance_id} was cancelled.",
        {"reason": reason},
    )


@bp.route("/instances/<int:instance_id>/retry", methods=["POST"])
@permission_required("instances.manage")
def retry_instance(instance_id: int):
    return _act(
        instance_id,
        lambda: instance_service.retry(current_user, instance_id),
        f"Instance {instance_id} runs again.",
    )


@bp.route("/instances/<int:instance_id>/activities", methods=["POST"])
@permission_required("instances.manage")
def activate_activity(instance_id: int):
    """Start one enabled activity of a running ad-hoc sub-process (`target`: token:activity)."""
    scope, _, activity = request.form.get("target", "").partition(":")
    scope_id = whole_number(scope, 0, MAX_INT64)
    instance = _instance(instance_id, "instances.manage")
    if scope_id is None or not activity:
        return _failed(instance_id, {"action": "Choose an activity to start."})
    nodes = instance.process_version.document.get("nodes") or {}
    title = (nodes.get(activity) or {}).get("title") or activity
    return _act(
        instance_id,
        lambda: adhoc.activate(current_user, instance_id, activity, scope_id),
        f"“{title}” started.",
    )


@bp.route("/instances/<int:instance_id>/variables", methods=["POST"])
@permission_required("instances.manage")
def set_variable(instance_id: int):
    name, value = request.form.get("name", ""), request.form.get("value", "")
    return _act(
        instance_id,
        lambda: detail.set_variable(current_user, instance_id, name, value),
        f"Variable {name.strip()} was set.",
        {"name": name, "value": value},
    )
