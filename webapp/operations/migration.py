"""Migrate instances to another version: choose the versions and the mapping, see the dry run's
verdicts grouped with counts, then start the migration on the workers (bulk progress page)."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from webapp.extensions import db
from webapp.inputs import MAX_INT32, whole_number
from webapp.models import Instance, Process
from webapp.operations.blueprint import bp
from webapp.services import processes
from webapp.services.operations import bulk
from webapp.services.operations import migration as migrating
from webapp.services.operations.common import OperationsError
from webapp.services.operations.filters import matching_ids, read_filters
from webapp.web.access import permission_required

PAGE_SIZE = 50
MAP_PREFIX = "map."


def _selection_args(values) -> dict[str, Any]:
    """The selection the list sent (ticked ids, or its filter), kept in links and forms."""
    ids = [i for v in values.getlist("ids") if (i := whole_number(v, 1, MAX_INT32))]
    if values.get("scope") == "filter":
        return {"scope": "filter", **read_filters(values).args()}
    return {"ids": ids} if ids else {}


def _selected_ids(selection: dict[str, Any]) -> list[int] | None:
    """The ids the selection names now; None: every unfinished instance of the source version."""
    if selection.get("scope") == "filter":
        return matching_ids(current_user, read_filters(selection), bulk.limit())
    return selection.get("ids") or None


def _inferred(selected: list[int] | None) -> tuple[str, str]:
    """The process and version of selected instances when they share both, else ("", "")."""
    if not selected:
        return "", ""
    rows = db.session.execute(
        select(Instance.process_key, Instance.version)
        .where(Instance.id.in_(selected[: bulk.limit()]))
        .distinct()
        .limit(2)
    ).all()
    return (rows[0][0], str(rows[0][1])) if len(rows) == 1 else ("", "")


def _mapping(values) -> dict[str, str]:
    return {
        name[len(MAP_PREFIX) :]: value
        for name, value in values.items()
        if name.startswith(MAP_PREFIX) and value
    }


@bp.route("/migrate")
@permission_required("instances.modify")
def migration():
    """The migration form and, once both versions are chosen, the dry run's verdicts."""
    selection = _selection_args(request.args)
    try:
        selected = _selected_ids(selection)
    except OperationsError as error:
        selected, selection = None, {}
        flash(error.message, "error")
    key, was = request.args.get("process", ""), request.args.get("from", "")
    if not key or not was:
        found_key, found_version = _inferred(selected)
        key, was = key or found_key, was or found_version
        if selected and not found_key:
            flash(
                "The selected instances are on more than one version; select instances of one "
                "version of one process.",
                "error",
            )
    process = db.session.scalar(select(Process).where(Process.key == key)) if key else None
    versions = processes.versions(process) if process is not None else []
    to = request.args.get("to", "") or next(
        (str(v.number) for v in versions if str(v.number) != was), ""
    )
    context: dict[str, Any] = {
        "key": key,
        "process": process,
        "versions": versions,
        "was": was,
        "to": to,
        "selection": selection,
        "selected": selected,
        "errors": {},
        "report": None,
        "choices": [],
    }
    status = 200
    if process is not None and was and to:
        status = _dry_run(context, selected)
    return render_template("operations/migrate.html", **context), status


def _dry_run(context: dict[str, Any], selected: list[int] | None) -> int:
    mapping = _mapping(request.args)
    try:
        the_setup = migrating.setup(current_user, context["key"], context["was"], context["to"])
        context["choices"] = migrating.choices(
            migrating.Setup(the_setup.process, the_setup.source, the_setup.target, mapping)
        )
        the_setup = migrating.setup(
            current_user, context["key"], context["was"], context["to"], mapping
        )
        ids = migrating.selection(current_user, the_setup, selected)
    except OperationsError as error:
        db.session.rollback()
        if error.status == 403:
            abort(403)
        context["errors"] = error.fields or {"to": error.message}
        return error.status
    report = migrating.dry_run(the_setup, ids)
    page = whole_number(request.args.get("page"), 1, MAX_INT32) or 1
    ordered = [(outcome, reason, i) for outcome, _, reason, group in report.groups() for i in group]
    pages = max(1, -(-len(ordered) // PAGE_SIZE))
    page = min(page, pages)
    context.update(
        setup=the_setup,
        mapping=mapping,
        report=report,
        rows=ordered[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
        page=page,
        pages=pages,
        headings=migrating.GROUPS,
        args={
            "process": context["key"],
            "from": context["was"],
            "to": context["to"],
            **{MAP_PREFIX + a: b for a, b in mapping.items()},
            **context["selection"],
        },
    )
    return 200


@bp.route("/migrate", methods=["POST"])
@permission_required("instances.modify")
def migration_start():
    """Start the migration the dry run showed: a bulk operation the workers carry out."""
    values = request.form
    selection = _selection_args(values)
    key, was, to = values.get("process", ""), values.get("from", ""), values.get("to", "")
    mapping = _mapping(values)
    back = url_for(
        "operations.migration",
        process=key,
        **{"from": was, "to": to},
        **{MAP_PREFIX + a: b for a, b in mapping.items()},
        **selection,
    )
    try:
        the_setup = migrating.setup(current_user, key, was, to, mapping)
        ids = migrating.selection(current_user, the_setup, _selected_ids(selection))
        operation = migrating.start(current_user, the_setup, ids, values.get("reason", ""))
    except OperationsError as error:
        db.session.rollback()
        if error.status == 403:
            abort(403)
        flash(" ".join(error.fields.values()) or error.message, "error")
        return redirect(back, 303)
    return redirect(url_for("operations.bulk_progress", operation_id=operation.id), 303)
