"""The properties panel: a server-rendered form per element kind, fetched when the canvas selects.

GET fills the form from the element's current values (the unsaved model lives in the browser).
POST either refreshes the form (a field added, a tool chosen...) or applies it: invalid values
come back inline with 422; valid ones go back to the canvas in an `HX-Trigger: bpmn-apply` event.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from flask import make_response, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import ColumnElement, func, or_, select
from werkzeug.wrappers import Response
from wtforms.fields.choices import SelectChoice

from webapp.designer import missing, timer_start
from webapp.designer.access import load_process
from webapp.designer.blueprint import bp
from webapp.designer.form_spec import (
    edit_rows,
    max_length_hint,
    shown_attributes,
    spec_from_rows,
)
from webapp.designer.form_spec import (
    preview as form_preview,
)
from webapp.designer.panels import (
    PANELS,
    initial_data,
    make_form,
    read_values,
    with_tool_inputs,
)
from webapp.designer.panels.base import (
    FLOW,
    PanelContext,
    PanelForm,
    has_errors,
    original_values,
)
from webapp.designer.panels.events import BoundaryPanel, StartEventPanel
from webapp.designer.panels.fields import input_rows, output_hint
from webapp.extensions import db
from webapp.inputs import parse_json
from webapp.models import Process, ProcessVersion, Role, User
from webapp.models.auth import user_partitions
from webapp.permissions import partition_filter
from webapp.process import expressions
from webapp.process.kinds import KINDS
from webapp.process.naming import Namer, kind_words
from webapp.services import decision_links, processes
from webapp.web.htmx import is_htmx

MAX_PICKER = 1000


@bp.context_processor
def preview_helper() -> dict[str, Any]:
    """The panel's macros render the form preview with the inbox's own renderer, and say what
    an empty Max. length means."""
    return {"render_preview": form_preview, "max_length_hint": max_length_hint}


def panel_context(process: Process) -> PanelContext:
    """Users (of the process's partition, when it has one), roles, registered tools and the
    processes a call activity may start (visible to the user, in the same partition or none)."""
    users = select(User).where(User.active.is_(True)).order_by(User.username).limit(MAX_PICKER)
    if process.partition_id is not None:
        users = users.join(user_partitions).where(
            user_partitions.c.partition_id == process.partition_id
        )
    # A child runs in its caller's partition: a call starts processes of that partition or none.
    same_partition: ColumnElement[bool] = Process.partition_id.is_(None)
    if process.partition_id is not None:
        same_partition = or_(same_partition, Process.partition_id == process.partition_id)
    latest = (
        select(ProcessVersion.process_id, func.max(ProcessVersion.number).label("number"))
        .group_by(ProcessVersion.process_id)
        .subquery()
    )
    callable_processes = db.session.execute(
        select(Process.key, Process.name, latest.c.number)
        .outerjoin(latest, latest.c.process_id == Process.id)
        .where(partition_filter(Process.partition_id, current_user), same_partition)
        .order_by(Process.name, Process.key)
        .limit(MAX_PICKER)
    ).all()
    return PanelContext(
        processes=[
            SelectChoice(key, f"{name} ({key})" + ("" if number else " — not published yet"))
            for key, name, number in callable_processes
        ],
        versions={key: number or 0 for key, _, number in callable_processes},
        users=[
            SelectChoice(u.username, f"{u.name} ({u.username})") for u in db.session.scalars(users)
        ],
        roles=[
            SelectChoice(r.name, r.name)
            for r in db.session.scalars(select(Role).order_by(Role.name).limit(MAX_PICKER))
        ],
        tools=processes.tool_specs(),
        decisions=decision_links.decision_ids(process.partition_id),
    )


MAX_NAMES = 200


def used_names(doc: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """The signal and message names the nodes of a process document use."""
    names: dict[str, set[str]] = {"signal": set(), "message": set()}
    nodes = (doc or {}).get("nodes")
    for node in nodes.values() if isinstance(nodes, dict) else ():
        config = node.get("config") if isinstance(node, dict) else None
        for key, found in names.items():
            value = config.get(key) if isinstance(config, dict) else None
            if isinstance(value, str) and value.strip():
                found.add(value.strip())
    return {key: sorted(found)[:MAX_NAMES] for key, found in names.items()}


def names_from_canvas(args: Mapping[str, str], process: Process) -> dict[str, list[str]]:
    """The names the canvas says the diagram uses (one a line), else the saved draft's."""
    if "signals" not in args and "messages" not in args:
        return used_names(process.draft_document)
    names = {}
    for key, arg in (("signal", "signals"), ("message", "messages")):
        lines = {line.strip() for line in (args.get(arg) or "").splitlines()}
        names[key] = sorted(line for line in lines if line and len(line) <= 200)[:MAX_NAMES]
    return names


def shown_names(form: PanelForm) -> dict[str, list[str]]:
    """The names a panel offers in its signal and message fields (carried in the form)."""
    try:
        names = json.loads(form.names.data or "{}")
    except ValueError:
        names = {}
    if not isinstance(names, dict):
        names = {}
    return {
        key: [n for n in names.get(key, []) if isinstance(n, str)][:MAX_NAMES]
        if isinstance(names.get(key), list)
        else []
        for key in ("signal", "message")
    }


def timer_preview(form: PanelForm) -> dict[str, Any] | None:
    """The next runs of a process-level timer start, as the panel holds it (valid or not)."""
    if not isinstance(form, StartEventPanel) or form.scope.data == "event":
        return None
    if form.event.data != "timer":
        return None
    key = "date" if form.timer_type.data == "date" else "cycle"
    value = (getattr(form, key).data or "").strip()
    if not value:
        return {"runs": [], "error": "", "empty": True}
    return timer_start.preview({key: value, "timezone": (form.timezone.data or "").strip()})


def host_label(process: Process, form: PanelForm) -> str:
    """The activity a boundary event sits on, named as problem messages name it: the title
    the canvas sent, else the saved draft's title or kind and place."""
    host = original_values(form).get("attachedTo")
    if not isinstance(host, str) or not host or not isinstance(form, BoundaryPanel):
        return ""
    doc = process.draft_document or {}
    nodes = dict(doc.get("nodes") or {})
    title = " ".join((form.host_name.data or "").split())
    if host not in nodes:
        return f"'{title}'" if title else "an activity not saved yet"
    if title:
        nodes[host] = {**nodes[host], "title": title}
    return Namer(nodes, doc.get("flows") or {}).node(host)


def kind_label(kind: str) -> str:
    return "Sequence flow" if kind == FLOW else KINDS[kind].label


def render_panel(
    process: Process,
    form: PanelForm,
    context: PanelContext,
    *,
    post_url: str,
    status: int = 200,
    applied: str = "",
    mode: str = "canvas",
    hidden: int = 0,
) -> Response:
    """The panel fragment; the outline's edit page wraps it in a whole page for plain requests."""
    kind = form.kind.data
    spec = None
    if hasattr(form, "fields"):
        spec, _ = spec_from_rows([entry.data for entry in form.fields.entries])
    if hasattr(form, "mi_output"):
        form.mi_output.description = output_hint(form.element_id.data or "<id>", kind)
    errors = missing.summary(form)
    explicit = request.method == "POST" and request.form.get("action") == "apply"
    if errors and explicit:  # after the Apply button, focus goes to the first input to change
        missing.focus_first_error(form)
    template = "designer/panel/_panel.html"
    if mode == "outline" and not is_htmx():
        template = "designer/outline_edit.html"
    html = render_template(
        template,
        process=process,
        form=form,
        kind=kind,
        kind_label=kind_label(kind),
        original=original_values(form),
        tools=context.tools,
        spec=spec,
        shown_attributes=shown_attributes,
        post_url=post_url,
        applied=applied,
        invalid=status == 422,
        mode=mode,
        hidden=hidden,
        errors=errors if status == 422 or explicit else [],
        names=shown_names(form),
        timer=timer_preview(form),
        host=host_label(process, form),
        zones=timer_start.zone_names() if kind == "startEvent" else (),
    )
    return make_response(html, status)


def refreshed(form: PanelForm, action: str, context: PanelContext) -> dict[str, Any]:
    """The form's data after an editor action, without validating or applying anything."""
    data = dict(form.data)
    data.pop("csrf_token", None)
    if "fields" in data:
        data["fields"] = edit_rows(data["fields"], action)
    if "inputs" in data:
        data["inputs"] = input_rows(context.tools.get(data.get("tool") or ""), data["inputs"])
        if action == "input-add":
            data["inputs"].append({"name": "", "expression": ""})
    for key, prefix in (("mappings", "mapping"), ("payload", "payload")):
        if key in data:
            data[key] = _edited_rows(data[key], action, prefix)
    return data


def _edited_rows(rows: list[dict[str, Any]], action: str, prefix: str) -> list[dict[str, Any]]:
    """Name → expression rows after an Add or Remove button (`<prefix>-add`, `-remove-<n>`)."""
    removing = f"{prefix}-remove-"
    if action.startswith(removing) and action[len(removing) :].isdigit():
        index = int(action[len(removing) :])
        rows = [row for i, row in enumerate(rows) if i != index]
    if action == f"{prefix}-add":
        rows = [*rows, {"name": "", "expression": ""}]
    return rows


def handle_post(
    process: Process,
    *,
    post_url: str,
    mode: str,
    on_apply: Callable[[PanelForm, dict[str, Any], PanelContext], Response],
) -> Response:
    """Refresh or apply a submitted panel form; `on_apply` gets valid values and answers."""
    kind = request.form.get("kind", "")
    context = panel_context(process)
    if kind not in PANELS:
        return make_response(
            render_template("designer/panel/_message.html", message=f"Unknown kind '{kind}'."),
            422,
        )
    form = make_form(kind, context)
    action = request.form.get("action", "apply")
    if action != "apply":
        form = make_form(kind, context, formdata=None, data=refreshed(form, action, context))
        return render_panel(process, form, context, post_url=post_url, mode=mode)
    form.validate()
    values = read_values(form, context)
    # Missing values show for the fields the user has left, or all on the Apply button; on the
    # canvas they never hold back the other values (the outline's page applies all or nothing).
    explicit = request.form.get("action") == "apply" or mode != "canvas"
    left = set((request.form.get("left") or "").split())
    hidden = form.hidden_missing = missing.defer(form, None if explicit else left)
    if has_errors(form) or (mode != "canvas" and missing.missing_by_field(form)):
        return render_panel(
            process, form, context, post_url=post_url, status=422, mode=mode, hidden=hidden
        )
    return on_apply(form, values, context)


def applied_form(form: PanelForm, values: dict[str, Any], context: PanelContext) -> PanelForm:
    """A fresh form showing the values as applied (so `original` carries the new config)."""
    kind = form.kind.data
    data = initial_data(kind, form.element_id.data, values["title"], form.applied_values(values))
    data["revision"] = form.revision.data
    data.update(form.kept_state(data))
    data["names"] = form.names.data
    return make_form(kind, context, formdata=None, data=with_tool_inputs(data, context))


def applied_note(form: PanelForm, values: dict[str, Any], incomplete: bool = False) -> str:
    if form.kind.data == FLOW and values["default"] and (form.condition.data or "").strip():
        return "Applied. The condition was removed: a default flow takes no condition."
    if incomplete:
        return "Applied. Still to fill in: the values marked as missing."
    return "Applied."


#: bpmn-js types of the modelling-only elements import keeps (see `process.bpmn.kept`).
DOCUMENTATION_ONLY = {
    "TextAnnotation": "text annotation",
    "Association": "association",
    "Group": "group",
    "Lane": "lane",
    "DataObjectReference": "data object",
    "DataStoreReference": "data store",
    "DataInputAssociation": "data association",
    "DataOutputAssociation": "data association",
    "Participant": "pool",
    "MessageFlow": "message flow",
    "OtherPool": "part of another pool (Flowdesk runs only its own pool's process)",
}


@bp.get("/<int:process_id>/panel")
def panel(process_id: int):
    process = load_process(process_id)
    element_id = request.args.get("id", "")
    if not element_id:
        count = request.args.get("count", 0, type=int)
        return render_template("designer/panel/_empty.html", count=count, process=process)
    kind = request.args.get("kind", "")
    title = " ".join(request.args.get("name", "").split())
    this = f"'{title}'" if title else "This element"
    if kind in KINDS and kind not in PANELS:
        message = (
            f"{this} is a {kind_words(kind)}; its settings are kept as they are "
            "(this panel does not edit them)."
        )
        return render_template("designer/panel/_message.html", message=message)
    documentation = DOCUMENTATION_ONLY.get(request.args.get("type", ""))
    if not kind and documentation:
        message = (
            f"{this} is a {documentation}: documentation only. Flowdesk keeps it on the "
            "diagram and in exported files and never runs it."
        )
        return render_template("designer/panel/_message.html", message=message)
    if kind not in PANELS:
        message = (
            f"{this} is a {request.args.get('type') or 'kind of element'} Flowdesk does "
            "not run. Delete it or replace it with a supported element; saving is refused "
            "while it is on the diagram."
        )
        return render_template("designer/panel/_message.html", message=message)
    try:
        config = parse_json(request.args.get("config") or "{}", "config")
    except ValueError:
        config = None
    if not isinstance(config, dict):
        what = f"of {this}" if title else "of this element"
        message = f"The settings {what} could not be read (the config is not JSON)."
        return make_response(render_template("designer/panel/_message.html", message=message), 400)
    values = PANELS[kind].canvas_values(request.args, config)
    context = panel_context(process)
    data = initial_data(kind, element_id, request.args.get("name", ""), values)
    data.update(PANELS[kind].placement(request.args))
    data["names"] = json.dumps(names_from_canvas(request.args, process))
    form = make_form(kind, context, formdata=None, data=with_tool_inputs(data, context))
    post_url = url_for("designer.apply_panel", process_id=process.id)
    return render_panel(process, form, context, post_url=post_url)


@bp.post("/<int:process_id>/panel")
def apply_panel(process_id: int):
    process = load_process(process_id)

    def to_canvas(form: PanelForm, values: dict[str, Any], context: PanelContext) -> Response:
        event = {"target": "#canvas", "id": form.element_id.data, "kind": form.kind.data, **values}
        incomplete = bool(missing.missing_by_field(form))
        if incomplete or form.hidden_missing:
            # The form as typed (the choices that led to an empty field stay), carrying the
            # applied config as its new original.
            form.original.data = json.dumps(values["config"], sort_keys=True)
            shown = form
        else:
            shown = applied_form(form, values, context)
        response = render_panel(
            process,
            shown,
            context,
            post_url=request.path,
            applied=applied_note(form, values, incomplete),
            hidden=form.hidden_missing,
        )
        response.headers["HX-Trigger"] = json.dumps({"bpmn-apply": event}, ensure_ascii=True)
        return response

    return handle_post(process, post_url=request.path, mode="canvas", on_apply=to_canvas)


@bp.post("/<int:process_id>/panel/preview")
def preview(process_id: int):
    """Just the form preview, re-rendered as the modeller edits the fields."""
    process = load_process(process_id)
    kind = request.form.get("kind", "")
    if kind not in PANELS or not hasattr(PANELS[kind], "fields"):
        return render_template("designer/panel/_preview.html", spec=None)
    form = make_form(kind, panel_context(process))
    spec, _ = spec_from_rows([entry.data for entry in form.fields.entries])
    return render_template("designer/panel/_preview.html", spec=spec)


#: Panel fields whose live check also reads the data the expression refers to, with where the
#: expression lives in the element; a multi-instance field is checked with its neighbours.
CHECKED_PATHS = {
    "condition": ("condition",),
    "date": ("date",),
    "correlation_key": ("correlationKey",),
    "mi_collection": ("multiInstance", "collection"),
    "mi_cardinality": ("multiInstance", "cardinality"),
    "mi_completion": ("multiInstance", "completion"),
    "mi_output": ("multiInstance", "output"),
    "loop_condition": ("loop", "condition"),
}
#: Other panel fields a multi-instance expression's check reads.
BESIDE_PATHS = {"mi_element": ("multiInstance", "element"), "save_to": ("saveTo",)}


def unapplied(form: Mapping[str, str], field: str) -> dict[tuple[str, ...], Any]:
    """The settings the panel holds beside a multi-instance field, as the check should see
    them (the element variable, the other expressions, the name the result is saved as)."""
    if not field.startswith("mi_"):
        return {}
    beside = {**CHECKED_PATHS, **BESIDE_PATHS}
    return {
        path: form[name].strip()
        for name, path in beside.items()
        if name != field and name in form and (name.startswith("mi_") or name == "save_to")
    }


@bp.post("/check-expression")
@bp.post("/<int:process_id>/check-expression")
def check_expression(process_id: int | None = None):
    """Check one expression field while the modeller types: its syntax, and for a flow's
    condition, a multi-instance expression, a date or a correlation key the same
    data-reference check as the validator (the canvas's XML when sent)."""
    name = request.args.get("field", "")
    text = (request.form.get(name) or "").strip()
    error = expressions.check(text) if text else None
    problems = []
    element_id = request.args.get("element", "")
    path = CHECKED_PATHS.get(name)
    if text and error is None and process_id is not None and element_id and path:
        process = load_process(process_id)
        canvas_xml = request.form.get("canvas_xml") or None
        changes = unapplied(request.form, name)
        problems = processes.expression_problems(
            process, element_id, path, text, canvas_xml, changes
        )
    return render_template(
        "designer/panel/_check.html", text=text, error=error, problems=problems, field=name
    )
