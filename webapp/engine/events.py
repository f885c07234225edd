"""Events a token passes through or waits at: start, end, escalation throw, boundary, and the
intermediate timer and message catches (with receive tasks, which wait as message catches do)."""

from __future__ import annotations

from typing import Any

from webapp.engine import activities, scopes, signal_events, waits
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow as Token


class StartEvent(Behaviour):
    """A start moves on; an event sub-process's start is held by its listener while it waits."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        step.leave_single(token)

    def held_by(self, step: Step, token: Token, node_id: str) -> bool:
        return (
            token.listener
            and step.definition.starts.get(token.node_id) == node_id
            and token.status == "waiting"
        )


class BoundaryEvent(Behaviour):
    """A fired boundary event's new token moves on; its host holds its wait."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        step.leave_single(token)

    def held_by(self, step: Step, token: Token, node_id: str) -> bool:
        return scopes.host_of(step, node_id, token)


class EndEvent(Behaviour):
    """A plain end ends its token; error, escalation and terminate ends act on their scope."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _end(step, token, node)

    def completed(self, step: Step, token: Token) -> None:
        """A message end's tool finished: only now does its token end."""
        token.status = "done"
        step.ended(token)


class EscalationThrow(Behaviour):
    """An intermediate escalation: thrown to the nearest catcher, then the token goes on."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        code = str((node.get("config") or {}).get("code") or "")
        scopes.throw(step, token, "escalation", code)
        if token.status == "active":
            step.leave_single(token)


class CatchEvent(Behaviour):
    """An intermediate timer or message catch (or a receive task): the token waits for it."""

    def __init__(self, event: str) -> None:
        self.event = event

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        wait = waits.prepare(step, token, token.node_id, self.event)
        if wait is None:
            return
        token.status = "waiting"
        waits.place(step, token, wait)


def _end(step: Step, token: Token, node: dict[str, Any]) -> None:
    """The end event's `event` decides: a message, error, escalation, signal or terminate end."""
    config = node.get("config") or {}
    event = config.get("event") or ""
    code = str(config.get("code") or "")
    if event == "message":
        activities.message_end(step, token, node)
        return
    if event == "error":
        scopes.raise_error(step, token, code)
        return
    if event == "escalation":
        scopes.throw(step, token, "escalation", code)
        if token.status not in ("active",):
            return
    if event == "signal":
        thrown = signal_events.broadcast_from(step, token, config)
        if thrown is None:
            return
        token.status = "done"
        step.ended(token)
        signal_events.reach_own(step, thrown)
        return
    if event == "terminate":
        scopes.terminate(step, token)
    token.status = "done"
    step.ended(token)


BEHAVIOURS: dict[str, Behaviour] = {
    "startEvent": StartEvent(),
    "boundaryEvent": BoundaryEvent(),
    "endEvent": EndEvent(),
    "escalationThrow": EscalationThrow(),
    "timerCatch": CatchEvent("timer"),
    "messageCatch": CatchEvent("message"),
    "receiveTask": CatchEvent("message"),
}
