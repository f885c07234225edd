"""The thread in every worker that sends due webhook deliveries: it claims them from the database
(services/webhooks.py, so two workers never send the same attempt), posts each signed body to its
URL through the SSRF guard, and records the answer."""

from __future__ import annotations

import http.client
import logging
import time
from urllib.parse import urlsplit

from flask import Flask

from webapp.infra.addresses import AddressRefused, PinnedHTTP, PinnedHTTPS, checked_address
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.services import webhooks
from webapp.worker.outages import DatabaseOutage
from webapp.worker.periodic import PeriodicThread

log = logging.getLogger(__name__)

# Bytes of an answer read (and dropped): a receiver only needs to answer 2xx.
MAX_ANSWER = 64_000
# Seconds between removals of old delivered and failed deliveries (WEBHOOK_KEEP_DAYS).
PRUNE_EVERY = 3600.0


class Outcome:
    """How one attempt went: the status code, or why there was none; `retry` false when trying
    again cannot help (an address the guard refuses)."""

    def __init__(self, status: int | None, error: str | None, retry: bool = True) -> None:
        self.status = status
        self.error = error
        self.retry = retry


def post(attempt: webhooks.Attempt, *, timeout: float, allow_private: bool) -> Outcome:
    """POST the delivery once, to the checked address of its host."""
    parts = urlsplit(attempt.url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        address = checked_address(host, port, allow_private)
    except AddressRefused as refused:
        hint = "; set WEBHOOK_ALLOW_PRIVATE to allow it" if refused.code != "dns" else ""
        return Outcome(None, refused.message + hint, retry=refused.code == "dns")
    connection_class = PinnedHTTPS if parts.scheme == "https" else PinnedHTTP
    connection = connection_class(host, port, address, timeout)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    headers = webhooks.headers(attempt.message_id, attempt.body, attempt.keys, int(time.time()))
    try:
        connection.request("POST", target, body=attempt.body.encode("utf-8"), headers=headers)
        response = connection.getresponse()
        response.read(MAX_ANSWER)
    except TimeoutError:
        return Outcome(None, f"{host} did not answer within {timeout:g} seconds")
    except (OSError, http.client.HTTPException) as error:
        return Outcome(None, f"Calling {host} failed: {error}")
    finally:
        connection.close()
    if 200 <= response.status < 300:
        return Outcome(response.status, None)
    return Outcome(response.status, f"answered {response.status} {response.reason}")


class WebhookSender(PeriodicThread):
    """Every WEBHOOK_INTERVAL, sends the due deliveries (one read when none is due); once an
    hour, removes the log's deliveries older than WEBHOOK_KEEP_DAYS."""

    def __init__(self, app: Flask) -> None:
        outage = DatabaseOutage(
            log,
            failed="sending webhooks failed",
            waiting="webhook deliveries wait until the database is back",
            back="the database is back: webhooks are sent again",
        )
        super().__init__(app, "flowdesk-webhooks", float(app.config["WEBHOOK_INTERVAL"]), outage)
        self.timeout = float(app.config["WEBHOOK_TIMEOUT"])
        self.allow_private = bool(app.config["WEBHOOK_ALLOW_PRIVATE"])
        self.keep_days = int(app.config["WEBHOOK_KEEP_DAYS"])
        self.pruned_at: float | None = None

    def work(self) -> int:
        """Send every due delivery; how many attempts were made."""
        return self._send_due()

    def _send_due(self) -> int:
        session = db_session()
        if self.pruned_at is None or time.monotonic() - self.pruned_at > PRUNE_EVERY:
            self.pruned_at = time.monotonic()
            webhooks.prune(session, utcnow(), self.keep_days)
        sent = 0
        while not self.stopped.is_set():
            now = utcnow()
            due = webhooks.next_due(session)
            session.rollback()
            if due is None or due > now:
                break
            attempts = webhooks.claim_due(session, now)
            session.commit()
            if not attempts:
                break
            for attempt in attempts:
                outcome = post(attempt, timeout=self.timeout, allow_private=self.allow_private)
                if outcome.error:
                    log.info("webhook delivery %s: %s", attempt.id, outcome.error)
                webhooks.record_attempt(
                    session,
                    attempt.id,
                    status_code=outcome.status,
                    error=outcome.error,
                    retry=outcome.retry,
                )
                sent += 1
        return sent
