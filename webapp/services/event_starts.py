"""The message, signal and conditional start events of each process's latest published version,
kept by publish so a message, a broadcast or a conditions request finds the processes it starts
with one indexed query."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from webapp.extensions import db
from webapp.models import EventStart, Process, ProcessVersion
from webapp.process import instantiating

EVENTS = ("message", "signal", "conditional")


def of_document(doc: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(node id, event, name) of the document's process-level message, signal and conditional
    starts (a conditional start is named by its node id), and of the receive tasks and
    event-based gateway targets whose message starts it."""
    found = [(t.node_id, "message", t.message) for t in instantiating.triggers(doc)]
    for node_id, node in (doc.get("nodes") or {}).items():
        config = node.get("config") or {}
        event = config.get("event")
        if node.get("kind") != "startEvent" or node.get("parent") or event not in EVENTS:
            continue
        name = node_id if event == "conditional" else str(config.get(event) or "").strip()
        if name:
            found.append((node_id, event, name[:200]))
    return found


def keep(process: Process, version: ProcessVersion, error: type[Exception]) -> None:
    """Point the process's event starts at `version`; `error(code, message)` is raised when a
    message start's name already starts another process (one message name, one process)."""
    starts = of_document(version.document)
    messages = sorted({name for _, event, name in starts if event == "message"})
    if messages:
        taken = db.session.execute(
            select(EventStart.message, Process.key)
            .join(Process, Process.id == EventStart.process_id)
            .where(EventStart.message.in_(messages), EventStart.process_id != process.id)
            .limit(1)
        ).first()
        if taken is not None:
            raise _taken(error, taken.message, taken.key)
    db.session.execute(delete(EventStart).where(EventStart.process_id == process.id))
    db.session.flush()
    seen: set[str] = set()
    for node_id, event, name in starts:
        message = name if event == "message" and name not in seen else None
        seen.add(name if event == "message" else "")
        db.session.add(
            EventStart(
                process_id=process.id,
                version_id=version.id,
                node_id=node_id,
                event=event,
                name=name,
                message=message,
            )
        )
    try:
        db.session.flush()
    except IntegrityError:
        # Another process published a start for one of these messages at the same time.
        raise _taken(error, ", ".join(messages), "another process") from None


def _taken(error: type[Exception], message: str, key: str) -> Exception:
    return error(
        "publish.message_taken",
        f"The message '{message}' already starts the process '{key}': a message name starts "
        "one process. Rename the message or remove that process's message start first.",
    )
