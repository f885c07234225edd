"""The import report page: what an import mapped and kept, and what still needs a person, with
the groups of the file mapped to roles (or created) in one post."""

from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.designer import bp
from webapp.designer.access import base_revision, load_process
from webapp.extensions import db
from webapp.failed_forms import failed_form, redirect_failed
from webapp.services import import_reports
from webapp.services.processes import ProcessError

FORM = "groups"


@bp.get("/<int:process_id>/import-report")
def import_report(process_id: int):
    process = load_process(process_id)
    report = import_reports.build(process, current_user)
    return render_template(
        "designer/import_report.html",
        process=process,
        report=report,
        create=import_reports.CREATE,
        failed=failed_form(FORM),
    )


@bp.post("/<int:process_id>/import-report/groups")
def map_groups(process_id: int):
    """Apply the chosen role (or a new role) of each listed group to the draft."""
    process = load_process(process_id, lock=True)
    page = url_for("designer.import_report", process_id=process.id)
    groups = import_reports.build(process, current_user).groups
    choices = {
        group.name: choice
        for index, group in enumerate(groups)
        if (choice := request.form.get(f"group_{index}", "").strip())
    }
    values = {key: value for key, value in request.form.items() if key.startswith("group_")}
    if not choices:
        db.session.rollback()
        return redirect_failed(
            page, FORM, {"groups": "Choose a role for at least one group."}, values
        )
    try:
        import_reports.map_groups(
            process, choices, base_revision=base_revision(), actor=current_user
        )
    except ProcessError as error:
        db.session.rollback()
        return redirect_failed(page, FORM, {"groups": error.message}, values)
    mapped = ", ".join(f"{group} → {role}" for group, role in choices.items())
    flash(f"Mapped {mapped.replace(import_reports.CREATE, 'a new role')}.", "success")
    return redirect(page, 303)
