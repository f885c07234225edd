"""The append-only instance history: entries collected during a step, inserted in one statement."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webapp.engine.context import jsonable
from webapp.models import HistoryEntry
from webapp.models.statuses import HistoryKind

INSERT = HistoryEntry.__table__.insert()
# PostgreSQL: a step's entries in one statement of one parameter (a JSON array), in order, where
# an executemany costs a statement execution per entry (a leased instance writes about 20).
INSERT_ARRAY = text(
    "INSERT INTO history (instance_id, token_id, node_id, kind, actor, details, created_at) "
    "SELECT (e->>'instance_id')::bigint, (e->>'token_id')::integer, e->>'node_id', e->>'kind', "
    "e->>'actor', e->'details', (e->>'created_at')::timestamptz "
    "FROM jsonb_array_elements(CAST(:rows AS jsonb)) WITH ORDINALITY AS entry(e, n) ORDER BY n"
)

# The kinds an entry may have: an unknown one is a programming error, refused before it is stored.
KINDS = frozenset(HistoryKind)

#: Called with the connection and the rows of every history write, inside that transaction: how
#: adapters (webhooks, notifications) learn what happened, in the same commit, without the engine
#: knowing them. The composition root installs them with `observe`.
Observer = Callable[[Connection, list[dict[str, Any]]], None]
OBSERVERS: list[Observer] = []


#: (username, token name) while a request authenticated by an API token runs: entries that
#: user writes then name the token in their details (`api_token`).
_ATTRIBUTION: ContextVar[tuple[str, str] | None] = ContextVar("history_attribution", default=None)


def attribute(username: str | None, token_name: str | None) -> None:
    """Name `token_name` in the entries `username` writes from now on in this context; None
    ends it."""
    _ATTRIBUTION.set((username, token_name) if username and token_name else None)


def _attributed(actor: str | None, details: dict[str, Any]) -> dict[str, Any]:
    attribution = _ATTRIBUTION.get()
    if attribution is None or actor is None or actor != attribution[0]:
        return details
    return {**details, "api_token": attribution[1]}


def observe(observer: Observer) -> None:
    """Install `observer` once (create_app may run more than once in a process)."""
    if observer not in OBSERVERS:
        OBSERVERS.append(observer)


def _tell_observers(conn: Connection, rows: list[dict[str, Any]]) -> None:
    for observer in OBSERVERS:
        observer(conn, [dict(row) for row in rows])


class History:
    """Entries of one step; the instance and new tokens may lack ids until the step flushes."""

    def __init__(self, instance: Any, now: datetime) -> None:
        self.instance = instance
        self.now = now
        self._entries: list[tuple[str, Any, str | None, str | None, dict[str, Any]]] = []

    def add(
        self,
        kind: HistoryKind,
        token: Any = None,
        node_id: str | None = None,
        *,
        actor: str | None = None,
        **details: Any,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown history kind {kind!r}")
        if node_id is None and token is not None:
            node_id = token.node_id
        kept = {key: value for key, value in details.items() if value is not None}
        self._entries.append((kind, token, node_id, actor, kept))

    def __len__(self) -> int:
        return len(self._entries)

    def write(self, conn: Connection) -> None:
        """Insert the collected entries (after the flush that gave new tokens their ids)."""
        if not self._entries:
            return
        rows = [
            {
                "instance_id": self.instance.id,
                "token_id": token.id if token is not None else None,
                "node_id": node_id,
                "kind": kind,
                "actor": actor,
                "details": jsonable(_attributed(actor, details)),
                "created_at": self.now,
            }
            for kind, token, node_id, actor, details in self._entries
        ]
        _tell_observers(conn, rows)
        if conn.dialect.name == "postgresql" and len(rows) > 1:
            now = self.now if self.now.tzinfo is not None else self.now.replace(tzinfo=UTC)
            stamp = now.isoformat()
            for row in rows:
                row["created_at"] = stamp
            conn.execute(INSERT_ARRAY, {"rows": json.dumps(rows)})
        else:
            conn.execute(INSERT, rows)
        self._entries.clear()


def append(
    session: Session,
    instance_id: int,
    kind: HistoryKind,
    *,
    actor: str | None,
    now: datetime,
    token_id: int | None = None,
    node_id: str | None = None,
    **details: Any,
) -> None:
    """Insert one entry for an action taken outside a step (a person's), in the caller's
    transaction; details that are None are left out."""
    if kind not in KINDS:
        raise ValueError(f"unknown history kind {kind!r}")
    kept = {key: value for key, value in details.items() if value is not None}
    row = {
        "instance_id": instance_id,
        "token_id": token_id,
        "node_id": node_id,
        "kind": kind,
        "actor": actor,
        "details": jsonable(_attributed(actor, kept)),
        "created_at": now,
    }
    session.execute(INSERT, [row])
    _tell_observers(session.connection(), [row])


def entries(session: Session, instance_id: int, *, after: int = 0, limit: int = 500) -> list:
    """History of an instance in order, `limit` entries after the entry id `after`."""
    return list(
        session.scalars(
            select(HistoryEntry)
            .where(HistoryEntry.instance_id == instance_id, HistoryEntry.id > after)
            .order_by(HistoryEntry.id)
            .limit(limit)
        )
    )


def as_dict(entry: HistoryEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "kind": entry.kind,
        "node": entry.node_id,
        "token": entry.token_id,
        "actor": entry.actor,
        "details": entry.details or {},
        "at": entry.created_at.isoformat(),
    }
