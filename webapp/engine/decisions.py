"""Business rule tasks: the decision is resolved and evaluated inside the step, with the context
a condition sees; no worker round trip, since evaluation is pure and bounded.

The published version comes from `published_decision` (latest, or the pinned number, in the
instance's partition). A missing decision, a failing evaluation (a UNIQUE or ANY conflict, an
expression error) or no matching rule where one is `required` is an incident naming decision,
version and rules; retry enters the task again, so a decision published meanwhile is used.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from webapp.engine.context import jsonable, storable_text
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.decisions import published_decision
from webapp.models.statuses import HistoryKind
from webapp.process.dmn import DecisionError, evaluate
from webapp.process.expressions import ExpressionError


def _resolve(step: Step, decision: str, pinned: int | None) -> tuple[int, dict[str, Any]] | None:
    """(version number, document) of the published decision, read in the step's transaction."""
    with Session(bind=step.conn) as session:
        found = published_decision(session, decision, step.instance.partition_id, pinned)
        return (found.number, found.document) if found is not None else None


def _evaluate(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """Evaluate the decision, record it in the history, and move on with its result."""
    config = node.get("config") or {}
    decision = str(config.get("decision") or "")
    version = config.get("version")
    pinned = version if config.get("binding") == "version" and isinstance(version, int) else None
    at = step.definition.described(token.node_id)
    shown = storable_text(decision[:200])
    resolved = _resolve(step, decision, pinned) if decision else None
    if resolved is None:
        which = f"version {pinned} of decision '{shown}'" if pinned else f"decision '{shown}'"
        message = f"{at} cannot evaluate {which}: it is not published for this process."
        step.fail(token, "decision_missing", message, decision=shown, version=pinned)
        return
    number, document = resolved
    named = f"decision '{shown}' (version {number})"
    try:
        evaluation = evaluate(document, decision, step.context(token), now=step.now)
    except DecisionError as error:
        rules = list(error.rules or [])
        why = error.message if error.decision_id == decision else str(error)  # a required one
        message = storable_text(f"{at} failed to evaluate {named}: {why}")
        step.fail(token, "decision", message, decision=shown, version=number, rules=rules)
        return
    except ExpressionError as error:
        message = storable_text(f"{at} failed to evaluate {named}: {error}")
        step.fail(token, "decision", message, decision=shown, version=number)
        return
    record = jsonable(evaluation.to_json())
    step.history.add(HistoryKind.DECISION_EVALUATED, token, **{**record, "version": number})
    if config.get("required") and not evaluation.matched:
        message = f"{at}: no rule of {named} matched, and a match is required."
        step.fail(token, "decision_no_match", message, decision=shown, version=number, rules=[])
        return
    step.complete(token, jsonable(evaluation.result))


class BusinessRuleTask(Behaviour):
    """A business rule task evaluates its decision in the step and moves on with the result."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        _evaluate(step, token, node)


BEHAVIOURS: dict[str, Behaviour] = {"businessRuleTask": BusinessRuleTask()}
