"""Events a token passes through or waits at: start, end, escalation throw, boundary, and the
intermediate timer and message catches (with receive tasks, which wait as message catches do)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webapp.engine import activities, compensation, scopes, signal_events, waits
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow as Token
from webapp.models.statuses import TokenStatus


class StartEvent(Behaviour):
    """A start moves on; an event sub-process's start is held by its listener while it waits."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        step.leave_single(token)

    def held_by(self, step: Step, token: Token, node_id: str) -> bool:
        return (
            token.listener
            and step.definition.starts.get(token.node_id) == node_id
            and token.status == TokenStatus.WAITING
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
        end = ENDS.get((node.get("config") or {}).get("event") or "")
        if end is None:
            _ends(step, token)
        else:
            end(step, token, node)

    def completed(self, step: Step, token: Token) -> None:
        """A message end's tool finished: only now does its token end."""
        _ends(step, token)

    def try_complete(self, step: Step, scope: Token) -> bool:
        """A compensation or cancel end's handler ended: the next one, or the end goes on."""
        return compensation.resume(step, scope, compensation.after_end)


class EscalationThrow(Behaviour):
    """An intermediate escalation: thrown to the nearest catcher, then the token goes on."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        scopes.throw(step, token, "escalation", _code(node))
        if token.status == TokenStatus.ACTIVE:
            step.leave_single(token)


class CatchEvent(Behaviour):
    """An intermediate timer or message catch (or a receive task): the token waits for it."""

    def __init__(self, event: str) -> None:
        self.event = event

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        wait = waits.prepare(step, token, token.node_id, self.event)
        if wait is None:
            return
        token.status = TokenStatus.WAITING
        waits.place(step, token, wait)


def _ends(step: Step, token: Token) -> None:
    token.status = TokenStatus.DONE
    step.ended(token)


def _message_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    activities.message_end(step, token, node)


def _error_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    scopes.raise_error(step, token, _code(node))


def _escalation_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Throw the escalation; the token ends unless the catcher interrupted its scope."""
    scopes.throw(step, token, "escalation", _code(node))
    if token.status == TokenStatus.ACTIVE:
        _ends(step, token)


def _signal_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Broadcast the signal; the token ends before the instance's own catchers fire."""
    thrown = signal_events.broadcast_from(step, token, node.get("config") or {})
    if thrown is None:
        return
    _ends(step, token)
    signal_events.reach_own(step, thrown)


def _terminate_end(step: Step, token: Token, node: dict[str, Any]) -> None:
    scopes.terminate(step, token)
    _ends(step, token)


def _code(node: dict[str, Any]) -> str:
    return str((node.get("config") or {}).get("code") or "")


# What an end event does, by its `event` (a plain end, without one, just ends its token).
ENDS: dict[str, Callable[[Step, Token, dict[str, Any]], None]] = {
    "message": _message_end,
    "error": _error_end,
    "escalation": _escalation_end,
    "signal": _signal_end,
    "terminate": _terminate_end,
    "compensate": compensation.compensate_end,
    "cancel": compensation.cancel_end,
}


BEHAVIOURS: dict[str, Behaviour] = {
    "startEvent": StartEvent(),
    "boundaryEvent": BoundaryEvent(),
    "endEvent": EndEvent(),
    "escalationThrow": EscalationThrow(),
    "timerCatch": CatchEvent("timer"),
    "messageCatch": CatchEvent("message"),
    "receiveTask": CatchEvent("message"),
}
