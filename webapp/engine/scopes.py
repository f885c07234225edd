"""Scopes and the events that cross them: sub-processes, boundary events, errors, escalations,
terminate ends and event sub-processes.

A scope is a token waiting at a sub-process (or a multi-instance body, or an event
sub-process); the tokens inside it name it as their `parent`. Everything here works on the
step's open tokens, so its cost follows the live tokens, not the instance's history.
"""

from __future__ import annotations

from typing import Any

from webapp.engine import children, waits
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import LIVE_TOKEN, OPEN_TOKEN, HistoryKind, TokenStatus


def enter_scope(step: Step, token: TokenRow, node_id: str) -> None:
    """`token` waits at the sub-process `node_id`; a new token starts at its start event."""
    start = step.definition.starts.get(node_id)
    if start is None:
        step.fail(token, "no_start", f"{step.definition.described(node_id)} has no start event.")
        return
    token.status = TokenStatus.WAITING
    open_event_subprocesses(step, token, node_id)
    inner = step.new_token(start, parent=token)
    step.enter(inner, start, None)


def try_complete(step: Step, scope: TokenRow) -> bool:
    """Complete `scope` when nothing live is left inside it (listeners end with it)."""
    if scope.status != TokenStatus.WAITING:
        return False
    if step.definition.multi_instance(scope.node_id) and not step.is_inner(scope):
        return False
    inside = step.children(scope)
    if any(t.status in LIVE_TOKEN and not t.listener for t in inside):
        return False
    if any(t.status == TokenStatus.FAILED for t in inside):
        return False
    for listener in inside:
        if listener.listener and listener.status in LIVE_TOKEN:
            step.cancel_tree(listener)
    scope.status = TokenStatus.ACTIVE
    step.complete(scope)
    return True


# --- boundary events ------------------------------------------------------------------------


def open_boundaries(step: Step, host: TokenRow) -> None:
    """Subscribe the host's timer and message boundary events (errors and escalations need no
    subscription: they are looked up when thrown)."""
    for boundary in step.definition.boundaries.get(host.node_id, ()):
        if not _subscribe(step, host, boundary):
            return


def _subscribe(step: Step, holder: TokenRow, node_id: str) -> bool:
    """`holder` waits for the timer, message or signal of event `node_id` (a boundary event or an
    event sub-process's start); False when the timer or the correlation key fails it."""
    event = str(step.definition.config(node_id).get("event") or "")
    return waits.subscribe(step, holder, node_id, event)


def host_of(step: Step, boundary: str, token: TokenRow) -> bool:
    """Whether `token` is still the active host of `boundary` (an incident still counts)."""
    attached = step.definition.config(boundary).get("attachedTo")
    return token.node_id == attached and token.status in OPEN_TOKEN and not step.is_inner(token)


def trigger_boundary(step: Step, host: TokenRow, boundary: str, output: Any = None) -> None:
    """Fire `boundary` on `host`: interrupting ends the host and all inside it first; either way
    a new token leaves along the boundary's flow."""
    config = step.definition.config(boundary)
    interrupting = config.get("interrupting", True) or config.get("event") == "error"
    step.history.add(
        HistoryKind.BOUNDARY, host, boundary, event=config.get("event"), interrupting=interrupting
    )
    if interrupting:
        step.cancel_tree(host)
    if output is not None:
        step.record_output(boundary, output)
    token = step.new_token(boundary, parent=host.parent)
    step.enter(token, boundary, None)


# --- errors and escalations -----------------------------------------------------------------


def throw(step: Step, token: TokenRow, event: str, code: str, output: Any = None) -> bool:
    """Route an error or escalation from `token` to the nearest catcher, from its own activity
    outwards: the activity's boundary events, then the event sub-processes of each enclosing
    scope and the boundary events of the activity hosting it. False when nothing catches it."""
    definition = step.definition
    level: TokenRow | None = token
    while level is not None:
        if step.is_inner(level) and level.parent is not None:
            level = level.parent
        boundary = definition.catchers(definition.boundaries.get(level.node_id, []), event, code)
        if boundary is not None:
            step.history.add(HistoryKind.THROWN, token, event=event, code=code, caught_by=boundary)
            trigger_boundary(step, level, boundary, output)
            return True
        scope = level.parent
        scope_node = scope.node_id if scope is not None else None
        starts = {
            definition.starts[sub]: sub
            for sub in definition.event_subprocesses.get(scope_node, [])
            if sub in definition.starts
        }
        start = definition.catchers(list(starts), event, code)
        if start is not None:
            step.history.add(
                HistoryKind.THROWN, token, event=event, code=code, caught_by=starts[start]
            )
            start_event_subprocess(step, scope, starts[start], output)
            return True
        level = scope
    step.history.add(HistoryKind.THROWN, token, event=event, code=code, caught_by=None)
    if event == "escalation" and step.instance.parent_id is not None:
        children.escalate_to_parent(step, code)
    return False


