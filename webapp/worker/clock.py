"""The thread in every worker that hands the jobs whose time came (timers, boundary timers,
retries after their backoff) from the database to RQ, in one pipeline a batch
(webapp/engine/clock.py claims them, so two clocks do not send the same job)."""

from __future__ import annotations

import logging

from flask import Flask
from redis.exceptions import RedisError

from webapp.engine import clock
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.services.jobs import engine_queue, send
from webapp.worker.outages import DatabaseOutage
from webapp.worker.periodic import PeriodicThread

log = logging.getLogger(__name__)


class Clock(PeriodicThread):
    """Every TIMER_INTERVAL, claims the due jobs and enqueues them: the jobs that came due since
    the last tick go in one claim and one pipeline. While Redis is down it claims nothing (a
    claim it could not send goes back to the database), so timers fire as soon as Redis is
    back."""

    def __init__(self, app: Flask) -> None:
        outage = DatabaseOutage(
            log,
            failed="the clock failed",
            waiting="timers wait until the database is back",
            back="the database is back: timers are delivered again",
        )
        super().__init__(app, "flowdesk-clock", float(app.config["TIMER_INTERVAL"]), outage)
        self.redis_down = False

    def work(self) -> int:
        """Enqueue every job that is due; how many this clock sent."""
        return self._deliver()

    def _deliver(self) -> int:
        """Claim and enqueue batches while full ones come (a read off the index first, so an
        idle tick takes no write lock)."""
        session = db_session()
        sent = 0
        while not self.stopped.is_set():
            now = utcnow()
            wake = clock.next_wake(session)
            session.rollback()
            if wake is None or wake > now:
                break
            if self.redis_down and not self._redis_back():
                break
            refs = clock.claim_due(session, now)
            session.commit()
            if refs and not send(refs):
                clock.release(session, refs)
                session.commit()
                log.warning("timers wait until Redis is back: %d job(s) due", len(refs))
                self.redis_down = True
                break
            sent += len(refs)
            if len(refs) < clock.CLAIM_BATCH:  # the rest (if any) is locked: the next tick
                break
        return sent

    def _redis_back(self) -> bool:
        queue = engine_queue()
        try:
            if queue is None or not queue.connection.ping():
                return False
        except (RedisError, OSError):
            return False
        log.info("Redis is back: timers are delivered again")
        self.redis_down = False
        return True
