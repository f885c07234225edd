"""Offset pagination for short admin lists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select

from webapp.extensions import db


@dataclass(frozen=True)
class Page:
    items: list[Any]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def has_prev(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def paginate(query: Select, page: int, per_page: int, *, total: int | None = None) -> Page:
    """Run `query` for one page; out-of-range page numbers are clamped. A caller that already
    counted the rows passes `total`, saving a second count of the same rows; with none, the
    page is not asked for (an ordered search for rows that are not there can read them all)."""
    if total is None:
        total = db.session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    page = max(1, page)
    last = max(1, -(-(total or 0) // per_page))
    page = min(page, last)
    if not total:
        return Page([], page, per_page, 0)
    items = list(db.session.scalars(query.limit(per_page).offset((page - 1) * per_page)))
    return Page(items, page, per_page, total or 0)
