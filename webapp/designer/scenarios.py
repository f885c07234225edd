"""The test scenarios page of a process: list, add, edit, delete and run them on the draft."""

from __future__ import annotations

import json
from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.designer.access import load_process
from webapp.designer.blueprint import bp
from webapp.designer.editor import draft_xml
from webapp.designer.forms import RevisionForm, ScenarioForm
from webapp.designer.play import diagram_state
from webapp.engine.scenario_runner import RunResult
from webapp.inputs import MAX_INT32, whole_number
from webapp.models import Process, TestScenario
from webapp.services import scenarios as service

EXAMPLE = {
    "name": "Approved by both reviewers",
    "input": {"item": "Desk", "amount": 300},
    "actions": [{"do": "complete", "node": "task_id", "data": {"field": "value"}}],
    "expect": {"status": "completed", "reached": ["end_id"], "values": {"$vars.total": 300}},
}


def json_page(
    process: Process,
    *,
    form: ScenarioForm | None = None,
    editing: TestScenario | None = None,
    problems: list[str] | None = None,
    results: dict[int, RunResult] | None = None,
    status: int = 200,
):
    rows = service.scenarios_of(process.id)
    coverage = service.kept_coverage(process)
    failures = _failures(rows, results or {})
    return render_template(
        "designer/scenarios.html",
        process=process,
        rows=rows,
        form=form or ScenarioForm(body=json.dumps(EXAMPLE, indent=2)),
        editing=editing,
        problems=problems or [],
        results=results or {},
        coverage=coverage,
        failures=failures,
        xml=draft_xml(process) if failures else "",
        delete_form=RevisionForm(revision="0"),
        example=json.dumps(EXAMPLE, indent=2),
    ), status


def _failed_node(row: TestScenario, result: RunResult) -> dict[str, str]:
    """The node of the action a failure names ("actions[2]"), with the reason, for the diagram."""
    if result.failure is None or not result.failure.step.startswith("actions["):
        return {}
    step = result.failure.step
    index = whole_number(step.removeprefix("actions[").partition("]")[0], 0, MAX_INT32)
    actions = (row.body or {}).get("actions") or []
    if index is None or index >= len(actions) or not actions[index].get("node"):
        return {}
    return {actions[index]["node"]: f"{step}: {result.failure.reason}"}


def _failures(rows: list[TestScenario], results: dict[int, RunResult]) -> list[dict[str, Any]]:
    """Each failed scenario with the diagram state and variables where its run stopped."""
    out = []
    for row in rows:
        result = results.get(row.id)
        if result is None or result.passed:
            continue
        state = diagram_state(result, _failed_node(row, result))
        out.append({"row": row, "result": result, "state": state})
    return out


def scenario_row(process: Process, scenario_id: int) -> TestScenario:
    row = next((r for r in service.scenarios_of(process.id) if r.id == scenario_id), None)
    if row is None:
        abort(404)
    return row


@bp.route("/<int:process_id>/scenarios", methods=["GET", "POST"])
def scenarios(process_id: int):
    """The list; a POST adds a scenario from its JSON (problems name their step)."""
    process = load_process(process_id, lock=request.method == "POST")
    form = ScenarioForm()
    if request.method == "GET":
        return json_page(process)
    if not form.validate_on_submit():
        return json_page(process, form=form, status=422)
    try:
        row = service.save(process, form.body.data, actor=current_user)
    except service.ScenarioRefused as refused:
        return json_page(process, form=form, problems=refused.problems, status=refused.status)
    flash(f"Scenario “{row.name}” saved.", "success")
    return redirect(url_for("designer.scenarios", process_id=process.id))


@bp.route("/<int:process_id>/scenarios/<int:scenario_id>", methods=["GET", "POST"])
def scenario(process_id: int, scenario_id: int):
    """Edit one scenario's JSON."""
    process = load_process(process_id, lock=request.method == "POST")
    row = scenario_row(process, scenario_id)
    form = ScenarioForm()
    if request.method == "GET":
        form = ScenarioForm(body=json.dumps(row.body, indent=2, ensure_ascii=False))
        return json_page(process, form=form, editing=row)
    if not form.validate_on_submit():
        return json_page(process, form=form, editing=row, status=422)
    try:
        service.save(process, form.body.data, actor=current_user, scenario_id=row.id)
    except service.ScenarioRefused as refused:
        return json_page(
            process, form=form, editing=row, problems=refused.problems, status=refused.status
        )
    flash(f"Scenario “{row.name}” saved.", "success")
    return redirect(url_for("designer.scenarios", process_id=process.id))


@bp.post("/<int:process_id>/scenarios/<int:scenario_id>/delete")
def delete_scenario(process_id: int, scenario_id: int):
    process = load_process(process_id, lock=True)
    if not RevisionForm().validate_on_submit():
        abort(400)
    row = scenario_row(process, scenario_id)
    name = row.name
    service.delete(process, row.id)
    flash(f"Scenario “{name}” deleted.", "success")
    return redirect(url_for("designer.scenarios", process_id=process.id))


@bp.post("/<int:process_id>/scenarios/run")
def run_scenarios(process_id: int):
    """Run every scenario, or the one `scenario` names, on the draft; the page shows results."""
    process = load_process(process_id)
    if not RevisionForm().validate_on_submit():
        abort(400)
    only: Any = request.form.get("scenario")
    if only:
        only = whole_number(only, 1, MAX_INT32)
        if only is None:
            abort(400)
        scenario_row(process, only)
    results = {row.id: result for row, result in service.run_all(process, only)}
    if len(results) == len(service.scenarios_of(process.id)):
        service.remember_coverage(process, results.values())
    return json_page(process, results=results)
