"""Start a process from the browser, then watch the instance on a small status page."""

from __future__ import annotations

from flask import abort, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required

from webapp.engine import EngineError
from webapp.engine.suspended_versions import check_startable
from webapp.extensions import db
from webapp.inbox.blueprint import bp
from webapp.inputs import whole_number
from webapp.models import OutboxMessage
from webapp.permissions import can
from webapp.process import forms
from webapp.process.naming import Namer
from webapp.services import instances, my_requests, readable, request_steps, scopes, tasks
from webapp.services.instances import InstanceError
from webapp.services.operations.detail import cancellation
from webapp.services.watch import live_mode
from webapp.web import live, spec_forms
from webapp.web.access import permission_required

# Region element id -> template of the requester's instance page (see webapp/web/live.py).
REGIONS = {
    "instance-summary": "inbox/live/_status.html",
    "instance-where": "inbox/live/_where.html",
    "instance-outbox": "inbox/live/_outbox.html",
    "instance-history": "inbox/live/_history.html",
}
POLLER = "instance-poll"


@bp.route("/processes")
@permission_required("instances.start")
def processes():
    rows = [
        {"process": process, "version": version, "form": instances.start_form(version)}
        for process, version in instances.startable_processes(current_user)
    ]
    return render_template("inbox/start.html", rows=rows)


@bp.route("/requests", endpoint="requests")
@permission_required("instances.start")
def my_requests_page():
    """The instances this person started: where each is now, or how it ended."""
    page, rows = my_requests.page_of_requests(
        current_user,
        whole_number(request.args.get("page"), 1, 1_000_000) or 1,
        current_app.config["PAGE_SIZE"],
    )
    return render_template("inbox/requests.html", page=page, rows=rows)


def _version_or_404(key: str):
    try:
        return instances.find_version(current_user, key)
    except InstanceError:
        abort(404)


def _start_form(version, formdata=None, errors=None):
    """The start event's form, built as task forms are; None when the start has no form."""
    spec = instances.start_form(version)
    if not spec:
        return None
    refresh_url = url_for("inbox.start_fields", key=version.process.key)
    return spec_forms.build(spec, None, formdata, errors=errors, refresh_url=refresh_url)


@bp.route("/processes/<key>/start", methods=["GET", "POST"])
@permission_required("instances.start")
def start(key: str):
    version = _version_or_404(key)
    if not instances.starts_by_hand(version):
        abort(409, description=instances.NO_HAND_START.format(name=version.process.name))
    try:
        check_startable(version)
    except EngineError as error:
        abort(409, description=error.message)
    spec = instances.start_form(version)
    business_key = request.form.get("business_key", "")
    formdata = request.form if request.method == "POST" else None
    errors: dict[str, str] = {}
    if request.method == "POST" and "refresh" not in request.form:
        values, errors = forms.coerce_submission(spec, request.form) if spec else ({}, {})
        try:
            clean_key = instances.clean_business_key(business_key)
            if not errors:
                instance = instances.start(
                    current_user, version, input=values, business_key=clean_key, via="ui"
                )
                flash(f"Started instance {instance.id} of {version.process.name}.", "success")
                first = tasks.next_task(current_user, instance.id)
                if first is not None:
                    return redirect(url_for("inbox.task", task_id=first.id))
                return redirect(url_for("inbox.instance", instance_id=instance.id))
        except InstanceError as error:
            db.session.rollback()
            errors.update(error.fields)
    status = 422 if errors else 200
    form = _start_form(version, formdata, errors)
    return render_template(
        "inbox/start_form.html",
        version=version,
        form=form,
        failed=spec_forms.error_summary(form, errors, [BUSINESS_KEY]),
        refreshes=bool(spec) and spec_forms.refreshes(spec),
        business_key=business_key,
        errors=errors,
    ), status


BUSINESS_KEY = ("business_key", "business_key", "Business key")


@bp.post("/processes/<key>/start/form")
@permission_required("instances.start")
def start_fields(key: str):
    """Re-render the start form's fields for the answers so far (`visibleIf` on the server)."""
    form = _start_form(_version_or_404(key), request.form)
    if form is None:
        abort(404)
    return render_template("_spec_fields.html", form=form)


def _instance_context(instance_id: int) -> dict:
    """The requester's view of an instance, its live regions rendered."""
    try:
        found = instances.get_instance(current_user, instance_id)
    except InstanceError:
        abort(404)
    document = found.process_version.document or {}
    nodes = document.get("nodes") or {}
    titles = Namer(nodes, document.get("flows") or {}).labels()
    open_tasks = instances.open_tasks(found)
    context = {
        "instance": found,
        "mode": live_mode(found),
        "cancellation": cancellation(found),
        "waits": request_steps.waiting_for(instances.current_tokens(found), nodes, titles),
        "tasks": open_tasks,
        "openable": {task.id for task in open_tasks if tasks.may_see(current_user, task)},
        "places": scopes.task_places(open_tasks),
        "steps": request_steps.steps(found.id, titles),
        "input_facts": readable.input_facts(document, found.input),
        "outbox": db.session.scalars(
            db.select(OutboxMessage)
            .where(OutboxMessage.instance_id == found.id)
            .order_by(OutboxMessage.id)
        ).all(),
        "titles": titles,
        "may_manage": can(current_user, "instances.manage", found.partition_id),
        "may_read": can(current_user, "instances.read", found.partition_id),
    }
    context["regions"] = live.render_regions(REGIONS, context)
    return context


@bp.route("/instances/<int:instance_id>")
@login_required
def instance(instance_id: int):
    context = _instance_context(instance_id)
    context["poller"] = live.poller(
        POLLER, "inbox.instance_live", context["regions"], context["mode"], instance_id=instance_id
    )
    return render_template("inbox/start_instance.html", **context)


@bp.route("/instances/<int:instance_id>/live")
@login_required
def instance_live(instance_id: int):
    """The page's poll: the regions that changed since the digests in the query, or 204."""
    context = _instance_context(instance_id)
    return live.poll_response(
        POLLER, "inbox.instance_live", context["regions"], context["mode"], instance_id=instance_id
    )
