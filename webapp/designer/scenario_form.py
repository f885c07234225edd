"""A test scenario edited as a form: field rows for the start input, action and check rows.

The form reads into the same JSON shape the JSON view saves, so both go through one check of
the scenario format; a text field that is not JSON is named by its step ("actions[1].data").
Adding or removing a row re-renders the form from what was posted, saving nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user
from werkzeug.datastructures import MultiDict

from webapp.designer.access import load_process
from webapp.designer.blueprint import bp
from webapp.designer.forms import PlayForm, ScenarioForm
from webapp.designer.scenarios import json_page, scenario_row
from webapp.inputs import whole_number
from webapp.models import Process, TestScenario
from webapp.process import forms
from webapp.process.document import plain_start
from webapp.process.scenarios import ACTIONS, STATUSES, TOOL_KINDS, adhoc_activities
from webapp.services import scenarios as service
from webapp.web import spec_forms

# The most rows of each list one form may carry.
ROW_LIMIT = 500
KIND_LABELS = {
    "complete": "Complete a task",
    "tool": "Stub a tool",
    "message": "Send a message",
    "signal": "Broadcast a signal",
    "timer": "Fire a timer",
    "error": "Report a business error",
    "activate": "Start an ad-hoc activity",
}
OPS = ("save", "refresh", "add-action", "add-node", "add-value", "json", "from-json")


def _start_spec(document: Mapping[str, Any]) -> Any:
    return ((plain_start(document) or {}).get("config") or {}).get("form")


def node_choices(document: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """(id, label) of the draft's nodes each action kind may name, and "any" for checks."""
    nodes = document.get("nodes") or {}

    def label(node_id: str, node: Mapping[str, Any]) -> str:
        name = str(node.get("title") or node.get("name") or "").strip()
        return f"{name} ({node_id})" if name else node_id

    def timer(node: Mapping[str, Any]) -> bool:
        config = node.get("config") or {}
        return node.get("kind") == "timerCatch" or config.get("event") == "timer"

    tests = {
        "complete": lambda n: n.get("kind") == "userTask",
        "error": lambda n: n.get("kind") == "userTask",
        "tool": lambda n: n.get("kind") in TOOL_KINDS and bool(n.get("config")),
        "timer": timer,
        "any": lambda n: True,
    }
    startables = set(adhoc_activities(document))
    choices = {
        kind: sorted(
            (
                (node_id, label(node_id, node))
                for node_id, node in nodes.items()
                if isinstance(node, dict) and test(node)
            ),
            key=lambda pair: pair[1].lower(),
        )
        for kind, test in tests.items()
    }
    choices["activate"] = [pair for pair in choices["any"] if pair[0] in startables]
    return choices


def _text(value: Any) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def rows_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The form's rows for a scenario in its JSON shape."""
    actions = []
    for raw in _listed(body.get("actions")):
        raw = raw if isinstance(raw, dict) else {}
        error = raw.get("error") if isinstance(raw.get("error"), dict) else None
        actions.append({
            "do": raw.get("do", "complete"), "node": raw.get("node", ""),
            "data": _text(raw.get("data")) if raw.get("data") else "",
            "outcome": "error" if error else "output", "output": _text(raw.get("output")),
            "error_code": (error or {}).get("code", ""),
            "error_message": (error or {}).get("message", ""),
            "business": bool((error or {}).get("business")),
            "name": raw.get("name", ""), "key": raw.get("key", ""),
            "payload": _text(raw.get("payload")), "code": raw.get("code", ""),
        })  # fmt: skip
    raw_expect = body.get("expect")
    expect: dict[str, Any] = raw_expect if isinstance(raw_expect, dict) else {}
    checks = [
        {"kind": kind, "node": str(node)}
        for kind in ("reached", "not_reached")
        for node in _listed(expect.get(kind))
    ]
    raw_values = expect.get("values")
    values = [
        {"expression": str(k), "expected": _text(v)}
        for k, v in (raw_values.items() if isinstance(raw_values, dict) else ())
    ]
    return {
        "name": body.get("name", ""),
        "input": body.get("input") if isinstance(body.get("input"), dict) else {},
        "input_text": _text(body.get("input")) if body.get("input") else "",
        "actions": actions,
        "status": expect.get("status", ""),
        "checks": checks,
        "values": values,
    }


