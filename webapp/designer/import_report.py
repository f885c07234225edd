"""The import report page: what an import mapped and kept, and what still needs a person, with
the file's groups mapped to roles (or created) and its users to users, each in one post."""

from __future__ import annotations

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.routing import BuildError

from webapp.designer.access import base_revision, load_process
from webapp.designer.blueprint import bp
from webapp.designer.panel import panel_context
from webapp.extensions import db
from webapp.services import import_reports
from webapp.services.processes import ProcessError
from webapp.web.failed_forms import failed_form, redirect_failed

#: The decisions page that imports a DMN file, linked for each decision the draft still lacks.
DECISIONS_IMPORT = "designer.decisions_import"

#: The two mapping forms: URL part -> (kind of name, what the page calls one).
MAPPINGS = {"groups": ("role", "group"), "users": ("user", "user"), "tools": ("tool", "tool")}


@bp.get("/<int:process_id>/import-report")
def import_report(process_id: int):
    process = load_process(process_id)
    report = import_reports.build(process, current_user)
    return render_template(
        "designer/import_report.html",
        process=process,
        report=report,
        users=panel_context(process).users if report.users else [],
        create=import_reports.CREATE,
        open=import_reports.OPEN,
        failed=failed_form(),
        decisions_import_url=_decisions_import_url(),
    )


def _decisions_import_url() -> str | None:
    """Where a DMN file is imported (None while that page is not installed)."""
    try:
        return url_for(DECISIONS_IMPORT)
    except BuildError:
        return None


@bp.post("/<int:process_id>/import-report/<mapping>")
def map_names(process_id: int, mapping: str):
    """Apply the name chosen for each listed group (user, tool) to the draft."""
    if mapping not in MAPPINGS:
        abort(404)
    kind, called = MAPPINGS[mapping]
    process = load_process(process_id, lock=True)
    page = url_for("designer.import_report", process_id=process.id)
    listed = import_reports.unknown(process, kind)
    field = f"{called}_"
    choices = {
        item.name: choice
        for index, item in enumerate(listed)
        if (choice := request.form.get(f"{field}{index}", "").strip())
    }
    values = {key: value for key, value in request.form.items() if key.startswith(field)}
    try:
        if not choices:
            raise ProcessError("invalid", f"Choose for at least one {called}.")
        import_reports.map_names(
            process, kind, choices, base_revision=base_revision(), actor=current_user
        )
    except ProcessError as error:
        db.session.rollback()
        return redirect_failed(page, mapping, {mapping: error.message}, values)
    words = {import_reports.CREATE: "a new role", import_reports.OPEN: "everyone"}
    mapped = ", ".join(f"{name or 'no tool'} → {words.get(to, to)}" for name, to in choices.items())
    flash(f"Mapped {mapped}.", "success")
    return redirect(page, 303)
