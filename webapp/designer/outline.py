"""The outline: the draft as keyboard-friendly lists of nodes and flows, edited with plain forms.

It edits the same draft as the canvas; every form carries the revision it was rendered from,
so an edit made meanwhile elsewhere gives 409 and the current outline instead of an overwrite.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask import flash, make_response, redirect, render_template, request, url_for
from flask_login import current_user
from flask_wtf import FlaskForm
from werkzeug.wrappers import Response
from wtforms.fields.choices import SelectChoice

from webapp.designer import draft_edits
from webapp.designer.access import base_revision, can_publish, load_process
from webapp.designer.blueprint import bp
from webapp.designer.forms import (
    AddNodeForm,
    ConnectForm,
    ProcessSettingsForm,
    RenameForm,
    RevisionForm,
)
from webapp.designer.panel import (
    applied_note,
    handle_post,
    panel_context,
    render_panel,
    used_names,
)
from webapp.designer.panel_forms import (
    FLOW,
    PANELS,
    PanelContext,
    PanelForm,
    initial_data,
    with_tool_inputs,
)
from webapp.designer.panel_forms import make_form as make_panel_form
from webapp.models import Process
from webapp.process.bpmn.report import element_names
from webapp.process.document import children, uses_pool
from webapp.process.kinds import KINDS, SCOPE_KINDS
from webapp.process.naming import Namer, capitalized
from webapp.services import processes
from webapp.services.processes import ProcessError, StaleDraft
from webapp.web.htmx import is_htmx


def _draft(process: Process) -> dict[str, Any]:
    return process.draft_document or {"nodes": {}, "flows": {}}


def _named(process: Process, node_id: str) -> str:
    """A node as messages name it: its title, else its kind and place."""
    doc = _draft(process)
    return Namer(doc["nodes"], doc["flows"]).short(node_id)


def _inside(process: Process, node_id: str) -> str:
    """ ", with the 3 nodes inside it" when deleting a node takes nested or attached ones along."""
    doc = _draft(process)
    if node_id not in doc["nodes"]:
        return ""
    copy = {"nodes": dict(doc["nodes"]), "flows": dict(doc["flows"])}
    count = len(draft_edits.delete_node(copy, node_id)) - 1
    if not count:
        return ""
    return f", with the {count} node{'s' if count != 1 else ''} inside or attached to it,"


def _flow_named(process: Process, flow_id: str) -> str:
    doc = _draft(process)
    return capitalized(Namer(doc["nodes"], doc["flows"]).flow(flow_id))


def _node_choices(process: Process, blank: str | None = None) -> list[SelectChoice]:
    """Every node as "Title (Kind)", with the sub-process it is in."""
    nodes = _draft(process)["nodes"]
    choices = []
    for node_id, node in nodes.items():
        if node["kind"] not in KINDS:
            choices.append(SelectChoice(node_id, node_id))
            continue
        label = f"{node['title'] or node_id} ({KINDS[node['kind']].label})"
        parent = node.get("parent")
        if parent:
            label += f", in {(nodes.get(parent) or {}).get('title') or parent}"
        choices.append(SelectChoice(node_id, label))
    return [SelectChoice("", blank), *choices] if blank is not None else choices


def _scope_choices(process: Process) -> list[SelectChoice]:
    nodes = _draft(process)["nodes"]
    return [SelectChoice("", "— the process itself —")] + [
        SelectChoice(node_id, f"{node['title'] or node_id} ({KINDS[node['kind']].label})")
        for node_id, node in nodes.items()
        if node["kind"] in SCOPE_KINDS
    ]


def _forms(process: Process, **given: FlaskForm) -> dict[str, FlaskForm]:
    revision = process.draft_revision
    add = given.get("add_form") or AddNodeForm(formdata=None, revision=revision)
    add.after.choices = _node_choices(process, "— not connected —")
    add.parent.choices = _scope_choices(process)
    connect = given.get("connect_form") or ConnectForm(formdata=None, revision=revision)
    connect.source.choices = _node_choices(process)
    connect.target.choices = _node_choices(process)
    if "connect_form" not in given and len(connect.target.choices) > 1:
        connect.source.data = connect.source.choices[0].value
        connect.target.data = connect.target.choices[1].value
    settings = given.get("settings_form") or ProcessSettingsForm(
        formdata=None, variables_pool=uses_pool(_draft(process))
    )
    for form in (add, connect, settings):
        form.revision.data = str(revision)
    return {"add_form": add, "connect_form": connect, "settings_form": settings}


def _page(process: Process, status: int = 200, error: str | None = None, **forms: FlaskForm):
    return render_template(
        "designer/outline.html",
        process=process,
        doc=_draft(process),
        scopes=children(_draft(process)),
        kinds=KINDS,
        names=element_names(_draft(process)),
        problems=process.draft_problems or [],
        error=error,
        can_publish=can_publish(process),
        **_forms(process, **forms),
    ), status


@bp.app_template_global()
def element_name(process: Process, element_id: str) -> str:
    """A node or flow of the draft as a person reads it (its title, kind and neighbours)."""
    return element_names(_draft(process)).get(element_id, element_id)


@bp.get("/<int:process_id>/outline")
def outline(process_id: int):
    return _page(load_process(process_id))


def _apply(
    process: Process,
    change: Callable[[dict[str, Any]], Any],
    success: str,
    anchor: str = "",
    **forms: FlaskForm,
):
    """Run one edit on the draft: redirect on success, the outline with the reason otherwise."""

    def run(doc: dict[str, Any]) -> dict[str, Any]:
        change(doc)
        return doc

    try:
        processes.edit_draft(process, run, base_revision=base_revision(), actor=current_user)
    except StaleDraft as exc:
        message = exc.message + " The outline below is the current draft; repeat your change."
        return _page(process, 409, message, **forms)
    except ProcessError as exc:
        return _page(process, exc.status, exc.message, **forms)
    flash(success, "success")
    return redirect(url_for("designer.outline", process_id=process.id) + anchor)


@bp.post("/<int:process_id>/outline/nodes")
def add_node(process_id: int):
    process = load_process(process_id, lock=True)
    form = AddNodeForm()
    form.after.choices = _node_choices(process, "— not connected —")
    form.parent.choices = _scope_choices(process)
    if not form.validate():
        return _page(process, 422, "Check the new node's values.", add_form=form)
    title = (form.title.data or "").strip()
    label = KINDS[form.kind.data].label
    return _apply(
        process,
        lambda doc: draft_edits.add_node(
            doc, form.kind.data, title, form.after.data or None, form.parent.data or None
        ),
        f"{label} '{title or form.kind.data}' added.",
        add_form=form,
    )


@bp.post("/<int:process_id>/outline/settings")
def process_settings(process_id: int):
    process = load_process(process_id, lock=True)
    form = ProcessSettingsForm()
    if not form.validate():
        return _page(process, 400, "The settings form was not complete; reload the outline.")
    pool = bool(form.variables_pool.data)
    return _apply(
        process,
        lambda doc: draft_edits.set_variables_pool(doc, pool),
        "Process variables pool " + ("turned on." if pool else "turned off."),
        "#settings-title",
    )


@bp.post("/<int:process_id>/outline/nodes/<node_id>/rename")
def rename(process_id: int, node_id: str):
    process = load_process(process_id, lock=True)
    form = RenameForm()
    if not form.validate():
        return _page(process, 422, "A title has at most 200 characters.")
    title = (form.title.data or "").strip()
    return _apply(
        process,
        lambda doc: draft_edits.rename(doc, node_id, title),
        f"{_named(process, node_id)} renamed to '{title}'.",
        f"#node-{node_id}",
    )


def _delete(
    process_id: int,
    change: Callable[[dict[str, Any]], Any],
    success: Callable[[Process], str],
    anchor: str,
):
    process = load_process(process_id, lock=True)
    if not RevisionForm().validate():
        return _page(process, 422, "The form was incomplete; try again.")
    return _apply(process, change, success(process), anchor)


@bp.post("/<int:process_id>/outline/nodes/<node_id>/delete")
def delete_node(process_id: int, node_id: str):
    return _delete(
        process_id,
        lambda doc: draft_edits.delete_node(doc, node_id),
        lambda process: (
            f"{_named(process, node_id)}{_inside(process, node_id)} and its flows deleted."
        ),
        "#nodes",
    )


@bp.post("/<int:process_id>/outline/flows")
def connect(process_id: int):
    process = load_process(process_id, lock=True)
    form = ConnectForm()
    form.source.choices = form.target.choices = _node_choices(process)
    if not form.validate():
        return _page(process, 422, "Choose two nodes of the draft to connect.", connect_form=form)
    return _apply(
        process,
        lambda doc: draft_edits.connect(doc, form.source.data, form.target.data),
        f"Connected {_named(process, form.source.data)} to {_named(process, form.target.data)}.",
        connect_form=form,
    )


@bp.post("/<int:process_id>/outline/flows/<flow_id>/delete")
def delete_flow(process_id: int, flow_id: str):
    return _delete(
        process_id,
        lambda doc: draft_edits.delete_flow(doc, flow_id),
        lambda process: f"{_flow_named(process, flow_id)} deleted.",
        "#flows",
    )


def _element_form(process: Process, element_id: str, context: PanelContext) -> PanelForm | None:
    doc = _draft(process)
    if element_id in doc["nodes"]:
        node = doc["nodes"][element_id]
        if node["kind"] not in KINDS:
            return None
        data = initial_data(node["kind"], element_id, node["title"], node["config"])
        parent = doc["nodes"].get(node.get("parent") or "", {})
        place = {"scope": "event" if parent.get("kind") == "eventSubProcess" else ""}
        data.update(PANELS[node["kind"]].placement(place))
    elif element_id in doc["flows"]:
        flow = doc["flows"][element_id]
        source = doc["nodes"].get(flow["source"], {})
        values = {**flow, "source_kind": source.get("kind", "")}
        data = initial_data(FLOW, element_id, flow["title"], values)
    else:
        return None
    data["revision"] = str(process.draft_revision)
    data["names"] = json.dumps(used_names(doc))
    data = with_tool_inputs(data, context)
    return make_panel_form(data["kind"], context, formdata=None, data=data)


@bp.route("/<int:process_id>/outline/<element_id>", methods=["GET", "POST"])
def edit_element(process_id: int, element_id: str):
    """A node's or flow's settings, with the same form as the canvas's properties panel."""
    process = load_process(process_id, lock=request.method == "POST")
    post_url = url_for("designer.edit_element", process_id=process.id, element_id=element_id)
    if request.method == "GET":
        node = _draft(process)["nodes"].get(element_id)
        if node is not None and node["kind"] in KINDS and node["kind"] not in PANELS:
            message = f"The settings of {_named(process, element_id)} are edited on the diagram."
            return _page(process, 200, message)
        context = panel_context(process)
        form = _element_form(process, element_id, context)
        if form is None:
            return _page(process, 404, f"The draft has no node or flow '{element_id}'.")
        return render_panel(process, form, context, post_url=post_url, mode="outline")

    def to_draft(form: PanelForm, values: dict[str, Any], context: PanelContext) -> Response:
        def change(doc: dict[str, Any]) -> dict[str, Any]:
            if form.kind.data == FLOW:
                draft_edits.update_flow(
                    doc, element_id, values["title"], values["condition"], values["default"]
                )
            else:
                draft_edits.update_node(doc, element_id, values["title"], values["config"])
            return doc

        try:
            revision = int(form.revision.data or "")
        except ValueError:
            revision = -1
        try:
            processes.edit_draft(process, change, base_revision=revision, actor=current_user)
        except ProcessError as exc:
            form.form_errors.append(exc.message)
            return render_panel(
                process, form, context, post_url=post_url, status=exc.status, mode="outline"
            )
        doc = _draft(process)
        namer = Namer(doc["nodes"], doc["flows"])
        name = namer.short(element_id) if element_id in doc["nodes"] else namer.flow(element_id)
        flash(f"{capitalized(name)}: {applied_note(form, values)}", "success")
        target = url_for("designer.outline", process_id=process.id) + f"#node-{element_id}"
        if is_htmx():
            response = make_response("", 204)
            response.headers["HX-Redirect"] = target
            return response
        return redirect(target)

    return handle_post(process, post_url=post_url, mode="outline", on_apply=to_draft)
