"""Inbox filters read from (and written back to) the URL, so a filtered list can be bookmarked.

Unknown values never fail the page: they fall back to the default and are reported as notices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from webapp.inputs import MAX_INT32, text_problem, whole_number

TABS = {"mine": "Assigned to me", "claimable": "Open for my roles", "done": "Completed by me"}
DUE = {
    "": "Any due date",
    "overdue": "Overdue",
    "today": "Due today",
    "week": "Due this week",
    "none": "No due date",
}
SORTS = {"due": "Due date", "created": "Newest first", "completed": "Recently completed"}
DEFAULT_SORT = {"mine": "due", "claimable": "due", "done": "completed"}
MAX_QUERY = 200
# The parameters a saved filter keeps (the page number is not part of a filter).
KEPT = ("tab", "process", "due", "q", "sort")


@dataclass(frozen=True)
class InboxFilters:
    """What the inbox shows: a tab, optional narrowing, the order and the page."""

    tab: str = "mine"
    process: str = ""
    due: str = ""
    q: str = ""
    sort: str = "due"
    page: int = 1
    notices: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> InboxFilters:
        """Read the filters from query arguments; bad values are dropped with a notice."""
        notices: list[str] = []

        def text(name: str) -> str:
            value = str(args.get(name) or "")
            if text_problem(value):
                notices.append(f"The {name} filter held a character text cannot contain.")
                return ""
            return value

        def choice(name: str, allowed: Mapping[str, str], default: str) -> str:
            value = text(name).strip()
            if value and value not in allowed:
                notices.append(f"Unknown {name} '{value[:40]}' was ignored.")
                return default
            return value or default

        tab = choice("tab", TABS, "mine")
        sort = choice("sort", SORTS, DEFAULT_SORT[tab])
        q = " ".join(text("q").split())
        if len(q) > MAX_QUERY:
            notices.append(f"The search was cut to {MAX_QUERY} characters.")
            q = q[:MAX_QUERY]
        page = whole_number(str(args.get("page") or ""), 1, MAX_INT32) or 1
        return cls(
            tab=tab,
            process=text("process").strip()[:100],
            due=choice("due", DUE, ""),
            q=q,
            sort=sort,
            page=page,
            notices=tuple(notices),
        )

    def args(self, **changes: Any) -> dict[str, Any]:
        """Query arguments for a link to these filters (with `changes`), defaults left out."""
        current = replace(self, **changes) if changes else self
        values = {
            "tab": current.tab if current.tab != "mine" else "",
            "process": current.process,
            "due": current.due,
            "q": current.q,
            "sort": current.sort if current.sort != DEFAULT_SORT[current.tab] else "",
            "page": current.page if current.page > 1 else "",
        }
        return {key: value for key, value in values.items() if value}

    def tab_args(self, tab: str) -> dict[str, Any]:
        """Arguments for another tab: same narrowing, first page, that tab's default order."""
        sort = self.sort if self.sort != DEFAULT_SORT[self.tab] else DEFAULT_SORT[tab]
        return self.args(tab=tab, sort=sort, page=1)

    def query_string(self) -> str:
        """The filter part of the URL (no page), as stored by saved filters."""
        kept = self.args(page=1)
        return urlencode([(key, kept[key]) for key in KEPT if key in kept])

    @property
    def narrowed(self) -> bool:
        return bool(self.process or self.due or self.q)
