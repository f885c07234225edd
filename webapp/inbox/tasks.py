"""The task inbox: lists with filters, the task page with its generated form, and task actions.

Views stay thin: `services.tasks` decides access and runs each action as one locked transaction.
"""

from __future__ import annotations

from typing import Any

from flask import (
    abort,
    current_app,
    flash,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required
from sqlalchemy import select
from werkzeug.wrappers import Response

from webapp.engine.context import context as instance_context
from webapp.extensions import db
from webapp.inbox.blueprint import bp
from webapp.inbox.filters import DUE, SORTS, TABS, InboxFilters
from webapp.inbox.forms import ReassignForm
from webapp.infra.pagination import paginate
from webapp.models import Process, Task
from webapp.models.base import utcnow
from webapp.models.statuses import TaskStatus
from webapp.permissions import can, partition_filter
from webapp.services import adhoc, instances, readable, saved_filters, scopes, tasks
from webapp.services.instances import InstanceError
from webapp.services.tasks import TaskError
from webapp.web import spec_forms
from webapp.web.access import permission_required
from webapp.web.failed_forms import failed_form, redirect_failed
from webapp.web.guard import checks_own_text
from webapp.web.htmx import htmx_target, is_htmx

LIST_ID = "task-list"


def _go(url: str) -> Response:
    """Leave for `url`: htmx navigates the whole page (HX-Redirect), a plain form gets a 303."""
    if is_htmx():
        response = make_response("", 200)
        response.headers["HX-Redirect"] = url
        return response
    return redirect(url, 303)


# --- the lists --------------------------------------------------------------------------------


def _process_names(keys: set[str], known: dict[str, str]) -> dict[str, str]:
    """The names of the processes `keys`, reading only those `known` does not hold."""
    missing = keys - known.keys()
    if not missing:
        return known
    rows = db.session.execute(select(Process.key, Process.name).where(Process.key.in_(missing)))
    return {**known, **{key: name for key, name in rows}}


def _render_index(filters: InboxFilters):
    failed = failed_form("save_filter")
    query = tasks.inbox_query(
        current_user,
        tab=filters.tab,
        process=filters.process,
        due=filters.due,
        q=filters.q,
        sort=filters.sort,
    )
    counts = tasks.open_counts(current_user)
    known = None if filters.narrowed else counts.get(filters.tab)
    page = paginate(query, filters.page, current_app.config["PAGE_SIZE"], total=known)
    fragment = htmx_target() == LIST_ID
    processes = [] if fragment else _visible_processes()
    keys = {task.instance.process_key for task in page.items}
    context: dict[str, Any] = {
        "filters": filters,
        "page": page,
        "names": _process_names(keys, {key: name for key, name in processes}),
        "places": scopes.task_places(page.items),
        "now": utcnow(),
        "save_error": failed.errors.get("name", "") if failed else "",
        "filter_name": failed.value("name") if failed else "",
        "tabs": TABS,
        "counts": counts,
    }
    if fragment:
        return render_template("inbox/_task_list.html", oob_tabs=True, **context)
    context.update(
        due_choices=DUE,
        sorts=SORTS,
        processes=processes,
        saved=saved_filters.saved_filters(current_user),
    )
    return render_template("inbox/tasks.html", **context)


def _visible_processes() -> list[Any]:
    """(key, name) of the processes the user may see, for the process filter; by name."""
    return list(
        db.session.execute(
            select(Process.key, Process.name)
            .where(partition_filter(Process.partition_id, current_user))
            .order_by(Process.name)
        ).all()
    )


@bp.get("/")
@permission_required("tasks.work")
@checks_own_text
def index():
    return _render_index(InboxFilters.from_args(request.args))


@bp.get("/count")
@permission_required("tasks.work")
def task_count():
    """The navigation badge: open tasks assigned to the user plus those open for their roles."""
    return render_template("inbox/_count.html", counts=tasks.open_counts(current_user))


@bp.post("/filters")
@permission_required("tasks.work")
def save_filter():
    """Keep the current filter (sent as hidden fields) under a name."""
    filters = InboxFilters.from_args(request.form)
    try:
        saved = saved_filters.save_filter(
            current_user, request.form.get("name", ""), filters.query_string()
        )
    except saved_filters.FilterError as error:
        db.session.rollback()
        url = url_for("inbox.index", **filters.args(page=1))
        typed = {"name": request.form.get("name", "")}
        return redirect_failed(url, "save_filter", {"name": str(error)}, typed)
    flash(f"Saved the filter “{saved.name}”.", "success")
    return redirect(url_for("inbox.index", **filters.args(page=1)), 303)


@bp.post("/filters/<int:filter_id>/delete")
@permission_required("tasks.work")
def delete_filter(filter_id: int):
    if not saved_filters.delete_filter(current_user, filter_id):
        abort(404)
    flash("Deleted the saved filter.", "success")
    return redirect(url_for("inbox.index"), 303)


# --- one task ---------------------------------------------------------------------------------


def _task_or_404(task_id: int) -> Task:
    try:
        return tasks.get_task(current_user, task_id)
    except TaskError:
        abort(404)


def _form(task: Task, formdata: Any = None, errors: dict[str, str] | None = None):
    return spec_forms.build(
        task.form,
        scopes.task_context(task, instance_context(task.instance)),
        formdata,
        errors=errors,
        refresh_url=url_for("inbox.task_form", task_id=task.id),
    )


def _facts(task: Task, *, show_display: bool) -> dict[str, list[Any]]:
    """What the person working a task needs to know: the form's display fields (when the form
    is not shown), the instance's start input and the variables collected so far, labelled by
    the forms that saved them."""
    instance = task.instance
    context = scopes.task_context(task, instance_context(instance))
    shown = spec_forms.display_facts(task.form, context) if show_display else []
    document = instance.process_version.document or {}
    return {
        "display": shown,
        "input": readable.input_facts(document, instance.input),
        "vars": readable.variable_facts(document, instance.vars),
    }


def _render_task(
    task: Task,
    form=None,
    *,
    status: int = 200,
    reassign: ReassignForm | None = None,
    claim_error: str = "",
    report_error: str = "",
):
    workable = tasks.may_work(current_user, task)
    manage = tasks.may_manage(current_user, task)
    if workable and form is None:
        form = _form(task)
    if manage and reassign is None:
        reassign = ReassignForm(formdata=None)
    if reassign is not None:
        reassign.fill_roles()
    place = scopes.task_places([task]).get(task.id) or scopes.Place()
    context = {
        "task": task,
        "place": place,
        "task_name": place.label(task.title or task.node_id),
        "instance": task.instance,
        "form": form if workable else None,
        "refreshes": spec_forms.refreshes(task.form),
        "summary": readable.form_facts(task.form, task.result or {})
        if task.status == TaskStatus.COMPLETED
        else [],
        "now": utcnow(),
        "may_claim": workable and task.assignee_id is None,
        "may_release": task.status == TaskStatus.OPEN
        and task.assignee_id == current_user.id
        and tasks.is_offered(task),
        "reassign": reassign if manage else None,
        "eligible": tasks.eligible_users(task) if manage and task.status == TaskStatus.OPEN else [],
        "may_work_tasks": can(current_user, "tasks.work", task.partition_id),
        "may_read_instance": instances.may_see(current_user, task.instance),
        "claim_error": claim_error,
        "outcomes": tasks.reportable(task) if workable and task.status == TaskStatus.OPEN else [],
        "report_error": report_error,
        "facts": _facts(task, show_display=not (workable and form is not None)),
        "adhoc": adhoc.for_task(current_user, task),
        "failed": spec_forms.error_summary(form if workable else None),
    }
    if form is not None and htmx_target() == "task-form":
        return render_template("inbox/_task_form.html", fragment=True, **context), status
    return render_template("inbox/task.html", **context), status


def _refused(error: TaskError, task_id: int):
    """A conflict (taken, completed, cancelled): say so plainly, change nothing."""
    db.session.rollback()
    if error.status == 404:
        abort(404)
    fragment = htmx_target() == "task-form"
    template = "inbox/_task_refused.html" if fragment else "inbox/refused.html"
    return render_template(
        template, message=error.message, task_id=task_id, fragment=fragment
    ), error.status


def _claim_refused(error: TaskError, task_id: int):
    """A refused claim from a plain form goes back to the task page with the reason
    (Post/Redirect/Get); htmx swaps the message into the form as other refusals do."""
    if is_htmx() or error.status == 404:
        return _refused(error, task_id)
    db.session.rollback()
    url = url_for("inbox.task", task_id=task_id)
    return redirect_failed(url, "claim", {"claim": error.message})


@bp.get("/tasks/<int:task_id>")
@login_required
def task(task_id: int):
    failed = failed_form("claim")
    if failed is None:
        return _render_task(_task_or_404(task_id))
    try:
        found = tasks.get_task(current_user, task_id)
    except TaskError:
        message = failed.errors.get("claim", "")
        return render_template("inbox/refused.html", message=message, task_id=task_id), 409
    return _render_task(found, claim_error=failed.errors.get("claim", ""))


@bp.post("/tasks/<int:task_id>")
@permission_required("tasks.work")
def complete(task_id: int):
    if "refresh" in request.form:
        found = _task_or_404(task_id)
        return _render_task(found, _form(found, request.form))
    try:
        done = tasks.complete(current_user, task_id, request.form)
    except TaskError as error:
        if error.code == "invalid":
            found = _task_or_404(task_id)
            return _render_task(found, _form(found, request.form, error.fields), status=422)
        if error.by_self:
            flash(error.message, "info")
            return _go(url_for("inbox.index"))
        return _refused(error, task_id)
    flash(f"Completed “{done.title}”. {done.where}", "success")
    if done.next_task_id is not None:
        return _go(url_for("inbox.task", task_id=done.next_task_id))
    return _go(url_for("inbox.index"))


@bp.post("/tasks/<int:task_id>/report")
@permission_required("tasks.work")
def report(task_id: int):
    """Throw one of the errors or escalations the task's boundary events catch."""
    try:
        done = tasks.report(current_user, task_id, request.form.get("outcome", ""))
    except TaskError as error:
        if error.code == "invalid":
            found = _task_or_404(task_id)
            return _render_task(found, status=422, report_error=error.message)
        return _refused(error, task_id)
    flash(f"Reported from “{done.title}”. {done.where}", "success")
    if done.next_task_id is not None:
        return _go(url_for("inbox.task", task_id=done.next_task_id))
    return _go(url_for("inbox.index"))


@bp.post("/tasks/<int:task_id>/activities")
@permission_required("tasks.work")
def activate(task_id: int):
    """The assignee starts another activity of the ad-hoc sub-process the task is in."""
    task = _task_or_404(task_id)
    running = adhoc.for_task(current_user, task)
    activity = request.form.get("activity", "")
    if running is None:
        abort(404)
    try:
        adhoc.activate(current_user, task.instance_id, activity, running.token_id)
    except InstanceError as error:
        db.session.rollback()
        flash(f"Not started: {error.message}", "error")
        return _go(url_for("inbox.task", task_id=task_id))
    titles = dict(running.activities)
    flash(f"“{titles.get(activity, activity)}” started.", "success")
    return _go(url_for("inbox.task", task_id=task_id))


@bp.post("/tasks/<int:task_id>/form")
@login_required
def task_form(task_id: int):
    """Re-render the form's fields for the answers so far (`visibleIf` on the server)."""
    found = _task_or_404(task_id)
    if not tasks.may_work(current_user, found):
        abort(404)
    return render_template("_spec_fields.html", form=_form(found, request.form))


@bp.post("/tasks/<int:task_id>/claim")
@permission_required("tasks.work")
def claim(task_id: int):
    try:
        claimed = tasks.claim(current_user, task_id)
    except TaskError as error:
        return _claim_refused(error, task_id)
    flash(f"“{claimed.title}” is now yours.", "success")
    return _go(url_for("inbox.task", task_id=task_id))


@bp.post("/tasks/<int:task_id>/release")
@permission_required("tasks.work")
def release(task_id: int):
    try:
        released = tasks.release(current_user, task_id)
    except TaskError as error:
        return _refused(error, task_id)
    flash(f"“{released.title}” went back to {tasks.offered_to(released)}.", "success")
    return _go(url_for("inbox.index"))


@bp.route("/tasks/<int:task_id>/reassign", methods=["GET", "POST"])
@permission_required("instances.manage")
def reassign(task_id: int):
    """Operators give a task to a user or a role; the operations dashboard links here."""
    found = db.session.get(Task, task_id)
    if found is None or not tasks.may_manage(current_user, found):
        abort(404)
    form = ReassignForm()
    if request.method == "POST" and form.validate():
        try:
            tasks.reassign(
                current_user,
                task_id,
                username=form.username.data or "",
                role=form.role.data or "",
                note=form.note.data or "",
                confirmed=form.confirmed.data or "",
            )
        except TaskError as error:
            if error.code == "unconfirmed":
                return _confirm_reassign(db.session.get_one(Task, task_id), form, error)
            if error.status != 422:
                return _refused(error, task_id)
            for name, message in error.fields.items():
                target = getattr(form, name, None) or form.username
                target.errors = [*target.errors, message]
        else:
            flash("Reassigned the task.", "success")
            return _go(url_for("inbox.task", task_id=task_id))
    status = 422 if request.method == "POST" else 200
    found = db.session.get_one(Task, task_id)
    return _render_task(found, status=status, reassign=form)


def _confirm_reassign(task: Task, form: ReassignForm, error: TaskError):
    """The confirm step: the same values again, with what the operator is confirming."""
    form.confirmed.data = error.fields.get("confirm", "")
    return render_template(
        "inbox/reassign_confirm.html", task=task, form=form, message=error.message
    )
