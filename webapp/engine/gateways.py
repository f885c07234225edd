"""Gateways: exclusive, parallel, inclusive and event-based (and the conditions they evaluate).

An inclusive join is checked after the step's queue drains (`release_joins`, called by
`interpreter.run`): it fires once a token waits there and no live token of its scope can still
reach an empty incoming flow. Which node can reach which flow is precomputed per version
(`Definition.inclusive_reach`), so the check is a lookup over the scope's loaded tokens.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from webapp.engine import waits
from webapp.engine.definitions import Definition
from webapp.engine.runtime import NO_OUTPUT, Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, TokenStatus
from webapp.process.expressions import ExpressionError, evaluate
from webapp.process.kinds import EVENT_GATEWAY_TARGETS


def choose(step: Step, token: TokenRow, *, first: bool) -> tuple[list[str], bool] | None:
    """The outgoing flows (document order) whose condition is true (no condition is true), only
    the first when `first`; else the default flow (second value True). None when the token failed:
    a condition's error, or nothing true and no default."""
    default = None
    taken: list[str] = []
    context = step.context(token)
    for flow_id, flow in step.definition.outgoing.get(token.node_id, []):
        if flow.get("default"):
            default = default or flow_id
            continue
        condition = flow.get("condition")
        if condition is None or not str(condition).strip():
            chosen = True
        else:
            try:
                chosen = bool(evaluate(condition, context))
            except ExpressionError as error:
                where = step.definition.mentioned_flow(flow_id)
                message = f"The condition of {where} failed: {error}"
                step.fail(token, "expression", message, flow=flow_id)
                return None
        if chosen:
            taken.append(flow_id)
            if first:
                break
    if taken:
        return taken, False
    if default is None:
        step.fail(
            token,
            "no_branch",
            f"No outgoing flow of {step.definition.mentioned(token.node_id)} has a true"
            " condition and the gateway has no default flow.",
        )
        return None
    return [default], True


# --- inclusive gateway ----------------------------------------------------------------------


