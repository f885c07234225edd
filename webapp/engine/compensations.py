"""The rows of completed compensable activities (`models.Compensation`) as a step reads and
writes them: a step remembers completions in memory and inserts them as it finishes (the tokens
then have ids); a throw in the same step finds them there as well as in the database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.engine import Connection

from webapp.engine.store import TokenRow
from webapp.models import Compensation
from webapp.models.statuses import CompensationStatus

TABLE = Compensation.__table__


@dataclass(eq=False)
class Completion:
    """One completed compensable activity: in scope (`scope`, or `scope_id`, at `scope_step`),
    with its own token (object or id) at `token_step` and the data its handler sees."""

    node_id: str
    data: dict[str, Any]
    scope: TokenRow | None = None
    scope_id: int | None = None
    scope_step: int = 0
    token: TokenRow | None = None
    token_id: int | None = None
    token_step: int = 0
    row_id: int | None = None
    compensated: bool = False

    def in_scope(self, scope: TokenRow | None, step: int) -> bool:
        """Whether this unsaved completion happened in `scope` (None: the process) at `step`."""
        return self.scope is scope and self.scope_step == step

    def inner_key(self) -> tuple[TokenRow | None, int | None, int]:
        """The scope its own inner completions name: its token (object, id) and step."""
        token_id = self.token.id if self.token is not None else self.token_id
        return self.token, token_id, self.token_step


def saved(
    conn: Connection, instance_id: int | None, scope_id: int | None, scope_step: int
) -> list[Completion]:
    """The not yet compensated completions saved for a scope, oldest first."""
    if instance_id is None:
        return []
    where = [
        TABLE.c.instance_id == instance_id,
        TABLE.c.status == CompensationStatus.COMPLETED,
        TABLE.c.scope_step == scope_step,
    ]
    where.append(
        TABLE.c.scope_token_id.is_(None) if scope_id is None else TABLE.c.scope_token_id == scope_id
    )
    rows = conn.execute(select(TABLE).where(*where).order_by(TABLE.c.id)).all()
    return [
        Completion(
            node_id=row.node_id,
            data=row.data or {},
            scope_id=row.scope_token_id,
            scope_step=row.scope_step,
            token_id=row.token_id,
            token_step=row.token_step,
            row_id=row.id,
        )
        for row in rows
    ]


def mark_compensated(conn: Connection, completion: Completion) -> None:
    """The completion is undone (its handler starts now): no later throw undoes it again."""
    completion.compensated = True
    if completion.row_id is not None:
        conn.execute(
            update(TABLE)
            .where(TABLE.c.id == completion.row_id)
            .values(status=CompensationStatus.COMPENSATED)
        )


def insert_all(
    conn: Connection, instance_id: int, completions: list[Completion], now: datetime
) -> None:
    """Insert the step's completions (their tokens have ids by now), in completion order."""
    rows = [
        {
            "instance_id": instance_id,
            "scope_token_id": c.scope.id if c.scope is not None else c.scope_id,
            "scope_step": c.scope_step,
            "node_id": c.node_id,
            "token_id": c.token.id if c.token is not None else c.token_id,
            "token_step": c.token_step,
            "data": c.data,
            "status": (
                CompensationStatus.COMPENSATED if c.compensated else CompensationStatus.COMPLETED
            ),
            "created_at": now,
        }
        for c in completions
    ]
    if rows:
        conn.execute(insert(TABLE), rows)
