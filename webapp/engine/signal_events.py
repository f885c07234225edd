"""Signal events: a signal catch waits for one, a signal throw or end throws one.

A signal catch, a signal boundary event and a signal event-sub-process start subscribe by name
(a `message_subscriptions` row of kind "signal"). One rule decides who receives a thrown signal:
every subscription of that name that exists at the moment of the throw. In the throwing
instance that includes the subscriptions made earlier in the same step; they fire at once, in
the throwing step, so neither the instance nor a scope can end before its own catchers ran. The
step then writes the broadcast for the other instances (`signals` plans and delivers it).
"""

from __future__ import annotations

from typing import Any

from webapp.engine import catching, store, waits
from webapp.engine.catching import KIND
from webapp.engine.context import jsonable
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import HistoryKind, TokenStatus
from webapp.process.expressions import ExpressionError, evaluate

# --- waiting for a signal ---------------------------------------------------------------------


def catch(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """An intermediate signal catch: the token waits; the payload becomes its output."""
    token.status = TokenStatus.WAITING
    waits.subscribe(step, token, token.node_id, KIND)


# --- throwing ---------------------------------------------------------------------------------


def throw(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """An intermediate signal throw: the token goes on, then the signal reaches the instance's
    own catchers in this step and the other instances after it commits."""
    thrown = broadcast_from(step, token, node.get("config") or {})
    if thrown is not None:
        step.leave_single(token)
        reach_own(step, thrown)


def broadcast_from(step: Step, token: TokenRow, config: dict[str, Any]) -> dict[str, Any] | None:
    """Evaluate the payload at `token` and record the broadcast (for `reach_own`, then the
    step's end); None when the token failed."""
    context = step.context(token)
    payload: dict[str, Any] = {}
    for name, text in (config.get("payload") or {}).items():
        try:
            payload[name] = evaluate(text, context)
        except ExpressionError as error:
            at = step.definition.mentioned(token.node_id)
            step.fail(token, "expression", f"The payload value '{name}' of {at} failed: {error}")
            return None
    name = str(config.get("signal") or "")
    thrown = {
        "name": name,
        "payload": jsonable(payload),
        "node_id": token.node_id,
        "actor": step.starter,
        "covers": store.high_water(step.conn),
        "reached_own": False,
    }
    step.broadcasts.append(thrown)
    step.history.add(HistoryKind.SIGNAL_THROWN, token, name=name)
    return thrown


def reach_own(step: Step, thrown: dict[str, Any]) -> None:
    """The signal reaches the throwing instance's catchers subscribed at this moment, saved or
    made earlier in this step, in this step: before the instance or any scope of it can end.
    Its subscriptions of that name are used up; the broadcast skips this instance."""
    name = thrown["name"]
    catchers: list[tuple[TokenRow | None, str]] = []
    if step.instance.id is not None:
        saved = catching.take_saved(step.conn, step.instance.id, name)
        catchers += [(step.token(token_id), node_id) for token_id, node_id in saved]
    catchers += step.take_subscriptions(KIND, name)
    details = {"name": name, "thrown_at": thrown["node_id"]}
    fired: set[tuple[int, str]] = set()
    for token, node_id in catchers:
        if token is None or (id(token), node_id) in fired:
            continue
        if catching.fire(step, token, node_id, thrown["payload"], thrown["actor"], details):
            fired.add((id(token), node_id))
    thrown["reached_own"] = bool(fired)


class SignalCatch(Behaviour):
    """An intermediate signal catch: the token waits; the payload becomes its output."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        catch(step, token, node)


class SignalThrow(Behaviour):
    """An intermediate signal throw: the token goes on; the signal reaches the catchers."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        throw(step, token, node)


BEHAVIOURS: dict[str, Behaviour] = {"signalCatch": SignalCatch(), "signalThrow": SignalThrow()}
