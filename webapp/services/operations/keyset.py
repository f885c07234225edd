"""Keyset pages over instances, newest first by (created_at, id): no OFFSET, so page 4,000
costs what page 1 costs, and rows inserted meanwhile never shift a page."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Select, literal, select, tuple_
from sqlalchemy.sql.util import ClauseAdapter

from webapp.extensions import db
from webapp.models import Instance
from webapp.models.base import UTCDateTime

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_CURSOR = re.compile(r"(-?[0-9]{1,20})\.([0-9]{1,18})")


@dataclass(frozen=True)
class Cursor:
    """A position in the list: the created_at and id of a row (exclusive bound)."""

    at: datetime
    id: int

    def encode(self) -> str:
        micros = (self.at - EPOCH) // timedelta(microseconds=1)
        return f"{micros}.{self.id}"

    @classmethod
    def decode(cls, text: str) -> Cursor:
        """Read an encoded cursor; ValueError when the text is not one."""
        match = _CURSOR.fullmatch(text or "")
        if match is None:
            raise ValueError("not a list position")
        try:
            moment = EPOCH + timedelta(microseconds=int(match.group(1)))
        except OverflowError:
            raise ValueError("not a list position") from None
        return cls(moment, int(match.group(2)))


@dataclass(frozen=True)
class KeysetPage:
    rows: list[Any]
    newer: Cursor | None
    older: Cursor | None


Order = tuple[Any, Any]
BY_DATE: Order = (Instance.created_at, Instance.id)


def _ordered(
    query: Select, after: Cursor | None, before: Cursor | None, limit: int, order: Order
) -> Select:
    """`query` past the cursor, in page direction (newest first, or oldest first for `before`)."""
    created, ident = order
    key = tuple_(created, ident)
    if before is not None:
        bound = tuple_(literal(before.at, UTCDateTime()), literal(before.id))
        return query.where(key > bound).order_by(created.asc(), ident.asc()).limit(limit)
    if after is not None:
        bound = tuple_(literal(after.at, UTCDateTime()), literal(after.id))
        query = query.where(key < bound)
    return query.order_by(created.desc(), ident.desc()).limit(limit)


@dataclass(frozen=True)
class Window:
    """Where to look first: the next `rows` rows of `base` (a select of Instance under the filters
    an index serves, read in index order) that also meet `conditions`."""

    base: Select
    conditions: list[Any]
    columns: tuple[str, ...]
    rows: int = 2_000


def _in_window(window: Window, after: Cursor | None, before: Cursor | None, size: int) -> list:
    nearest = _ordered(window.base, after, before, window.rows, BY_DATE).subquery()
    adapt = ClauseAdapter(nearest).traverse
    query = select(*(nearest.c[name] for name in window.columns)).where(
        *(adapt(condition) for condition in window.conditions)
    )
    created, ident = nearest.c.created_at, nearest.c.id
    order = (created.asc(), ident.asc()) if before is not None else (created.desc(), ident.desc())
    return list(db.session.execute(query.order_by(*order).limit(size + 1)))


def keyset_page(
    query: Select,
    *,
    after: Cursor | None = None,
    before: Cursor | None = None,
    size: int = 25,
    order: Order = BY_DATE,
    window: Window | None = None,
) -> KeysetPage:
    """One page of `query` (which selects Instance.created_at and Instance.id among its columns).

    `after` gives the page of rows older than the cursor, `before` the page of newer ones.
    `order` may wrap the two columns (see `common.unindexed`) but must keep their values.
    With a `window` the page is first looked for among the next rows in index order; when they
    hold a full page the answer is exact, otherwise `query` runs on its own with `order`.
    """
    rows = _in_window(window, after, before, size) if window is not None else []
    if len(rows) <= size:
        rows = list(db.session.execute(_ordered(query, after, before, size + 1, order)))
    more = len(rows) > size
    rows = rows[:size]
    if before is not None:
        rows.reverse()
        newer = _cursor(rows[0]) if more and rows else None
        older = _cursor(rows[-1]) if rows else None
    else:
        newer = _cursor(rows[0]) if after is not None and rows else None
        older = _cursor(rows[-1]) if more else None
    return KeysetPage(rows, newer, older)


def _cursor(row: Any) -> Cursor:
    return Cursor(row.created_at, row.id)
