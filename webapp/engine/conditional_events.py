"""Conditional events: intermediate catches, boundary events and event sub-process starts that
fire when a condition on the instance's data changes from false to true (BPMN 2.0.2 §10.5.1).

Each waits through a subscription row (`kind` "condition") that keeps whether its condition held
when last evaluated. The interpreter calls `reevaluate` after every change of instance data in a
step (task answers, tool results, message payloads, scripts, an operator's variable edit) and
after a conditional event subscribes: a condition already true when reached fires at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete, select, update

from webapp.engine import catching, waits
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import SUBSCRIPTIONS, TokenRow
from webapp.models.statuses import OPEN_TOKEN, HistoryKind, TokenStatus
from webapp.process.expressions import ExpressionError, evaluate

KIND = waits.CONDITION


@dataclass
class _Watch:
    """One conditional subscription: saved (`row_id`) or made in this step."""

    token: TokenRow
    node_id: str
    satisfied: bool | None
    row_id: int | None = None


def watched(config: dict[str, Any]) -> set[str]:
    """The variables whose change alone re-evaluates a condition (empty: any change does)."""
    return {name.strip() for name in str(config.get("watch") or "").split(",") if name.strip()}


def reevaluate(step: Step) -> bool:
    """Evaluate the instance's conditional subscriptions after a change; fire those whose
    condition went from false to true. True when one fired (tokens may be queued)."""
    if not step.conditions_due or not step.definition.conditional:
        return False
    step.conditions_due = False
    changed = {
        name
        for name in {*step.vars, *step.vars_evaluated}
        if step.vars.get(name) != step.vars_evaluated.get(name)
    }
    step.vars_evaluated = dict(step.vars)
    fired = False
    for watch in _watches(step):
        if watch.token.status not in OPEN_TOKEN:
            continue
        config = step.definition.config(watch.node_id)
        names = watched(config)
        if watch.satisfied is not None and names and not names & changed:
            continue
        holds = _holds(step, watch.token, watch.node_id, config)
        if holds is None:
            continue
        if holds and not watch.satisfied:
            fired = _fire(step, watch) or fired
        elif holds != watch.satisfied:
            _mark(step, watch, holds)
    return fired


def _watches(step: Step) -> list[_Watch]:
    """The saved subscriptions (oldest first), then those made in this step."""
    found: list[_Watch] = []
    if step.instance.id is not None:
        rows = step.conn.execute(
            select(
                SUBSCRIPTIONS.c.id,
                SUBSCRIPTIONS.c.token_id,
                SUBSCRIPTIONS.c.node_id,
                SUBSCRIPTIONS.c.satisfied,
            )
            .where(SUBSCRIPTIONS.c.instance_id == step.instance.id, SUBSCRIPTIONS.c.kind == KIND)
            .order_by(SUBSCRIPTIONS.c.id)
        ).all()
        for row_id, token_id, node_id, satisfied in rows:
            token = step.token(token_id)
            if token is not None:
                found.append(_Watch(token, node_id, satisfied, row_id))
    found.extend(_Watch(t, n, s) for t, n, s in step.new_subscriptions(KIND))
    return found


def _holds(step: Step, token: TokenRow, node_id: str, config: dict[str, Any]) -> bool | None:
    """Whether the condition of `node_id` holds at `token`; None (the token failed) on an error."""
    try:
        return bool(evaluate(str(config.get("condition") or "false"), step.context(token)))
    except ExpressionError as error:
        where = step.definition.mentioned(node_id)
        step.fail(token, "expression", f"The condition of {where} failed: {error}")
        return None


def _mark(step: Step, watch: _Watch, holds: bool) -> None:
    if watch.row_id is None:
        step.mark_new_subscription(watch.token, watch.node_id, holds)
        return
    step.conn.execute(
        update(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.id == watch.row_id).values(satisfied=holds)
    )


def _withdraw(step: Step, watch: _Watch) -> None:
    if watch.row_id is None:
        step.take_new_subscription(watch.token, watch.node_id, KIND)
    else:
        step.conn.execute(delete(SUBSCRIPTIONS).where(SUBSCRIPTIONS.c.id == watch.row_id))


def _fire(step: Step, watch: _Watch) -> bool:
    """The condition became true: a waiting catch completes; a boundary event or event
    sub-process start fires, and a non-interrupting one stays subscribed as satisfied."""
    token, node_id = watch.token, watch.node_id
    if catching.watches(step, token, node_id):
        _withdraw(step, watch)
        step.history.add(HistoryKind.CONDITION, token, node_id)
        if catching.event_fired(step, token, node_id):
            step.add_subscription(token, "", "", node_id, kind=KIND, satisfied=True)
        return True
    if token.status == TokenStatus.WAITING and token.node_id == node_id:
        _withdraw(step, watch)
        step.history.add(HistoryKind.CONDITION, token)
        step.complete(token)
        return True
    return False


class ConditionalCatch(Behaviour):
    """An intermediate conditional catch: the token waits until its condition becomes true (at
    once when it already holds as the token arrives)."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        token.status = TokenStatus.WAITING
        waits.subscribe(step, token, token.node_id, "conditional")


BEHAVIOURS: dict[str, Behaviour] = {"conditionalCatch": ConditionalCatch()}