def raise_error(step: Step, token: TokenRow, code: str, message: str = "") -> None:
    """A business error at `token`: caught in the model, else handed to a calling parent, else an
    incident naming the code."""
    if throw(step, token, "error", code):
        return
    if step.instance.parent_id is not None:
        children.throw_to_parent(step, code, message)
        return
    detail = f": {message}" if message else ""
    where = step.definition.mentioned(token.node_id)
    message = f"The error '{code}' was thrown and nothing caught it (at {where}){detail}."
    step.fail(token, "error", message)


def start_event_subprocess(
    step: Step, scope: TokenRow | None, subprocess: str, output: Any = None
) -> None:
    """Start `subprocess` in `scope`; an interrupting start ends everything else in the scope."""
    start = step.definition.starts[subprocess]
    config = step.definition.config(start)
    if config.get("interrupting", True) or config.get("event") == "error":
        for other in step.children(scope):
            if other.status in OPEN_TOKEN:
                step.cancel_tree(other)
    if output is not None:
        step.record_output(start, output)
    holder = step.new_token(subprocess, parent=scope)
    holder.status = TokenStatus.WAITING
    step.history.add(HistoryKind.ENTERED, holder, scope=step.scope_of(holder))
    inner = step.new_token(start, parent=holder)
    step.enter(inner, start, None)


def terminate(step: Step, token: TokenRow) -> None:
    """A terminate end: every other token of `token`'s scope ends; the scope then completes."""
    for other in step.children(token.parent):
        if other is not token and other.status in OPEN_TOKEN:
            step.cancel_tree(other)
    step.history.add(HistoryKind.TERMINATED, token, scope=step.scope_of(token))


# --- event sub-processes started by timers and messages -------------------------------------


def open_event_subprocesses(step: Step, scope: TokenRow | None, scope_node: str | None) -> None:
    """A scope starts: its timer- and message-started event sub-processes begin to listen, each
    through a listener token that keeps no scope alive."""
    for subprocess in step.definition.event_subprocesses.get(scope_node, []):
        open_listener(step, scope, subprocess)


def open_listener(step: Step, scope: TokenRow | None, subprocess: str) -> bool:
    """The event sub-process `subprocess` of `scope` listens for its timer, message or signal
    start (others need no listener); False when its timer or correlation key failed it."""
    definition = step.definition
    start = definition.starts.get(subprocess)
    if start is None or definition.config(start).get("event") not in waits.EVENTS:
        return True
    listener = step.new_token(subprocess, parent=scope, locals={"listen": True})
    listener.status = TokenStatus.WAITING
    return _subscribe(step, listener, start)


def listener_fired(step: Step, listener: TokenRow, start: str, output: Any = None) -> bool:
    """A listener's timer or message arrived: start its event sub-process. True when the listener
    goes on listening (a non-interrupting start fires again)."""
    config = step.definition.config(start)
    interrupting = config.get("interrupting", True)
    step.history.add(HistoryKind.BOUNDARY, listener, start, event=config.get("event"))
    if interrupting:
        listener.status = TokenStatus.CANCELLED
        step.ended(listener)
    start_event_subprocess(step, listener.parent, listener.node_id, output)
    return not interrupting and listener.status in LIVE_TOKEN


# --- the scope behaviours ---------------------------------------------------------------------


class SubProcess(Behaviour):
    """A sub-process: its token waits as the scope of the tokens inside, until they are done."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        enter_scope(step, token, token.node_id)

    def try_complete(self, step: Step, scope: TokenRow) -> bool:
        return try_complete(step, scope)


class EventSubProcess(SubProcess):
    """An event sub-process: started by its start event's trigger, never entered by a flow."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        described = step.definition.described(token.node_id)
        step.fail(token, "unknown_node", f"{described} cannot be entered by a flow.")

    def completed(self, step: Step, token: TokenRow) -> None:
        step.history.add(HistoryKind.LEFT, token, scope=step.scope_of(token))
        token.status = TokenStatus.DONE
        step.ended(token)


BEHAVIOURS: dict[str, Behaviour] = {
    "subProcess": SubProcess(),
    "eventSubProcess": EventSubProcess(),
}
