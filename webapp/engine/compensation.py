"""Compensation and transactions: compensation throws (intermediate and end), cancel ends, and
the transaction sub-process.

A throw gathers the completions it undoes at once, newest first (BPMN 2.0.2 10.5.5 and 10.6.2):
each activity's handler, a completed sub-process's compensation event sub-process, or else its
own inner completions, recursively. Gathered completions are marked compensated in the same
transaction, so a second throw never undoes them again. The list waits in the throwing token's
`locals` (`compensate`): the thrower waits as the scope of one handler at a time and starts the
next when it ends, so a worker killed between steps resumes where the database says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from webapp.engine import compensations, scopes, tree
from webapp.engine.compensations import Completion
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, TokenStatus

#: What a throw does once its handlers are done.
Then = Callable[[Step, TokenRow], None]


def completions_in(
    step: Step, scope: TokenRow | None, scope_id: int | None, scope_step: int
) -> list[Completion]:
    """The not yet compensated completions of one scope, oldest first: saved, then this step's."""
    found = compensations.saved(step.conn, step.instance.id, scope_id, scope_step)
    found += [
        c
        for c in step.completions
        if not c.compensated and c.scope_step == scope_step and _same(c.scope, scope, scope_id)
    ]
    return found


def _same(token: TokenRow | None, scope: TokenRow | None, scope_id: int | None) -> bool:
    """Whether an unsaved completion's scope token is the scope named by object or id."""
    if token is None:
        return scope is None and scope_id is None
    return token is scope or (token.id is not None and token.id == scope_id)


def gather(step: Step, found: list[Completion], activity: str = "") -> list[dict[str, Any]]:
    """The work that undoes `found` (newest first), only those of `activity` when given; each one
    gathered is marked compensated."""
    work: list[dict[str, Any]] = []
    for completion in reversed(found):
        if activity and completion.node_id != activity:
            continue
        compensations.mark_compensated(step.conn, completion)
        work.extend(_undo(step, completion))
    return work


def _undo(step: Step, completion: Completion) -> list[dict[str, Any]]:
    """A completion's handler; else its compensation event sub-process (with the inner work it
    may throw for); else the work undoing what completed inside it."""
    structure = step.definition.compensation
    node_id = completion.node_id
    handler = structure.handlers.get(node_id)
    if handler is not None:
        return [{"handler": handler, "of": node_id, "data": completion.data}]
    token, token_id, token_step = completion.inner_key()
    inner = completions_in(step, token, token_id, token_step) if token or token_id else []
    subprocess = structure.event_subprocesses.get(node_id)
    if subprocess is not None:
        held = gather(step, inner)
        return [{"subprocess": subprocess, "of": node_id, "data": completion.data, "inner": held}]
    return gather(step, inner)


def _scope_work(step: Step, thrower: TokenRow, activity: str) -> list[dict[str, Any]]:
    """The work a throw at `thrower` asks for: in a compensation event sub-process, what it was
    handed; elsewhere the completions of the thrower's scope."""
    scope = thrower.parent
    if scope is not None and isinstance((scope.locals or {}).get("inner"), list):
        held = list((scope.locals or {})["inner"])
        taken = [w for w in held if not activity or w.get("of") == activity]
        scope.locals = {**(scope.locals or {}), "inner": [w for w in held if w not in taken]}
        return taken
    scope_id = scope.id if scope is not None else None
    scope_step = scope.step if scope is not None else 0
    return gather(step, completions_in(step, scope, scope_id, scope_step), activity)


def throw(step: Step, thrower: TokenRow, node: dict[str, Any]) -> bool:
    """Begin compensating for `thrower`; True when it waits for handlers, False when it may go on
    at once (nothing to undo, or `waitForCompletion` false)."""
    config = node.get("config") or {}
    activity = str(config.get("activity") or "")
    work = _scope_work(step, thrower, activity)
    step.history.add(
        HistoryKind.COMPENSATION, thrower, activity=activity or None, handlers=len(work)
    )
    if config.get("waitForCompletion") is False:
        for item in work:
            _start(step, thrower.parent, item)
        return False
    return _wait(step, thrower, work)


def _wait(step: Step, thrower: TokenRow, work: list[dict[str, Any]]) -> bool:
    thrower.locals = {**(thrower.locals or {}), "compensate": work}
    if _next(step, thrower):
        thrower.status = TokenStatus.WAITING
        return True
    thrower.locals = {k: v for k, v in (thrower.locals or {}).items() if k != "compensate"}
    return False


