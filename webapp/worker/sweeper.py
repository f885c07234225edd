"""The thread in every worker that sweeps (under a Redis lock, one process at a time), deletes
finished instances past retention, starts due timer start events (in every worker, no lock:
a unique row per tick starts each instance once, webapp/engine/timer_starts.py) and sends
notifications (in every worker: rows are claimed, webapp/services/notifications.py)."""

from __future__ import annotations

import logging
import threading
import time
import uuid

from flask import Flask
from redis.exceptions import RedisError

from webapp.engine.sweep import sweep
from webapp.extensions import db
from webapp.infra.queue import redis_connection
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.services import notifications
from webapp.services.jobs import ENTRY_POINTS, engine_queue
from webapp.services.operations import retention_tick
from webapp.services.schedules import run_due
from webapp.worker.outages import DatabaseOutage

log = logging.getLogger(__name__)


class Sweeper(threading.Thread):
    """Runs `engine.sweep` periodically (the lock's expiry paces sweeps across all processes)
    and starts due timer start events."""

    def __init__(self, app: Flask) -> None:
        super().__init__(name="flowdesk-sweep", daemon=True)
        self.app = app
        self.interval = float(app.config["SWEEP_INTERVAL"])
        self.schedule_interval = float(app.config["SCHEDULE_INTERVAL"])
        self.notify_interval = float(app.config["NOTIFY_INTERVAL"])
        self.lock_key = f"flowdesk:sweep:{app.config['RQ_QUEUE']}"
        self.stopped = threading.Event()
        self.redis_down = False
        self.starts_database = DatabaseOutage(
            log,
            failed="timer starts failed",
            waiting="timer starts wait until the database is back",
            back="the database is back: timer starts run again",
        )
        self.notify_database = DatabaseOutage(
            log,
            failed="notifications failed",
            waiting="notifications wait until the database is back",
            back="the database is back: notifications are sent again",
        )
        self.sweep_database = DatabaseOutage(
            log,
            failed="sweep failed",
            waiting="sweeps wait until the database is back",
            back="the database is back: sweeping again",
        )

    def run(self) -> None:
        now = time.monotonic()
        next_sweep, next_schedules = now + self.interval, now + self.schedule_interval
        next_notify = now + self.notify_interval
        while not self.stopped.wait(
            max(0.0, min(next_sweep, next_schedules, next_notify) - time.monotonic())
        ):
            now = time.monotonic()
            if now >= next_schedules:
                next_schedules = now + self.schedule_interval
                self.start_schedules()
            if now >= next_notify:
                next_notify = now + self.notify_interval
                self.notify()
            if now >= next_sweep:
                next_sweep = now + self.interval
                try:
                    self.sweep_once()
                except Exception:  # the thread must outlive anything one sweep meets
                    log.exception("sweep failed")

    def start_schedules(self) -> int:
        """Start the instances of due timer start events; how many this process started."""
        with self.app.app_context():
            try:
                started = run_due()
            except Exception as error:  # the next pass tries again
                self.starts_database.failed(error, rollback=False)
                return 0
            finally:
                db.session.remove()
        self.starts_database.passed()
        return started

    def notify(self) -> int:
        """Scan for due tasks, mail pending notifications and due digests; how many mails."""
        with self.app.app_context():
            try:
                sent = notifications.tick(db_session(), self.app.config, utcnow())
            except Exception as error:  # the next pass tries again
                self.notify_database.failed(error)
                return 0
            finally:
                db.session.remove()
        self.notify_database.passed()
        return sent

    def stop(self) -> None:
        self.stopped.set()

    def sweep_once(self, grace: float | None = None) -> bool:
        """Sweep if no other process did within the interval; True when this call swept.

        `grace` overrides SWEEP_GRACE: a worker starting up takes over at once what a process
        that stopped left behind (such as `seed-demo`'s jobs); a second delivery is harmless."""
        milliseconds = max(50, int(self.interval * 1000))
        try:
            mine = redis_connection(self.app).set(
                self.lock_key, uuid.uuid4().hex, nx=True, px=milliseconds
            )
        except RedisError as error:
            if not self.redis_down:
                log.warning("sweeps skipped until Redis is back: %s", error)
            self.redis_down = True
            return False
        if self.redis_down:
            log.info("Redis is back: sweeping again")
            self.redis_down = False
        if not mine:
            return False
        with self.app.app_context():
            try:
                queue = engine_queue()
                if queue is not None:
                    wait = float(self.app.config["SWEEP_GRACE"]) if grace is None else grace
                    sweep(db_session(), queue, ENTRY_POINTS, grace=wait)
            except Exception as error:  # the next sweep tries again
                self.sweep_database.failed(error)
                return True
            finally:
                db.session.remove()
        self.sweep_database.passed()
        retention_tick(self.app)
        return True
