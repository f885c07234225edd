"""The complex gateway (BPMN 2.0.2 §13.4.5): a join that goes on once its activation condition
holds over the tokens that have arrived, then splits as an inclusive gateway does.

It is *waiting for start* until the activation condition (`$gateway.arrived`: incoming flows
holding a token, `$gateway.waiting`: those without one; none given: all of them arrived) holds.
Then one token per filled incoming flow is consumed and the split runs once; the gateway is
*waiting for reset*: a token on each of the other incoming flows is consumed without the split
running again. It resets when every incoming flow has had its token, or when no live token of
its scope can still reach a flow it waits for (as an inclusive join decides), and then reads the
tokens that came meanwhile as a new start. The reset wait is a keeper token at the gateway
(`locals["resetting"]`: the flows it waits for) that, as a listener, keeps no scope alive.
"""

from __future__ import annotations

from typing import Any

from webapp.engine import gateways
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, TokenStatus
from webapp.process.expressions import ExpressionError, evaluate

#: The locals key of the keeper token that holds a complex gateway's reset phase.
RESETTING = "resetting"


def _keeper(step: Step, node_id: str, scope: TokenRow | None) -> TokenRow | None:
    return next(
        (
            t
            for t in step.tokens
            if t.node_id == node_id
            and t.parent is scope
            and t.status == TokenStatus.WAITING
            and isinstance(t.locals, dict)
            and RESETTING in t.locals
        ),
        None,
    )


def _arrived(step: Step, node_id: str, scope: TokenRow | None) -> dict[str, TokenRow]:
    """The first waiting token on each incoming flow of the gateway, by flow."""
    arrived: dict[str, TokenRow] = {}
    for token in step.tokens:
        if (
            token.node_id == node_id
            and token.parent is scope
            and token.status == TokenStatus.WAITING
            and not (isinstance(token.locals, dict) and RESETTING in token.locals)
        ):
            arrived.setdefault(token.arrived_via or "", token)
    return arrived


def _activated(step: Step, node_id: str, token: TokenRow, arrived: dict[str, TokenRow]) -> bool:
    """Whether the activation condition holds over `arrived`; False (and `token` failed) when the
    condition fails."""
    incoming = step.definition.incoming.get(node_id, [])
    filled = sum(1 for flow_id in incoming if flow_id in arrived)
    condition = step.definition.config(node_id).get("activation")
    if not condition or not str(condition).strip():
        return filled == len(incoming)
    context = step.context(token)
    context["$gateway"] = {"arrived": filled, "waiting": len(incoming) - filled}
    try:
        return bool(evaluate(condition, context))
    except ExpressionError as error:
        where = step.definition.mentioned(node_id)
        step.fail(token, "expression", f"The activation condition of {where} failed: {error}")
        return False


def _try_start(step: Step, node_id: str, scope: TokenRow | None) -> None:
    """Waiting for start: when the condition holds, consume one token per filled flow, split
    once and wait for reset on the other incoming flows."""
    arrived = _arrived(step, node_id, scope)
    if not arrived or not _activated(step, node_id, next(iter(arrived.values())), arrived):
        return
    continuing, *others = arrived.values()
    for other in others:
        other.status = TokenStatus.DONE
    remaining = [f for f in step.definition.incoming.get(node_id, []) if f not in arrived]
    if remaining:
        locals_ = {"listen": True, RESETTING: remaining}
        keeper = step.new_token(node_id, None, parent=scope, locals=locals_)
        keeper.status = TokenStatus.WAITING
    continuing.status = TokenStatus.ACTIVE
    gateways.split(step, continuing, len(arrived))


def _reset(step: Step, keeper: TokenRow) -> None:
    """The reset phase is over: the keeper ends and the tokens that came meanwhile start anew."""
    keeper.status = TokenStatus.DONE
    step.history.add(HistoryKind.GATEWAY_RESET, keeper)
    _try_start(step, keeper.node_id, keeper.parent)


class ComplexGateway(Behaviour):
    """Waits for its activation condition; after it, takes in the late branches, then resets."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        node_id = token.node_id
        keeper = _keeper(step, node_id, token.parent)
        state = keeper.locals if keeper is not None and isinstance(keeper.locals, dict) else {}
        waited = state.get(RESETTING, [])
        if keeper is not None and token.arrived_via in waited:
            token.status = TokenStatus.DONE
            step.history.add(HistoryKind.GATEWAY_CONSUMED, token, flow=token.arrived_via)
            left = [flow_id for flow_id in waited if flow_id != token.arrived_via]
            keeper.locals = {**state, RESETTING: left}
            if not left:
                _reset(step, keeper)
            return
        token.status = TokenStatus.WAITING
        if keeper is None:
            _try_start(step, node_id, token.parent)


def release_resets(step: Step) -> bool:
    """End the reset phase of every complex gateway that no live token of its scope can still
    reach a flow it waits for; True when one reset (tokens may move on: the step drains again)."""
    reach_of = step.definition.complex_reach
    if not reach_of:
        return False
    released = False
    for keeper in list(step.tokens):
        if keeper.status != TokenStatus.WAITING or keeper.node_id not in reach_of:
            continue
        if not isinstance(keeper.locals, dict) or RESETTING not in keeper.locals:
            continue
        scope = keeper.parent
        if scope is not None and scope.status not in OPEN_TOKEN:
            continue
        reach = reach_of[keeper.node_id]
        waited = set(keeper.locals[RESETTING])
        live = (
            t.node_id
            for t in step.tokens
            if t.parent is scope and t.status in OPEN_TOKEN and not t.listener
        )
        if any(reach.get(node_id, frozenset()) & waited for node_id in live):
            continue
        _reset(step, keeper)
        released = True
    return released


BEHAVIOURS: dict[str, Behaviour] = {"complexGateway": ComplexGateway()}
