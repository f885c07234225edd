"""Loading decision models for the designer: partition checks (404), the edited revision."""

from __future__ import annotations

from flask import abort, request

from webapp.extensions import db
from webapp.models import DecisionModel
from webapp.services import decisions
from webapp.web.access import require


def load_model(
    model_id: int, *, lock: bool = False, permission: str = "processes.edit"
) -> DecisionModel:
    """The decision model, or 404 when it does not exist or lies in a partition the user
    cannot see; with `lock` its row is locked for the rest of the transaction."""
    model = decisions.lock_model(model_id) if lock else db.session.get(DecisionModel, model_id)
    if model is None:
        abort(404)
    require(permission, model.partition_id)
    return model


def posted_revision() -> int:
    """The draft revision the client edited, from the form or the `X-Draft-Revision` header."""
    raw = request.headers.get("X-Draft-Revision") or request.form.get("revision", "")
    try:
        return int(raw)
    except (TypeError, ValueError):
        abort(400, "The request does not say which draft revision it was based on.")


def chosen_decision(model: DecisionModel, document: dict | None = None) -> str | None:
    """The decision the page shows: `?decision=` (or the form's) when the model has it, else
    its first decision."""
    ids = [d["id"] for d in ((document or model.draft_document or {}).get("decisions") or [])]
    wanted = request.values.get("decision", "")
    if wanted in ids:
        return wanted
    return ids[0] if ids else None
