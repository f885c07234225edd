"""Template filters for operations pages: durations, JSON blocks, history details."""

from __future__ import annotations

import json
from typing import Any

from webapp.models.statuses import HistoryKind
from webapp.operations.blueprint import bp

MAX_JSON = 100_000
DETAIL_KEYS = (
    "code",
    "message",
    "status",
    "attempt",
    "flow",
    "reason",
    "name",
    "value",
    "via",
    "taken",
    "joined",
)


@bp.app_template_filter("ops_duration")
def duration(seconds: float | None) -> str:
    """Seconds as a short human duration: 45s, 12m, 3h 5m, 2d 4h."""
    if seconds is None:
        return ""
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    minutes, _ = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d {hours}h" if hours else f"{days}d"


@bp.app_template_filter("ops_json")
def pretty_json(value: Any) -> str:
    """Indented JSON for reading; very large values are cut with a note."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if len(text) > MAX_JSON:
        return text[:MAX_JSON] + f"\n… ({len(text) - MAX_JSON:,} more characters)"
    return text


@bp.app_template_filter("ops_details")
def history_details(details: dict[str, Any] | None) -> str:
    """The few details of a history line worth a glance, as `key: value` pairs."""
    details = details or {}
    parts = []
    for key in DETAIL_KEYS:
        if key in details and details[key] not in (None, ""):
            value = details[key]
            shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            if len(shown) > 200:
                shown = shown[:197] + "…"
            parts.append(f"{key}: {shown}")
    return " · ".join(parts)


# What each history kind is called in the history table (others: the kind with spaces).
HISTORY_KINDS = {
    HistoryKind.BOUNDARY: "boundary event fired",
    HistoryKind.THROWN: "thrown",
    HistoryKind.MANUAL: "manual task recorded",
    HistoryKind.MILESTONE: "milestone reached",
    HistoryKind.TERMINATED: "terminated",
    HistoryKind.MULTI_INSTANCE: "multi-instance started",
    HistoryKind.INSTANCE_COMPLETED: "one instance completed",
    HistoryKind.CHILD_ENDED: "called instance ended",
    HistoryKind.EVENT_WON: "event won",
    HistoryKind.SIGNAL: "signal received",
    HistoryKind.MODIFIED: "tokens moved by an operator",
    HistoryKind.COMPENSATION: "compensation thrown",
    HistoryKind.CONDITION: "condition became true",
    HistoryKind.LOOP: "loop run ended",
    HistoryKind.GATEWAY_CONSUMED: "late branch taken in",
    HistoryKind.GATEWAY_RESET: "gateway reset",
    HistoryKind.ADHOC_ACTIVATED: "activity activated",
    HistoryKind.ADHOC_COMPLETING: "completion condition met",
}


@bp.app_template_filter("ops_history_kind")
def history_kind(entry: Any) -> str:
    """A history line's kind as words; a thrown event names what was thrown."""
    if entry.kind == HistoryKind.THROWN:
        return f"{(entry.details or {}).get('event') or 'error'} thrown"
    if entry.kind == HistoryKind.BOUNDARY and (entry.details or {}).get("interrupting") is None:
        return "event sub-process started"
    return HISTORY_KINDS.get(entry.kind, entry.kind.replace("_", " "))