def _count(form: Mapping[str, str], name: str) -> int:
    number = whole_number(form.get(name, "0"), 0, ROW_LIMIT)
    if number is None:
        abort(400, f"The form's {name} count is not a number from 0 to {ROW_LIMIT}.")
    return number


def rows_posted(form: Any) -> dict[str, Any]:
    """The rows as posted, less the one a remove button names."""
    remove = form.get("remove", "")
    actions = [
        {
            "do": form.get(f"a{i}-do", "complete"),
            "node": form.get(f"a{i}-node", ""),
            "data": form.get(f"a{i}-data", ""),
            "outcome": form.get(f"a{i}-outcome", "output"),
            "output": form.get(f"a{i}-output", ""),
            "error_code": form.get(f"a{i}-error-code", ""),
            "error_message": form.get(f"a{i}-error-message", ""),
            "business": form.get(f"a{i}-business") == "true",
            "name": form.get(f"a{i}-name", ""),
            "key": form.get(f"a{i}-key", ""),
            "payload": form.get(f"a{i}-payload", ""),
            "code": form.get(f"a{i}-code", ""),
        }
        for i in range(_count(form, "actions"))
        if remove != f"action-{i}"
    ]
    checks = [
        {"kind": form.get(f"c{i}-kind", "reached"), "node": form.get(f"c{i}-node", "")}
        for i in range(_count(form, "checks"))
        if remove != f"check-{i}"
    ]
    values = [
        {"expression": form.get(f"v{i}-expression", ""), "expected": form.get(f"v{i}-expected", "")}
        for i in range(_count(form, "values"))
        if remove != f"value-{i}"
    ]
    op = form.get("op", "")
    if op == "add-action":
        actions.append(rows_of({"actions": [{"do": "complete"}]})["actions"][0])
    if op == "add-node":
        checks.append({"kind": "reached", "node": ""})
    if op == "add-value":
        values.append({"expression": "", "expected": ""})
    return {
        "name": form.get("name", ""),
        "input_text": form.get("input-json", ""),
        "actions": actions,
        "status": form.get("status", ""),
        "checks": checks,
        "values": values,
    }


def _json(text: str, where: str, problems: list[str]) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problems.append(f"{where}: not JSON at column {error.colno}: {error.msg}")
        return None


