"""The designer page: the bpmn-js canvas, saving its XML, auto layout and publishing."""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from flask import (
    Response,
    abort,
    current_app,
    flash,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user

from webapp.designer.access import base_revision, can_publish, load_process
from webapp.designer.blueprint import bp
from webapp.designer.forms import PublishForm
from webapp.process.bpmn import export_bpmn
from webapp.process.kinds import (
    BOUNDARY_EVENTS,
    BOUNDARY_HOSTS,
    END_EVENTS,
    EVENT_DEFINITIONS,
    EVENT_START_EVENTS,
    KINDS,
    MULTI_INSTANCE_KINDS,
    PROCESS_START_EVENTS,
    SCOPE_KINDS,
    PaletteEntry,
    definition_element,
)
from webapp.process.validation import has_errors
from webapp.services import processes, scenarios
from webapp.services.processes import ImportRefused, ProcessError, ScenariosFailed, StaleDraft
from webapp.web.htmx import is_htmx


@lru_cache(maxsize=1)
def moddle_descriptor() -> dict[str, Any]:
    """The moddle extension bpmn-js needs to read and write our `flowdesk:*` elements."""
    path = Path(current_app.static_folder or "static") / "js" / "flowdesk-moddle.json"
    return json.loads(path.read_text(encoding="utf-8"))


def moddle_type(element: str) -> str:
    """The bpmn-js type of a BPMN element: `userTask` is `bpmn:UserTask`."""
    return f"bpmn:{element[:1].upper()}{element[1:]}"


def palette_entry(entry: PaletteEntry) -> dict[str, Any]:
    """A palette entry as the canvas reads it."""
    return {
        "action": entry.action,
        "group": entry.group,
        "order": entry.order,
        "icon": entry.icon,
        "title": entry.title,
        "event": entry.event,
        "startInside": entry.start_inside,
    }


def kind_table() -> dict[str, Any]:
    """The kind table as the canvas reads it (a JSON data block): each kind's bpmn-js type, fixed
    event definition, marks and config keys, its palette entries and replace-menu targets, and
    the events start, end and boundary events may carry; the canvas reads elements with it as
    the BPMN reader does."""
    return {
        "kinds": {
            name: {
                "type": moddle_type(kind.element),
                "role": kind.role,
                "event": kind.event,
                "marks": dict(kind.marks),
                "messageRef": kind.message_ref,
                "configKeys": kind.config_keys,
                "palette": [palette_entry(entry) for entry in kind.palette],
                "replace": kind.replace,
                "scopedReplace": kind.scoped_replace,
            }
            for name, kind in KINDS.items()
        },
        "definitions": {
            event: moddle_type(definition_element(event)) for event in EVENT_DEFINITIONS
        },
        "events": {
            "boundary": BOUNDARY_EVENTS,
            "eventStart": EVENT_START_EVENTS,
            "processStart": PROCESS_START_EVENTS,
            "end": END_EVENTS,
        },
        "scopes": SCOPE_KINDS,
        "boundaryHosts": BOUNDARY_HOSTS,
        "multiInstance": MULTI_INSTANCE_KINDS,
    }


def draft_xml(process) -> str:
    return process.draft_xml or export_bpmn(process.draft_document or {})


def _error(status: int, code: str, message: str, **extra: Any) -> Response:
    return make_response(jsonify(error=code, message=message, **extra), status)


@bp.get("/<int:process_id>/")
def editor(process_id: int):
    process = load_process(process_id)
    return render_template(
        "designer/editor.html",
        process=process,
        xml=draft_xml(process),
        problems=process.draft_problems or [],
        descriptor=moddle_descriptor(),
        kinds=kind_table(),
        latest=processes.latest_version(process),
        can_publish=can_publish(process),
        coverage=scenarios.kept_coverage(process),
    )


@bp.post("/<int:process_id>/save")
def save(process_id: int):
    """Save the canvas: JSON in, JSON out (revision, problems); 409 when someone saved first."""
    began = time.perf_counter()
    process = load_process(process_id, lock=True)
    try:
        revision = int(request.headers.get("X-Draft-Revision") or request.args.get("revision", ""))
    except ValueError:
        return _error(400, "revision.missing", "The save does not say which revision it edited.")
    try:
        result = processes.save_draft_xml(
            process, request.get_data(), base_revision=revision, actor=current_user
        )
    except StaleDraft as exc:
        return _error(409, exc.code, exc.message, revision=process.draft_revision)
    except ImportRefused as exc:
        unsupported = [processes.unsupported_dict(u) for u in exc.unsupported]
        return _error(exc.status, exc.code, exc.message, line=exc.line, unsupported=unsupported)
    response = jsonify({**result.as_dict(), "saved_by": current_user.name})
    response.headers["Server-Timing"] = f"save;dur={(time.perf_counter() - began) * 1000:.1f}"
    return response


@bp.post("/<int:process_id>/auto-layout")
def layout(process_id: int):
    """Lay the draft out again; JSON for the canvas, a redirect for the outline's form."""
    process = load_process(process_id, lock=True)
    wants_json = request.accept_mimetypes.best == "application/json"
    try:
        result = processes.auto_layout_draft(
            process, base_revision=base_revision(), actor=current_user
        )
    except StaleDraft as exc:
        if wants_json:
            return _error(409, exc.code, exc.message, revision=process.draft_revision)
        abort(409, exc.message)
    if wants_json:
        problems = [p.as_dict() for p in result.problems]
        return jsonify(revision=result.revision, problems=problems, xml=process.draft_xml)
    flash("The draft was laid out again.", "success")
    return redirect(request.form.get("next") or url_for("designer.outline", process_id=process.id))


@bp.route("/<int:process_id>/publish", methods=["GET", "POST"])
def publish(process_id: int):
    """Publish the draft as the next version, with a change note; refused with errors."""
    process = load_process(process_id, lock=request.method == "POST")
    if not can_publish(process):
        abort(403)
    form = PublishForm(revision=process.draft_revision)
    status = 200
    problems = processes.check_draft(process)
    refusal = None
    failures: list[Any] = []
    if form.validate_on_submit():
        try:
            revision = int(form.revision.data)
        except ValueError:
            abort(400)
        try:
            version = processes.publish(
                process,
                actor=current_user,
                note=form.note.data,
                base_revision=revision,
                scenarios_override=form.override.data or "",
            )
        except ScenariosFailed as exc:
            refusal, status, failures = exc.message, exc.status, exc.failures
        except StaleDraft as exc:
            refusal, status = exc.message, 409
            form.revision.data = str(process.draft_revision)
        except ProcessError as exc:
            refusal, status = exc.message, exc.status
        else:
            flash(f"Published version {version.number} of {process.name}.", "success")
            target = url_for("designer.versions", process_id=process.id)
            if is_htmx():
                response = make_response("", 204)
                response.headers["HX-Redirect"] = target
                return response
            return redirect(target)
    elif request.method == "POST":
        status = 422
    return render_template(
        "designer/publish.html",
        process=process,
        form=form,
        problems=problems,
        blocked=has_errors(problems),
        refusal=refusal,
        failures=failures,
        latest=processes.latest_version(process),
        unchanged=processes.unchanged_since(process),
    ), status