def _next(step: Step, thrower: TokenRow) -> bool:
    """Start the thrower's next handler; False when none is left."""
    work = list((thrower.locals or {}).get("compensate") or [])
    if not work:
        return False
    item = work.pop(0)
    thrower.locals = {**(thrower.locals or {}), "compensate": work}
    _start(step, thrower, item)
    return True


def _start(step: Step, parent: TokenRow | None, item: dict[str, Any]) -> None:
    """Run one handler (or compensation event sub-process) with the data as it completed."""
    snapshot = item.get("data") or {}
    if "handler" in item:
        seen = tree.handler_locals(snapshot, step.vars, step.nodes)
        handler = step.new_token(item["handler"], parent=parent, locals=seen)
        step.enter(handler, item["handler"], None)
        return
    subprocess = item["subprocess"]
    seen = tree.handler_locals(snapshot, step.vars, step.nodes)
    holder = step.new_token(
        subprocess, parent=parent, locals={**seen, "inner": item.get("inner") or []}
    )
    holder.status = TokenStatus.WAITING
    step.history.add(HistoryKind.ENTERED, holder, scope=step.scope_of(holder))
    start = step.definition.starts[subprocess]
    inner = step.new_token(start, parent=holder)
    step.enter(inner, start, None)


def resume(step: Step, thrower: TokenRow, then: Then) -> bool:
    """A handler of `thrower` ended: start the next, or let the thrower go on (`then`). False
    while a handler is still running or failed."""
    if thrower.status != TokenStatus.WAITING or "compensate" not in (thrower.locals or {}):
        return False
    inside = step.children(thrower)
    if any(t.status in OPEN_TOKEN for t in inside):
        return False
    if _next(step, thrower):
        return True
    thrower.locals = {k: v for k, v in (thrower.locals or {}).items() if k != "compensate"}
    thrower.status = TokenStatus.ACTIVE
    then(step, thrower)
    return True


def after_end(step: Step, thrower: TokenRow) -> None:
    """A compensation end's handlers are done: it ends; a cancel end's: the transaction is left
    through its cancel boundary event."""
    event = str(step.definition.config(thrower.node_id).get("event") or "")
    AFTER_END.get(event, _ends)(step, thrower)


def _ends(step: Step, token: TokenRow) -> None:
    token.status = TokenStatus.DONE
    step.ended(token)


def _transaction_of(step: Step, token: TokenRow) -> TokenRow | None:
    """The transaction a cancel end at `token` cancels (of a multi-instance one, its instance);
    None when the end is not directly inside a transaction."""
    scope = token.parent
    if scope is None or step.definition.kind(scope.node_id) != "transaction":
        return None
    return scope


def _leave_transaction(step: Step, thrower: TokenRow) -> None:
    transaction = _transaction_of(step, thrower)
    if transaction is None:
        _ends(step, thrower)
        return
    host = transaction.parent if step.is_inner(transaction) else transaction
    boundary = step.definition.catchers(
        step.definition.boundaries.get(transaction.node_id, []), "cancel", None
    )
    if host is None or boundary is None:
        _ends(step, thrower)
        return
    scopes.trigger_boundary(step, host, boundary)


# --- the behaviours -------------------------------------------------------------------------


class CompensationThrow(Behaviour):
    """An intermediate compensation throw: undo, wait for the handlers, then go on."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        if not throw(step, token, node):
            step.leave_single(token)

    def try_complete(self, step: Step, scope: TokenRow) -> bool:
        return resume(step, scope, Step.leave_single)


def compensate_end(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """A compensation end event: undo, wait for the handlers, then the token ends."""
    if not throw(step, token, node):
        _ends(step, token)


def cancel_end(step: Step, token: TokenRow, node: dict[str, Any]) -> None:
    """A cancel end event: everything else in the transaction ends, what completed in it is
    compensated (newest first), then the transaction's cancel boundary event fires."""
    transaction = _transaction_of(step, token)
    if transaction is not None:
        for other in step.children(transaction):
            if other is not token and other.status in OPEN_TOKEN:
                step.cancel_tree(other)
    work = _scope_work(step, token, "")
    step.history.add(HistoryKind.COMPENSATION, token, cancel=True, handlers=len(work))
    if not _wait(step, token, work):
        _leave_transaction(step, token)


AFTER_END: dict[str, Then] = {"cancel": _leave_transaction}


class Transaction(scopes.SubProcess):
    """A transaction: a sub-process that a cancel end inside undoes and leaves by its cancel
    boundary event; an error leaving it compensates nothing."""


BEHAVIOURS: dict[str, Behaviour] = {
    "compensationThrow": CompensationThrow(),
    "transaction": Transaction(),
}