def _action(row: Mapping[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    do = row["do"]
    if do == "complete":
        return {
            "do": do,
            "node": row["node"],
            "data": _json(row["data"], f"{where}.data", problems) or {},
        }
    if do == "tool":
        if row["outcome"] == "error":
            error = {"code": row["error_code"].strip(), "business": row["business"]}
            error["message"] = row["error_message"].strip() or error["code"]
            return {"do": do, "node": row["node"], "error": error}
        return {
            "do": do,
            "node": row["node"],
            "output": _json(row["output"], f"{where}.output", problems),
        }
    if do == "message":
        payload = _json(row["payload"], f"{where}.payload", problems)
        return {"do": do, "name": row["name"], "key": row["key"].strip(), "payload": payload}
    if do == "signal":
        return {
            "do": do,
            "name": row["name"],
            "payload": _json(row["payload"], f"{where}.payload", problems),
        }
    if do in ("timer", "activate"):
        return {"do": do, "node": row["node"]}
    return {"do": do, "node": row["node"], "code": row["code"]}


def body_of(rows: Mapping[str, Any], spec: Any, form: Any) -> tuple[dict[str, Any], list[str]]:
    """The scenario's JSON shape from the rows, and the problems reading its fields (each named
    by its step); the scenario format's own checks come after, on saving."""
    problems: list[str] = []
    if spec:
        data, errors = forms.coerce_submission(spec, form)
        problems += [f"input.{key}: {message}" for key, message in errors.items()]
    else:
        data = _json(rows["input_text"], "input", problems) or {}
    expect: dict[str, Any] = {}
    if rows["status"]:
        expect["status"] = rows["status"]
    for kind in ("reached", "not_reached"):
        nodes = [c["node"] for c in rows["checks"] if c["kind"] == kind]
        if nodes:
            expect[kind] = nodes
    values = {}
    for index, row in enumerate(rows["values"]):
        expression = row["expression"].strip()
        if not expression:
            problems.append(f"expect.values[{index}]: give the expression to check")
            continue
        values[expression] = _json(
            row["expected"] or "null", f"expect.values[{expression!r}]", problems
        )
    if values:
        expect["values"] = values
    actions = [_action(row, f"actions[{i}]", problems) for i, row in enumerate(rows["actions"])]
    return {"name": rows["name"], "input": data, "actions": actions, "expect": expect}, problems


def _start_form(spec: Any, rows: Mapping[str, Any], posted: Any) -> Any:
    if not spec:
        return None
    formdata = (
        posted
        if posted is not None
        else MultiDict(forms.as_submission(rows.get("input") or {}, spec))
    )
    form = spec_forms.build(spec, None, formdata)
    form.fields_id = "scenario-input-fields"
    return form


def form_page(
    process: Process,
    rows: Mapping[str, Any],
    *,
    editing: TestScenario | None = None,
    posted: Any = None,
    problems: list[str] | None = None,
    status: int = 200,
):
    document = service.draft_document(process)
    return render_template(
        "designer/scenario_form.html",
        process=process,
        rows=rows,
        editing=editing,
        form=PlayForm(),
        start_form=_start_form(_start_spec(document), rows, posted),
        choices=node_choices(document),
        kinds=[(kind, KIND_LABELS[kind]) for kind in ACTIONS],
        statuses=STATUSES,
        problems=problems or [],
    ), status


def _post(process: Process, editing: TestScenario | None):
    if not PlayForm().validate_on_submit():
        abort(400, "The form expired or came from elsewhere; reload the page.")
    op = "refresh" if request.form.get("remove") else request.form.get("op", "save")
    if op not in OPS:
        abort(400, f"Unknown scenario form step {op!r}.")
    if op == "from-json":
        return _from_json(process, editing)
    rows = rows_posted(request.form)
    if op != "save" and op != "json":
        return form_page(process, rows, editing=editing, posted=request.form)
    body, problems = body_of(rows, _start_spec(service.draft_document(process)), request.form)
    if problems:
        return form_page(
            process, rows, editing=editing, posted=request.form, problems=problems, status=422
        )
    text = json.dumps(body, indent=2, ensure_ascii=False)
    if op == "json":
        return json_page(process, form=ScenarioForm(body=text), editing=editing)
    try:
        row = service.save(
            process, text, actor=current_user, scenario_id=editing.id if editing else None
        )
    except service.ScenarioRefused as refused:
        return form_page(
            process, rows, editing=editing, posted=request.form,
            problems=refused.problems, status=refused.status,
        )  # fmt: skip
    flash(f"Scenario “{row.name}” saved.", "success")
    return redirect(url_for("designer.scenarios", process_id=process.id))


def _from_json(process: Process, editing: TestScenario | None):
    """The JSON view's text shown in the form; text that is not JSON stays in the JSON view."""
    text = request.form.get("body", "")
    form = ScenarioForm(body=text)
    try:
        raw = service.read_text(text)
        if not isinstance(raw, dict):
            raise service.ScenarioRefused(["scenario: a JSON object is required"])
    except service.ScenarioRefused as refused:
        return json_page(process, form=form, editing=editing, problems=refused.problems, status=422)
    return form_page(process, rows_of(raw), editing=editing)


@bp.route("/<int:process_id>/scenarios/new", methods=["GET", "POST"])
def new_scenario(process_id: int):
    """Add a scenario in the form; buttons add and remove rows or switch to the JSON view."""
    process = load_process(process_id, lock=request.method == "POST")
    if request.method == "GET":
        return form_page(process, rows_of({"expect": {"status": "completed"}}))
    return _post(process, None)


@bp.route("/<int:process_id>/scenarios/<int:scenario_id>/form", methods=["GET", "POST"])
def scenario_form(process_id: int, scenario_id: int):
    """Edit one scenario in the form."""
    process = load_process(process_id, lock=request.method == "POST")
    row = scenario_row(process, scenario_id)
    if request.method == "GET":
        return form_page(process, rows_of(row.body), editing=row)
    return _post(process, row)
