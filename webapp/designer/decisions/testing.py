"""Testing a decision table on its page: the "try it" form (matched rules and the result) and
the example rows kept with the draft, run on every visit."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_login import current_user

from webapp.designer.blueprint import bp
from webapp.designer.decisions.access import chosen_decision, load_model, posted_revision
from webapp.models import DecisionModel
from webapp.process import dmn
from webapp.services import decisions
from webapp.services.decisions import DecisionServiceError


def _context(model: DecisionModel, decision_id: str | None, **extra: Any) -> dict[str, Any]:
    document = model.draft_document or {}
    columns = dmn.input_columns(document, decision_id) if decision_id else []
    decision = next((d for d in document.get("decisions") or [] if d["id"] == decision_id), None)
    return {
        "model": model,
        "document": document,
        "decision": decision,
        "columns": columns,
        "examples": decisions.run_examples(model) if model.draft_document else [],
        "values": request.form if request.method == "POST" else {},
        "current": "test",
        **extra,
    }


def _page(model: DecisionModel, decision_id: str | None, status: int = 200, **extra: Any):
    target = request.headers.get("HX-Target", "").rsplit("#", 1)[-1]
    template = (
        "designer/decisions/_try.html" if target == "try-region" else "designer/decisions/test.html"
    )
    return render_template(template, **_context(model, decision_id, **extra)), status


@bp.get("/decisions/<int:model_id>/test")
def decision_test(model_id: int):
    model = load_model(model_id)
    return _page(model, chosen_decision(model))


@bp.post("/decisions/<int:model_id>/try")
def decision_try(model_id: int):
    model = load_model(model_id)
    decision_id = chosen_decision(model)
    if decision_id is None:
        abort(404)
    document = model.draft_document or {}
    try:
        values = decisions.typed_inputs(document, decision_id, request.form)
        evaluation = decisions.try_table(document, decision_id, values)
    except DecisionServiceError as exc:
        return _page(model, decision_id, exc.status, refusal=exc)
    return _page(model, decision_id, evaluation=evaluation, tried=values)


@bp.post("/decisions/<int:model_id>/examples")
def decision_add_example(model_id: int):
    model = load_model(model_id, lock=True)
    decision_id = chosen_decision(model)
    if decision_id is None:
        abort(404)
    document = model.draft_document or {}
    try:
        values = decisions.typed_inputs(document, decision_id, request.form)
        decisions.add_example(
            model,
            decision_id,
            values,
            decisions.parse_expected(request.form.get("expected", "")),
            name=request.form.get("name", ""),
            base_revision=posted_revision(),
            actor=current_user,
        )
    except DecisionServiceError as exc:
        model = load_model(model_id)
        return _page(model, decision_id, exc.status, example_refusal=exc)
    flash("Example row added.", "success")
    return redirect(url_for("designer.decision_test", model_id=model.id, decision=decision_id))


@bp.post("/decisions/<int:model_id>/examples/<int:index>/delete")
def decision_remove_example(model_id: int, index: int):
    model = load_model(model_id, lock=True)
    try:
        decisions.remove_example(model, index, base_revision=posted_revision(), actor=current_user)
    except DecisionServiceError as exc:
        model = load_model(model_id)
        return _page(model, chosen_decision(model), exc.status, example_refusal=exc)
    flash(f"Example {index + 1} removed.", "success")
    return redirect(
        url_for("designer.decision_test", model_id=model.id, decision=chosen_decision(model))
    )
