"""Play the draft: start it, act on each wait, undo, restart, and keep the run as a scenario.

Stateless: the run so far is the list of actions in a hidden field; every request replays it
with the scenario runner on a scratch database, so nothing reaches the real tables. An action
the draft or a form refuses is shown with its reason and not recorded.
"""

from __future__ import annotations

import json
from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.designer.access import load_process
from webapp.designer.blueprint import bp
from webapp.designer.editor import draft_xml
from webapp.designer.forms import PlayForm
from webapp.engine.adhoc import KIND
from webapp.engine.scenario_runner import RunResult, run
from webapp.models import Process
from webapp.process import forms
from webapp.process.document import plain_start
from webapp.process.scenarios import Scenario, ScenarioError, adhoc_activities, parse
from webapp.services import decision_links
from webapp.services import scenarios as service
from webapp.web import spec_forms
from webapp.web.htmx import htmx_target

# The largest recorded run a page may carry back.
PLAYED_LIMIT = 200_000
OPS = (
    "start",
    "complete",
    "tool",
    "message",
    "signal",
    "timer",
    "error",
    "activate",
    "undo",
    "restart",
)


def _start_spec(document: dict[str, Any]) -> Any:
    start = plain_start(document)
    return ((start or {}).get("config") or {}).get("form")


def _played(raw: str) -> Scenario | None:
    """The recorded run from the hidden field; None before the start, 400 when tampered with."""
    if not raw.strip():
        return None
    if len(raw) > PLAYED_LIMIT:
        abort(400, f"The recorded run is longer than {PLAYED_LIMIT:,} characters.")
    try:
        data = json.loads(raw)
        return parse({"name": "play", "input": data.get("input"), "actions": data["actions"]})
    except (ValueError, TypeError, KeyError, AttributeError, ScenarioError) as error:
        abort(400, f"The recorded run cannot be read: {error}")


def _record(scenario: Scenario | None) -> str:
    if scenario is None:
        return ""
    body = scenario.as_dict()
    return json.dumps({"input": body["input"], "actions": body["actions"]}, ensure_ascii=False)


def _replay(process: Process, document: dict[str, Any], scenario: Scenario) -> RunResult:
    """The run so far, business rule tasks evaluating the decisions of the process's partition."""
    decided = decision_links.decided_in(process.partition_id)
    return run(document, scenario, upto=len(scenario.actions), decided=decided)


def _context(scenario: Scenario, result: RunResult) -> dict[str, Any]:
    return {"$input": scenario.input, "$vars": result.variables, "$nodes": result.outputs}


def _json_field(name: str, label: str, errors: dict[str, str]) -> Any:
    text = request.form.get(name, "").strip()
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        errors[name] = f"{label} is not JSON: {error.msg} at column {error.colno}."
        return None


def _named(spec: Any, errors: dict[str, str]) -> str:
    """Each refused field by its label, with the form's message."""
    labels = {item.get("key"): forms.field_label(item) for item in forms.iter_fields(spec)}
    return "; ".join(f"{labels.get(key, key)}: {message}" for key, message in errors.items())


def diagram_state(result: RunResult | None, failed: dict[str, str] | None = None) -> dict[str, Any]:
    """What the diagram marks: nodes walked, the tokens waiting now and `failed` nodes' reasons."""
    if result is None:
        return {}
    tokens: dict[str, int] = {}
    tasks: dict[str, int] = {}
    for wait in result.waits:
        counted = tokens if "token" in wait else tasks if "task" in wait else None
        if counted is not None:
            counted[wait["node"]] = counted.get(wait["node"], 0) + 1
    active = {**tokens, **tasks}
    return {"visited": sorted(result.nodes_walked), "active": active, "failed": failed or {}}


