"""Events that reach a suspended instance wait here, in arrival order, until it is resumed.

A step that finds its instance suspended changes nothing of it: a message, a signal broadcast or
a tool call's outcome is kept as a `held_events` row (in that same locked transaction), and the
resume step applies them in order (webapp/engine/suspension.py). Timers and other jobs need no
row: they stay pending, and resuming sends them again.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.engine import Connection

from webapp.engine.calls import Outcome
from webapp.engine.context import jsonable
from webapp.models import HeldEvent
from webapp.models.statuses import HeldKind

HELD = HeldEvent.__table__
# What a step that leaves its work waiting says (StepResult.note).
SUSPENDED_NOTE = "the instance is suspended"


def keep(
    conn: Connection, instance_id: int, kind: HeldKind, data: dict[str, Any], now: datetime
) -> None:
    """Keep an event for the suspended instance, after those that came before it."""
    conn.execute(
        HELD.insert(),
        [{"instance_id": instance_id, "kind": kind, "data": jsonable(data), "created_at": now}],
    )


def keep_outcome(
    conn: Connection, instance_id: int, job_id: int, outcome: Outcome, attempt: int, now: datetime
) -> None:
    """Keep a tool call's outcome (the call ran; its job stays leased until it is applied)."""
    data = {"job": job_id, "attempt": attempt, "outcome": dataclasses.asdict(outcome)}
    keep(conn, instance_id, HeldKind.TOOL_OUTCOME, data, now)


def outcome_of(data: dict[str, Any]) -> Outcome:
    """The tool outcome a `tool_outcome` event kept."""
    return Outcome(**data["outcome"])


def take(conn: Connection, instance_id: int) -> list[Any]:
    """The instance's held events in arrival order, removed (in the resume's transaction)."""
    rows = conn.execute(
        select(HELD.c.id, HELD.c.kind, HELD.c.data, HELD.c.created_at)
        .where(HELD.c.instance_id == instance_id)
        .order_by(HELD.c.id)
    ).all()
    if rows:
        conn.execute(delete(HELD).where(HELD.c.instance_id == instance_id))
    return list(rows)


def count(conn: Connection, instance_id: int) -> int:
    """How many events wait for the instance."""
    counted = select(func.count()).select_from(HELD).where(HELD.c.instance_id == instance_id)
    return int(conn.scalar(counted) or 0)
