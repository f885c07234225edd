"""The ad-hoc sub-process (BPMN 2.0.2 §10.3.5, §13.3.5): its inner activities run when they are
activated, any number of times, in any order, as Camunda 8 runs them.

The activities without an incoming flow inside it are *enabled*: each starts a fragment. When it
starts, the `activate` expression (Camunda 8's `activeElementsCollection`, a list of their ids)
activates some of them; a person or the API activates more while it runs (`activate`).
`ordering: "sequential"` runs one at a time (the `activate` list one after another). After each
inner activity completes, the `completion` condition is read: once true, no more activations are
taken, what still runs is cancelled (`cancelRemaining`, the default) or finishes, and the
sub-process completes; while it is false it stays open for more activations, also with nothing
running. Without a condition it completes when nothing inside is active once something was
activated. Its state lives in the scope token's `locals["adhoc"]`.
"""

from __future__ import annotations

from typing import Any

from webapp.engine import scopes
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import LIVE_TOKEN, HistoryKind, TokenStatus
from webapp.process.adhoc import NOT_STARTABLE
from webapp.process.expressions import ExpressionError, evaluate

KIND = "adHocSubProcess"
STATE = "adhoc"


def enabled(step: Step, node_id: str) -> list[str]:
    """The inner activities of ad-hoc sub-process `node_id` that may be activated, in order."""
    definition = step.definition
    return [
        inner
        for inner, parent in definition.parent.items()
        if parent == node_id
        and not definition.incoming.get(inner)
        and definition.kind(inner) not in NOT_STARTABLE
    ]


def _state(scope: TokenRow) -> dict[str, Any]:
    locals_ = scope.locals if isinstance(scope.locals, dict) else {}
    state = locals_.get(STATE)
    return (
        dict(state) if isinstance(state, dict) else {"activated": 0, "queue": [], "closing": False}
    )


def _save(scope: TokenRow, state: dict[str, Any]) -> None:
    scope.locals = {**(scope.locals or {}), STATE: state}


def _live_inside(step: Step, scope: TokenRow) -> list[TokenRow]:
    return [t for t in step.children(scope) if t.status in LIVE_TOKEN and not t.listener]


def refusal(step: Step, scope: TokenRow, node_id: str) -> str | None:
    """Why `node_id` cannot be activated in the ad-hoc `scope` now (None: it can)."""
    config = step.definition.config(scope.node_id)
    where = step.definition.described(scope.node_id)
    if scope.status != TokenStatus.WAITING:
        return f"{where} is not running."
    if node_id not in enabled(step, scope.node_id):
        listed = ", ".join(enabled(step, scope.node_id))
        return f"'{node_id}' is not one of the activities {where} starts ({listed})."
    if _state(scope).get("closing"):
        return f"{where} is completing; it starts nothing more."
    if config.get("ordering") == "sequential" and _live_inside(step, scope):
        return f"{where} runs one activity at a time, and one is running."
    return None


def start_inner(step: Step, scope: TokenRow, node_id: str, actor: str | None = None) -> None:
    """Run `node_id` once inside `scope` (already checked by `refusal`)."""
    state = _state(scope)
    state["activated"] = int(state.get("activated", 0)) + 1
    _save(scope, state)
    step.history.add(HistoryKind.ADHOC_ACTIVATED, scope, activity=node_id, actor=actor)
    inner = step.new_token(node_id, parent=scope)
    step.enter(inner, node_id, None)


def _requested(step: Step, token: TokenRow) -> list[str] | None:
    """The ids the `activate` expression names; None when it failed `token`."""
    expression = step.definition.config(token.node_id).get("activate")
    if not expression or not str(expression).strip():
        return []
    where = step.definition.mentioned(token.node_id)
    try:
        value = evaluate(expression, step.context(token))
    except ExpressionError as error:
        step.fail(token, "expression", f"The activities to activate of {where} failed: {error}")
        return None
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    allowed = enabled(step, token.node_id)
    if not isinstance(value, list) or any(item not in allowed for item in value):
        step.fail(
            token,
            "adhoc",
            f"The activities to activate of {where} gave {value!r}; expected a list of ids of "
            f"its activities without incoming flow ({', '.join(allowed)}).",
        )
        return None
    return [str(item) for item in value]


class AdHocSubProcess(Behaviour):
    """Waits with the activities it was asked to activate running; completes per its condition."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        if isinstance(token.locals, dict) and STATE in token.locals:
            token.status = TokenStatus.WAITING  # a retry after its condition failed: read again
            self.try_complete(step, token)
            return
        requested = _requested(step, token)
        if requested is None:
            return
        token.status = TokenStatus.WAITING
        scopes.open_event_subprocesses(step, token, token.node_id)
        sequential = (node.get("config") or {}).get("ordering") == "sequential"
        first, rest = (requested[:1], requested[1:]) if sequential else (requested, [])
        _save(token, {"activated": 0, "queue": rest, "closing": False})
        for node_id in first:
            start_inner(step, token, node_id)

    def try_complete(self, step: Step, scope: TokenRow) -> bool:
        if scope.status != TokenStatus.WAITING:
            return False
        state = _state(scope)
        live = _live_inside(step, scope)
        if any(t.status == TokenStatus.FAILED for t in step.children(scope)):
            return False
        if not state.get("closing") and self._condition_met(step, scope, state):
            state["closing"] = True
            _save(scope, state)
            step.history.add(HistoryKind.ADHOC_COMPLETING, scope, remaining=len(live))
            if step.definition.config(scope.node_id).get("cancelRemaining", True):
                for token in live:
                    step.cancel_tree(token)
                live = []
        if live:
            return False
        if state.get("queue") and not state.get("closing"):
            next_id, *rest = state["queue"]
            state["queue"] = rest
            _save(scope, state)
            start_inner(step, scope, next_id)
            return True
        if not state.get("closing"):
            conditional = bool(step.definition.config(scope.node_id).get("completion"))
            if conditional or not int(state.get("activated", 0)):
                return False  # it waits for more activations
        return scopes.try_complete(step, scope)

    @staticmethod
    def _condition_met(step: Step, scope: TokenRow, state: dict[str, Any]) -> bool:
        """The completion condition (none: once something ran and nothing is left running)."""
        condition = step.definition.config(scope.node_id).get("completion")
        if not condition or not str(condition).strip():
            return False
        try:
            return bool(evaluate(condition, step.context(scope)))
        except ExpressionError as error:
            where = step.definition.mentioned(scope.node_id)
            step.fail(scope, "expression", f"The completion condition of {where} failed: {error}")
            return False


BEHAVIOURS: dict[str, Behaviour] = {KIND: AdHocSubProcess()}
