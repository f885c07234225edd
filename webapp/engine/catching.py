"""What fires a waiting catcher: the events a token watches, and a signal reaching the
subscriptions of the instance a step holds.

Below `steps` and `signals`, so that any step (a caller's resume among them) can hand an
instance the broadcasts it has not received yet before one of its scopes ends.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, delete, select
from sqlalchemy.engine import Connection

from webapp.engine import gateways, scopes, store, waits
from webapp.engine.context import jsonable
from webapp.engine.runtime import Step, behaviour_of
from webapp.engine.store import BROADCASTS, RECEIPTS, SUBSCRIPTIONS, TokenRow
from webapp.models.statuses import OPEN_TOKEN, UNFINISHED_BROADCAST, HistoryKind, TokenStatus

KIND = "signal"


def watches(step: Step, token: TokenRow, node_id: str) -> bool:
    """Whether `token` holds the subscription of boundary or event-start `node_id` (or of a
    target of the event-based gateway it waits at)."""
    kind = step.definition.kind
    if behaviour_of(kind(token.node_id)).holds(step, token, node_id):
        return True
    return behaviour_of(kind(node_id)).held_by(step, token, node_id)


def event_fired(step: Step, token: TokenRow, node_id: str, output: Any = None) -> bool:
    """A boundary event or an event sub-process start fired for `token`; True when it stays
    subscribed (a non-interrupting one). At an event-based gateway, the first event wins."""
    if behaviour_of(step.definition.kind(token.node_id)).holds(step, token, node_id):
        gateways.event_won(step, token, node_id, output)
        return False
    if token.listener:
        return scopes.listener_fired(step, token, node_id, output)
    scopes.trigger_boundary(step, token, node_id, output)
    return token.status in OPEN_TOKEN


def fire(
    step: Step,
    token: TokenRow,
    node_id: str,
    payload: Any,
    actor: str | None,
    details: dict[str, Any],
) -> bool:
    """The signal reaches `token`'s subscription at `node_id`: a boundary event, event
    sub-process start or event-based gateway target fires, a waiting catch completes with the
    payload; False when the token no longer waits there."""
    if watches(step, token, node_id):
        step.history.add(HistoryKind.SIGNAL, token, node_id, actor=actor, **details)
        if event_fired(step, token, node_id, payload):
            waits.subscribe(step, token, node_id, KIND)
        return True
    if token.status != TokenStatus.WAITING or token.node_id != node_id:
        return False
    step.history.add(HistoryKind.SIGNAL, token, actor=actor, **details)
    step.complete(token, payload)
    return True


def same_partition(column: Any, partition_id: int | None) -> Any:
    """`column` holds `partition_id` (None: no partition): where a signal of it applies."""
    return column.is_(None) if partition_id is None else column == partition_id


def receive_missed(step: Step) -> int:
    """Hand the step's (saved) instance every broadcast still on its way that covers one of its
    subscriptions and has not reached it (say, one its called child threw in its last step), in
    throwing order, with a receipt each; how many reached a catcher. Call before a scope ends."""
    instance_id = step.instance.id
    if instance_id is None:
        return 0
    same = same_partition(BROADCASTS.c.partition_id, step.instance.partition_id)
    received = (
        select(RECEIPTS.c.id)
        .where(RECEIPTS.c.broadcast_id == BROADCASTS.c.id, RECEIPTS.c.instance_id == instance_id)
        .exists()
    )
    missed = step.conn.execute(
        select(
            BROADCASTS.c.id,
            BROADCASTS.c.name,
            BROADCASTS.c.payload,
            BROADCASTS.c.actor,
            BROADCASTS.c.high_water,
        )
        .join(
            SUBSCRIPTIONS,
            and_(
                SUBSCRIPTIONS.c.instance_id == instance_id,
                SUBSCRIPTIONS.c.kind == KIND,
                SUBSCRIPTIONS.c.name == BROADCASTS.c.name,
                SUBSCRIPTIONS.c.id <= BROADCASTS.c.high_water,
            ),
        )
        .where(
            BROADCASTS.c.status.in_(UNFINISHED_BROADCAST),
            same,
            (BROADCASTS.c.instance_id.is_(None)) | (BROADCASTS.c.instance_id != instance_id),
            ~received,
        )
        .distinct()
        .order_by(BROADCASTS.c.id)
    ).all()
    reached = 0
    for broadcast in missed:
        if deliver_saved(
            step,
            broadcast.id,
            broadcast.name,
            broadcast.payload,
            broadcast.actor,
            broadcast.high_water,
        ):
            store.insert_receipt(step.conn, broadcast.id, instance_id, step.now)
            reached += 1
    return reached


def deliver_saved(
    step: Step,
    broadcast_id: int,
    name: str,
    payload: Any,
    actor: str | None,
    high_water: int,
) -> int:
    """Fire the step's instance's saved subscriptions to signal `name` that the broadcast
    covers (ids up to `high_water`); how many tokens it woke."""
    assert step.instance.id is not None
    held = take_saved(step.conn, step.instance.id, name, SUBSCRIPTIONS.c.id <= high_water)
    data = jsonable(payload if payload is not None else {})
    details = {"name": name, "broadcast": broadcast_id}
    woken = 0
    for token_id, node_id in held:
        token = step.token(token_id)
        if token is not None and fire(step, token, node_id, data, actor, details):
            woken += 1
    return woken


def take_saved(conn: Connection, instance_id: int, name: str, *more: Any) -> list[tuple[int, str]]:
    """Delete the instance's saved subscriptions to signal `name` (and `more` conditions) and
    return their (token id, node id), oldest first: the catchers a delivery wakes."""
    where = (
        SUBSCRIPTIONS.c.instance_id == instance_id,
        SUBSCRIPTIONS.c.kind == KIND,
        SUBSCRIPTIONS.c.name == name,
        *more,
    )
    rows = conn.execute(
        select(SUBSCRIPTIONS.c.token_id, SUBSCRIPTIONS.c.node_id)
        .where(*where)
        .order_by(SUBSCRIPTIONS.c.id)
    ).all()
    conn.execute(delete(SUBSCRIPTIONS).where(*where))
    return [(token_id, node_id) for token_id, node_id in rows]
