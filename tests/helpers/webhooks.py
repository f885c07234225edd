"""A real webhook receiver (an HTTP server thread on loopback) and registering webhooks."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: str
    at: float
    status: int


@dataclass
class Receiver:
    """Answers each POST with the next of `statuses` (then 200) and keeps what came."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def answer(self) -> int:
        return self.statuses.pop(0) if self.statuses else 200

    def delivered(self) -> list[Received]:
        return [item for item in self.received if 200 <= item.status < 300]

    def types(self) -> list[str]:
        return [json.loads(item.body)["type"] for item in self.delivered()]


@contextmanager
def receiver(statuses: list[int] | None = None) -> Iterator[Receiver]:
    """A receiver on a free loopback port for the length of the block."""
    found = Receiver(statuses=list(statuses or []))
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            with lock:
                status = found.answer()
                found.received.append(
                    Received(
                        {k.lower(): v for k, v in self.headers.items()}, body, time.time(), status
                    )
                )
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    found.url = f"http://127.0.0.1:{server.server_port}/hooks"
    try:
        yield found
    finally:
        server.shutdown()
        server.server_close()


def register(app, url: str, events: list[str], **fields: Any):
    """Register a webhook as the demo admin; (its id, its secret)."""
    from sqlalchemy import select

    from webapp.extensions import db
    from webapp.models import User
    from webapp.services import webhooks

    with app.app_context():
        admin = db.session.scalar(select(User).where(User.username == "admin"))
        webhook = webhooks.create(admin, {"url": url, "events": events, **fields})
        found = webhook.id, webhook.secret
        db.session.remove()
    return found