def _task_forms(result: RunResult | None, scenario: Scenario | None, formdata: Any, errors: Any):
    """(wait, generated form) per open task; the task `errors` names gets `formdata` back with
    its messages, and ids carry the task id so several forms share a page."""
    if result is None or scenario is None:
        return []
    out = []
    for wait in result.waits:
        if "task" not in wait:
            continue
        mine = errors is not None and errors.get("task") == wait["task"]
        form = None
        if wait.get("form"):
            form = spec_forms.build(
                wait["form"],
                _context(scenario, result),
                formdata if mine else None,
                errors=errors["fields"] if mine else None,
            )
            form.fields_id = f"task-{wait['task']}-fields"
            for item in form.shown:
                item.field.id = f"task-{wait['task']}-{item.key}"
            form.set_errors(errors["fields"] if mine else {})
        out.append((wait, form))
    return out


def _page(
    process: Process,
    scenario: Scenario | None,
    result: RunResult | None,
    *,
    refused: str = "",
    errors: dict[str, Any] | None = None,
    start_form: Any = None,
    status: int = 200,
):
    document = service.draft_document(process)
    spec = _start_spec(document)
    if scenario is None and start_form is None and spec:
        start_form = spec_forms.build(spec)
    errors = errors or {}
    fragment = htmx_target() == "play-region"
    return render_template(
        "designer/_play_region.html" if fragment else "designer/play.html",
        process=process,
        fragment=fragment,
        scenario=scenario,
        result=result,
        played=_record(scenario),
        form=PlayForm(),
        start_form=start_form,
        tasks=_task_forms(result, scenario, request.form, errors.get("complete")),
        tools=[w for w in (result.waits if result else []) if w.get("job") == "tool"],
        timers=[w for w in (result.waits if result else []) if w.get("job") == "timer"],
        adhoc=_adhoc_starts(document, result),
        refused=refused,
        errors=errors,
        values=request.form,
        state=diagram_state(result),
        xml=draft_xml(process),
    ), status


def _adhoc_starts(document: dict[str, Any], result: RunResult | None) -> list[tuple[str, str]]:
    """(id, title) of the activities the run's waiting ad-hoc sub-processes may start."""
    nodes = document.get("nodes") or {}
    running = {
        w["node"]
        for w in (result.waits if result else [])
        if w.get("status") == "waiting" and (nodes.get(w["node"]) or {}).get("kind") == KIND
    }
    return [
        (node_id, nodes[node_id].get("title") or node_id)
        for node_id in adhoc_activities(document)
        if nodes[node_id].get("parent") in running
    ]


def _start(process: Process):
    document = service.draft_document(process)
    spec = _start_spec(document)
    values: dict[str, Any] = {}
    if spec:
        values, field_errors = forms.coerce_submission(spec, request.form)
        if field_errors:
            form = spec_forms.build(spec, None, request.form, errors=field_errors)
            refused = "The start input was refused: " + _named(spec, field_errors)
            return _page(process, None, None, refused=refused, start_form=form, status=422)
    scenario = Scenario("play", values)
    result = _replay(process, document, scenario)
    if result.failure is not None:
        return _page(process, None, None, refused=result.failure.reason, status=422)
    return _page(process, scenario, result)


