"""The decision table editor: the draft's table rendered on the server, each edit an htmx post
that answers with the table (structure edits) or only the problems (cell edits, as you type)."""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask_login import current_user

from webapp.designer.blueprint import bp
from webapp.designer.decisions.access import chosen_decision, load_model, posted_revision
from webapp.designer.decisions.problems import place
from webapp.models import DecisionModel
from webapp.process import decision_edits
from webapp.process.dmn import DmnProblem
from webapp.services import decisions
from webapp.services.decisions import DecisionServiceError

#: Edits that change only what one field holds: the page keeps its inputs (and the focus) and
#: gets the problems back; every other edit redraws the table.
IN_PLACE = {"cell", "description"}


def _decision(document: dict[str, Any] | None, decision_id: str | None) -> dict[str, Any] | None:
    for decision in (document or {}).get("decisions") or []:
        if decision["id"] == decision_id:
            return decision
    return None


def editor_context(
    model: DecisionModel,
    problems: list[DmnProblem],
    decision_id: str | None = None,
    refusal: DecisionServiceError | None = None,
) -> dict[str, Any]:
    document = model.draft_document
    decision_id = decision_id or chosen_decision(model)
    decision = _decision(document, decision_id)
    return {
        "model": model,
        "document": document,
        "decision": decision,
        "placed": place(decision, problems),
        "all_problems": problems,
        "refusal": refusal,
        "hit_policies": decision_edits.HIT_POLICIES,
        "aggregations": decision_edits.AGGREGATIONS,
        "types": decision_edits.TYPES,
        "current": "editor",
    }


@bp.get("/decisions/<int:model_id>")
def decision_editor(model_id: int):
    model = load_model(model_id)
    problems = decisions.draft_problems(model)
    return render_template("designer/decisions/editor.html", **editor_context(model, problems))


@bp.post("/decisions/<int:model_id>/edit")
def decision_edit(model_id: int):
    model = load_model(model_id, lock=True)
    edit = request.form.get("edit", "")
    decision_id = request.form.get("decision", "")
    try:
        state = decisions.edit_draft(
            model,
            edit,
            decision_id,
            request.form,
            base_revision=posted_revision(),
            actor=current_user,
        )
    except DecisionServiceError as exc:
        model = load_model(model_id)
        context = editor_context(model, decisions.draft_problems(model), decision_id, exc)
        return _answer(edit, context), exc.status
    context = editor_context(model, state.problems, decision_id)
    context["focus"] = focus_after(edit, request.form, context["decision"])
    return _answer(edit, context)


def focus_after(edit: str, form: Any, decision: dict[str, Any] | None) -> str | None:
    """The control that keeps the keyboard focus once a structure edit has redrawn the table:
    the first cell of a new rule, the moved rule's same button, the button that was pressed."""
    rules = ((decision or {}).get("table") or {}).get("rules") or []
    if edit == "add-rule" and rules:
        return f"cell-{len(rules) - 1}-input-0"
    if edit == "move-rule":
        try:
            index = int(form.get("rule", ""))
        except ValueError:
            return None
        direction = form.get("direction", "")
        target = index - 1 if direction == "up" else index + 1
        if not 0 <= target < len(rules):
            return None
        edge = (direction == "up" and target == 0) or (
            direction == "down" and target == len(rules) - 1
        )
        return (
            f"{'down' if direction == 'up' else 'up'}-{target}" if edge else f"{direction}-{target}"
        )
    if edit == "remove-rule":
        return "add-rule"
    return {"hit-policy": "hit_policy", "add-input": "add-input", "add-output": "add-output"}.get(
        edit
    )


def _answer(edit: str, context: dict[str, Any]) -> str:
    if edit in IN_PLACE:
        return render_template("designer/decisions/_status.html", oob=True, **context)
    return render_template("designer/decisions/_editor.html", **context)