def inclusive(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """A join (more than one incoming flow) waits until `release_joins` fires it; then, or at
    once without a join, the split takes every flow whose condition is true."""
    if token.node_id in step.definition.inclusive_reach:
        token.status = TokenStatus.WAITING
        return
    split(step, token, None)


def split(step: Step, token: TokenRow, joined: int | None) -> None:
    """Take every outgoing flow whose condition holds (else the default), `joined` tokens
    having been consumed to go on (None: no join)."""
    chosen = choose(step, token, first=False)
    if chosen is None:
        return
    flows, default = chosen
    details: dict[str, Any] = {"default": True} if default else {}
    step.leave(token, flows[0], taken=flows, joined=joined, **details)
    for flow_id in flows[1:]:
        child = step.new_token(token.node_id, token.arrived_via, parent=token.parent)
        child.step = token.step
        step.leave(child, flow_id)


def awaited(
    definition: Definition, join: str, filled: Iterable[str], live_nodes: Iterable[str]
) -> list[str]:
    """The incoming flows of inclusive `join` that hold no token (`filled` hold one) and that a
    live token of its scope, at `live_nodes`, can still reach: what the join waits for.

    A token held at another inclusive join counts only when it cannot also reach a filled
    incoming flow (BPMN 2.0.2 §13.4.3): so nested inclusive blocks in a loop never wait for
    each other's tokens for ever.
    """
    reach = definition.inclusive_reach.get(join) or {}
    held = set(filled)
    reachable: set[str] = set()
    for node_id in live_nodes:
        if node_id == join:
            continue
        flows = reach.get(node_id, frozenset())
        if node_id in definition.inclusive_reach and flows & held:
            continue
        reachable.update(flows)
    return [f for f in definition.incoming.get(join, []) if f not in held and f in reachable]


def release_joins(step: Step) -> bool:
    """Fire every inclusive join nothing live can still reach an empty incoming flow of; True
    when one fired (its token moves on: the step drains again)."""
    joins = step.definition.inclusive_reach
    if not joins:
        return False
    waiting: dict[tuple[int, str], list[TokenRow]] = {}
    for token in step.tokens:
        if token.status == TokenStatus.WAITING and token.node_id in joins:
            waiting.setdefault((id(token.parent), token.node_id), []).append(token)
    fired = False
    for (_, join), arrived in waiting.items():
        scope = arrived[0].parent
        if scope is not None and scope.status not in OPEN_TOKEN:
            continue
        live = (
            t.node_id
            for t in step.tokens
            if t.parent is scope and t.status in OPEN_TOKEN and not t.listener
        )
        filled = {t.arrived_via or "" for t in arrived}
        if awaited(step.definition, join, filled, live):
            continue
        _fire(step, arrived)
        fired = True
    return fired


def _fire(step: Step, arrived: list[TokenRow]) -> None:
    """One token per filled incoming flow is consumed; the first goes on, the others are done."""
    consumed: dict[str, TokenRow] = {}
    for token in arrived:
        consumed.setdefault(token.arrived_via or "", token)
    continuing, *others = consumed.values()
    for other in others:
        other.status = TokenStatus.DONE
    continuing.status = TokenStatus.ACTIVE
    split(step, continuing, len(consumed))


# --- event-based gateway --------------------------------------------------------------------


def targets(definition: Definition, gateway: str) -> list[str]:
    """The catch events and receive tasks after an event-based gateway, in flow order."""
    return [flow["target"] for _flow_id, flow in definition.outgoing.get(gateway, [])]


def event_gateway(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """The token waits at the gateway holding every target's timer, message or signal wait (each
    with the target's node id); nothing is subscribed if one of them cannot be."""
    definition = step.definition
    placed: list[waits.Wait] = []
    for target in targets(definition, token.node_id):
        event = EVENT_GATEWAY_TARGETS.get(definition.kind(target))
        if event is None:
            step.fail(
                token,
                "unsupported",
                f"{step.definition.described(target)} cannot follow an event-based gateway.",
            )
            return
        wait = waits.prepare(step, token, target, event)
        if wait is None:
            return
        placed.append(wait)
    if not placed:
        step.fail(
            token, "no_flow", f"{step.definition.described(token.node_id)} has no outgoing flow."
        )
        return
    token.status = TokenStatus.WAITING
    for wait in sorted(placed, key=lambda wait: waits.EVENTS.index(wait.event)):
        waits.place(step, token, wait)


def event_won(step: Step, token: TokenRow, target: str, output: Any) -> None:
    """The event of `target` happened first: withdraw the others, move the token to `target` and
    complete it at once with `output` (the payload) without subscribing again."""
    definition = step.definition
    gateway = token.node_id
    others = targets(definition, gateway)
    waits.withdraw(step, token, tuple(others))
    config = definition.config(target)
    event = EVENT_GATEWAY_TARGETS.get(definition.kind(target), "")
    name = config.get("message") if event == "message" else config.get("signal")
    step.history.add(
        HistoryKind.EVENT_WON,
        token,
        winner=target,
        event=event,
        name=name or None,
        withdrawn=[other for other in others if other != target],
    )
    flow_id = next(f for f, flow in definition.outgoing[gateway] if flow["target"] == target)
    step.history.add(HistoryKind.LEFT, token, flow=flow_id)
    token.node_id = target
    token.arrived_via = flow_id
    token.step += 1
    token.status = TokenStatus.ACTIVE
    step.history.add(HistoryKind.ENTERED, token, flow=flow_id, scope=step.scope_of(token))
    step.complete(token, NO_OUTPUT if event in ("timer", "conditional") else output)


# --- the gateway behaviours -------------------------------------------------------------------


class ExclusiveGateway(Behaviour):
    """The first outgoing flow (document order) whose condition is true, else the default."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        chosen = choose(step, token, first=True)
        if chosen is not None:
            flows, default = chosen
            step.leave(token, flows[0], **({"default": True} if default else {}))


class ParallelGateway(Behaviour):
    """Join: wait for a token on every incoming flow, then continue once; split: fork."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        _parallel(step, token)


class InclusiveGateway(Behaviour):
    """A join waits until nothing live can still reach it; the split takes every true flow."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        inclusive(step, token, node)


class EventGateway(Behaviour):
    """The token waits holding every target's wait; the first event to happen wins."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        event_gateway(step, token, node)

    def holds(self, step: Step, token: TokenRow, node_id: str) -> bool:
        return token.status == TokenStatus.WAITING and node_id in targets(
            step.definition, token.node_id
        )


def _parallel(step: Step, token: TokenRow) -> None:
    node_id = token.node_id
    incoming = step.definition.incoming.get(node_id, [])
    continuing = token
    joined = 1
    if len(incoming) > 1:
        token.status = TokenStatus.WAITING
        scope = token.parent
        arrived: dict[str, TokenRow] = {}
        for other in step.tokens:
            if (
                other.status == TokenStatus.WAITING
                and other.node_id == node_id
                and other.parent is scope
            ):
                arrived.setdefault(other.arrived_via or "", other)
        if any(flow_id not in arrived for flow_id in incoming):
            return
        continuing = arrived[token.arrived_via or ""]
        for flow_id in incoming:
            if arrived[flow_id] is not continuing:
                arrived[flow_id].status = TokenStatus.DONE
        continuing.status = TokenStatus.ACTIVE
        joined = len(incoming)
    outgoing = step.definition.outgoing.get(node_id, [])
    if not outgoing:
        step.fail(
            continuing, "no_flow", f"{step.definition.described(node_id)} has no outgoing flow."
        )
        return
    # Branches move in the order of the outgoing flows (as at an inclusive split), so within
    # one step a signal thrown in a later branch reaches a catch an earlier branch reached.
    step.leave(continuing, outgoing[0][0], **({"joined": joined} if joined > 1 else {}))
    for flow_id, _flow in outgoing[1:]:
        child = step.new_token(node_id, continuing.arrived_via, parent=continuing.parent)
        child.step = continuing.step
        step.leave(child, flow_id)


BEHAVIOURS: dict[str, Behaviour] = {
    "exclusiveGateway": ExclusiveGateway(),
    "parallelGateway": ParallelGateway(),
    "inclusiveGateway": InclusiveGateway(),
    "eventBasedGateway": EventGateway(),
}