def _action(scenario: Scenario, result: RunResult, op: str) -> tuple[dict | None, dict]:
    """The action `op` asks for from the posted fields, or the errors naming each field."""
    node = request.form.get("node", "")
    errors: dict[str, Any] = {}
    if op == "complete":
        wait = next((w for w in result.waits if str(w.get("task")) == request.form.get("task")),
                    None)  # fmt: skip
        if wait is None:
            abort(400, "The task is not open in this run.")
        data: dict[str, Any] = {}
        if wait.get("form"):
            data, field_errors = forms.coerce_submission(
                wait["form"], request.form, _context(scenario, result)
            )
            if field_errors:
                errors["complete"] = {"task": wait["task"], "fields": field_errors}
                errors["refused"] = _named(wait["form"], field_errors)
                return None, errors
        return {"do": "complete", "node": wait["node"], "data": data}, errors
    if op == "tool":
        if request.form.get("outcome") == "error":
            code = request.form.get("code", "").strip()
            if not code:
                errors["code"] = "Error code: give the code the tool fails with."
                return None, errors
            error = {"code": code, "message": request.form.get("message", "").strip() or code,
                     "business": request.form.get("business") == "true"}  # fmt: skip
            return {"do": "tool", "node": node, "error": error}, errors
        output = _json_field("output", "Output", errors)
        return (None if errors else {"do": "tool", "node": node, "output": output}), errors
    if op in ("message", "signal"):
        payload = _json_field("payload", "Payload", errors)
        name = request.form.get("name", "").strip()
        if not name:
            errors["name"] = f"Name: give the {op}'s name."
        if errors:
            return None, errors
        action = {"do": op, "name": name, "payload": payload}
        if op == "message":
            action["key"] = request.form.get("key", "").strip()
        return action, errors
    if op in ("timer", "activate"):
        return {"do": op, "node": node}, errors
    code = request.form.get("code", "").strip()
    if not code:
        errors["code"] = "Error code: give the business error's code."
        return None, errors
    return {"do": "error", "node": node, "code": code}, errors


@bp.route("/<int:process_id>/play", methods=["GET", "POST"])
def play(process_id: int):
    """Play the draft; each POST replays the recorded run and applies one step."""
    process = load_process(process_id)
    document = service.draft_document(process)
    if request.method == "GET":
        return _page(process, None, None)
    if not PlayForm().validate_on_submit():
        abort(400, "The form expired or came from elsewhere; reload the page.")
    op = request.form.get("op", "")
    if op not in OPS:
        abort(400, f"Unknown play step {op!r}.")
    if op == "restart":
        return _page(process, None, None)
    if op == "start":
        return _start(process)
    scenario = _played(request.form.get("played", ""))
    if scenario is None:
        return _page(process, None, None, refused="Start the draft first.", status=422)
    if op == "undo":
        scenario = Scenario("play", scenario.input, scenario.actions[:-1])
        return _page(process, scenario, _replay(process, document, scenario))
    result = _replay(process, document, scenario)
    raw, errors = _action(scenario, result, op)
    if raw is None:
        refused = "The step was not played: " + errors.get("refused", "see the marked field.")
        return _page(process, scenario, result, errors=errors, refused=refused, status=422)
    body = {**scenario.as_dict(), "actions": [*scenario.as_dict()["actions"], raw]}
    try:
        candidate = parse(body)
    except ScenarioError as error:
        return _page(process, scenario, result, refused="; ".join(error.problems), status=422)
    after = _replay(process, document, candidate)
    if after.failure is not None:
        reason = f"The step was not played: {after.failure.reason}"
        return _page(process, scenario, result, refused=reason, status=422)
    return _page(process, candidate, after)


@bp.post("/<int:process_id>/play/save")
def save_play(process_id: int):
    """Keep the recorded run as a scenario expecting the end state it reached."""
    process = load_process(process_id, lock=True)
    if not PlayForm().validate_on_submit():
        abort(400, "The form expired or came from elsewhere; reload the page.")
    scenario = _played(request.form.get("played", ""))
    if scenario is None:
        return _page(process, None, None, refused="Start the draft first.", status=422)
    document = service.draft_document(process)
    result = _replay(process, document, scenario)
    name = request.form.get("scenario_name", "").strip()
    status = "waiting" if result.status == "running" else result.status
    body = {**scenario.as_dict(), "name": name, "expect": {"status": status}}
    try:
        row = service.save(process, json.dumps(body), actor=current_user)
    except service.ScenarioRefused as refused:
        errors = {"scenario_name": "; ".join(refused.problems)}
        message = "The scenario was not saved: " + "; ".join(refused.problems)
        return _page(process, scenario, result, refused=message, errors=errors, status=422)
    flash(f"Scenario “{row.name}” saved from the play.", "success")
    return redirect(url_for("designer.scenario", process_id=process.id, scenario_id=row.id))
