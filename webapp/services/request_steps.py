"""An instance's story as its requester reads it: started, tasks done and by whom, what it
waits for, and how it ended; the engine's own bookkeeping (gateways, tool attempts, scopes)
stays on the operations page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select

from webapp.extensions import db
from webapp.models import HistoryEntry, Token, User
from webapp.models.statuses import LIVE_TOKEN, HistoryKind, TokenStatus

# Tokens waiting at these node kinds wait for something a requester can name.
WAITS = {
    "timerCatch": "a time",
    "messageCatch": "a message",
    "receiveTask": "a message",
    "signalCatch": "a signal",
    "eventBasedGateway": "the first of several events",
}
AUTOMATIC = {"serviceTask", "sendTask", "messageThrow", "scriptTask"}
# The history kinds a requester reads (see `_what`); the rest is the engine's bookkeeping.
SHOWN = (
    HistoryKind.STARTED,
    HistoryKind.TASK_CREATED,
    HistoryKind.TASK_COMPLETED,
    HistoryKind.MANUAL,
    HistoryKind.TASK_CLAIMED,
    HistoryKind.TASK_RELEASED,
    HistoryKind.TASK_REASSIGNED,
    HistoryKind.TASK_REPORTED,
    HistoryKind.MILESTONE,
    HistoryKind.ERROR,
    HistoryKind.RETRIED,
    HistoryKind.CANCELLED,
    HistoryKind.COMPLETED,
)


@dataclass(frozen=True)
class Step:
    """One line of the requester's history."""

    kind: str
    when: datetime
    what: str
    who: str = ""


def _names(entries: Iterable[HistoryEntry]) -> dict[str, str]:
    """Display names of the people the entries name: who acted, and to whom a task went."""
    usernames = {entry.actor for entry in entries if entry.actor} | {
        str((entry.details or {}).get("to_user"))
        for entry in entries
        if (entry.details or {}).get("to_user")
    }
    if not usernames:
        return {}
    users = db.session.scalars(select(User).where(User.username.in_(usernames)))
    return {user.username: user.name for user in users}


def _what(entry: HistoryEntry, title: str, names: Mapping[str, str]) -> str:
    details: Mapping[str, Any] = entry.details or {}
    kind = entry.kind
    if kind == HistoryKind.STARTED:
        return "Started"
    if kind == HistoryKind.TASK_CREATED:
        return f"Waiting for {title}"
    if kind in (HistoryKind.TASK_COMPLETED, HistoryKind.MANUAL):
        return f"{title} done"
    if kind == HistoryKind.TASK_CLAIMED:
        return f"{title} taken on"
    if kind == HistoryKind.TASK_RELEASED:
        return f"{title} handed back"
    if kind == HistoryKind.TASK_REASSIGNED:
        user = details.get("to_user")
        target = names.get(user, user) if user else details.get("to_role") or "someone else"
        return f"{title} handed to {target}"
    if kind == HistoryKind.TASK_REPORTED:
        event = "an error" if details.get("event") == "error" else "an escalation"
        code = f" ({details['code']})" if details.get("code") else ""
        return f"{title}: reported {event}{code}"
    if kind == HistoryKind.MILESTONE:
        return f"Reached {title}"
    if kind == HistoryKind.ERROR:
        return f"Stopped with an error at {title}" if entry.node_id else "Stopped with an error"
    if kind == HistoryKind.RETRIED:
        return "Resumed after the error"
    if kind == HistoryKind.CANCELLED:
        reason = f": {details['reason']}" if details.get("reason") else ""
        return f"Cancelled{reason}"
    if kind == HistoryKind.COMPLETED:
        return "Completed"
    return ""


def steps(instance_id: int, titles: Mapping[str, str], limit: int = 500) -> list[Step]:
    """The history lines a person recognises, in order, with who did each (their name)."""
    entries = list(
        db.session.scalars(
            select(HistoryEntry)
            .where(HistoryEntry.instance_id == instance_id, HistoryEntry.kind.in_(SHOWN))
            .order_by(HistoryEntry.id)
            .limit(limit)
        )
    )
    names = _names(entries)
    found = []
    for entry in entries:
        title = titles.get(entry.node_id or "", entry.node_id or "")
        what = _what(entry, title, names)
        if what:
            who = names.get(entry.actor, entry.actor) if entry.actor else ""
            if who and (entry.details or {}).get("api_token"):
                who = f"{who} (token: {entry.details['api_token']})"
            found.append(Step(entry.kind, entry.created_at, what, who or ""))
    return found


def waiting_for(
    tokens: list[Token], nodes: Mapping[str, Mapping[str, Any]], titles: Mapping[str, str]
) -> list[str]:
    """What the instance waits for besides its open tasks: a time, a message, a signal, or an
    automatic step at work (each once, in token order)."""
    found: list[str] = []
    for token in tokens:
        kind = (nodes.get(token.node_id) or {}).get("kind")
        title = titles.get(token.node_id, token.node_id)
        if token.status == TokenStatus.WAITING and kind in WAITS:
            line = f"{title} (waiting for {WAITS[kind]})"
        elif token.status in LIVE_TOKEN and kind in AUTOMATIC:
            line = f"{title} (an automatic step)"
        elif token.status in LIVE_TOKEN and kind == "callActivity":
            line = f"{title} (another process)"
        else:
            continue
        if line not in found:
            found.append(line)
    return found
