"""Notification tests: starting an instance as someone, running the worker's notification pass
in-process, and the outbox mails one address received. Needs an app context."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any


def start_as(version_id: int, starter: str = "dee", business_key: str = "REQ-1") -> int:
    """Start an instance of the version as `starter`; its id."""
    from sqlalchemy import select

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import ProcessVersion, User

    user = db.session.scalar(select(User).where(User.username == starter))
    version = db.session.get(ProcessVersion, version_id)
    result = steps.start_instance(db.session, version, actor=user, business_key=business_key)
    db.session.commit()
    return result.instance.id


def notify(config: Any, now: datetime | None = None) -> int:
    """One notification pass of a worker: due scan, pending mails, digests."""
    from webapp.extensions import db
    from webapp.models.base import utcnow
    from webapp.services import notifications

    return notifications.tick(db.session, config, now or utcnow())


def mails_to(address: str) -> list[Any]:
    """The outbox messages to `address`, oldest first."""
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import OutboxMessage

    db.session.rollback()
    return [
        m
        for m in db.session.scalars(select(OutboxMessage).order_by(OutboxMessage.id))
        if address in m.recipients
    ]


class _SMTPHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP to take messages: each one's text is kept on the server."""

    def handle(self) -> None:
        write = self.wfile.write
        write(b"220 test ESMTP\r\n")
        data: list[str] | None = None
        while line := self.rfile.readline():
            command = line.decode().rstrip("\r\n")
            if data is not None:
                if command == ".":
                    self.server.messages.append("\n".join(data))  # type: ignore[attr-defined]
                    data = None
                    write(b"250 OK\r\n")
                else:
                    data.append(command)
            elif command.upper().startswith(("EHLO", "HELO")):
                write(b"250 test\r\n")
            elif command.upper() == "DATA":
                data = []
                write(b"354 go\r\n")
            elif command.upper() == "QUIT":
                write(b"221 bye\r\n")
                return
            else:
                write(b"250 OK\r\n")


@contextmanager
def smtp_server() -> Iterator[Any]:
    """A local SMTP server on a free port; `.messages` holds what it received."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.messages = []  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
