"""The RQ worker: jobs run inside the Flask app context with a fresh database session each.

Each worker also runs the engine's sweep every SWEEP_INTERVAL seconds in a background thread,
under a Redis lock so that only one process sweeps at a time however many workers run; the sweep
also deletes finished instances past retention, at most once per RETENTION_INTERVAL.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from typing import Any

from flask import Flask
from redis.exceptions import RedisError
from rq import SimpleWorker

from webapp.extensions import db
from webapp.queue import get_queue, redis_connection

log = logging.getLogger(__name__)


class Sweeper(threading.Thread):
    """Runs `engine.sweep` periodically; the lock's expiry paces sweeps across all processes."""

    def __init__(self, app: Flask) -> None:
        super().__init__(name="flowdesk-sweep", daemon=True)
        self.app = app
        self.interval = float(app.config["SWEEP_INTERVAL"])
        self.lock_key = f"flowdesk:sweep:{app.config['RQ_QUEUE']}"
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.sweep_once()

    def stop(self) -> None:
        self.stopped.set()

    def sweep_once(self, grace: float | None = None) -> bool:
        """Sweep if no other process did within the interval; True when this call swept.

        `grace` overrides SWEEP_GRACE: a worker starting up takes over at once what a process
        that stopped left behind (such as `seed-demo`'s jobs); a second delivery is harmless."""
        from webapp.engine.sweep import sweep
        from webapp.services.jobs import engine_queue
        from webapp.services.operations import retention_tick

        milliseconds = max(50, int(self.interval * 1000))
        try:
            mine = redis_connection(self.app).set(
                self.lock_key, uuid.uuid4().hex, nx=True, px=milliseconds
            )
        except RedisError as error:
            log.warning("sweep skipped, Redis unavailable: %s", error)
            return False
        if not mine:
            return False
        with self.app.app_context():
            try:
                queue = engine_queue()
                if queue is not None:
                    wait = float(self.app.config["SWEEP_GRACE"]) if grace is None else grace
                    sweep(db.session, queue, grace=wait)
            except Exception:
                log.exception("sweep failed")
                db.session.rollback()
            finally:
                db.session.remove()
        retention_tick(self.app)
        return True


class AppWorker(SimpleWorker):
    """Runs each job in the worker process itself (no fork), inside an app context.

    No fork keeps the per-job cost low; a job that crashes the process is recovered by the
    engine's sweep, which re-enqueues work whose lease expired.
    """

    app: Flask
    sweeper: Sweeper | None = None
    _last_beat = 0.0
    _last_suspension_check = 0.0

    # RQ's bookkeeping costs several Redis round trips per job; the three overrides below drop
    # the ones that repeat what was just written, which matters at hundreds of jobs a second.

    def set_state(self, state: str, pipeline: Any = None) -> None:
        """Write the worker's state only when it changes (RQ sets 'idle' twice per job)."""
        if pipeline is None and state == getattr(self, "_state", None):
            return
        super().set_state(state, pipeline)

    def check_for_suspension(self, burst: bool) -> None:
        """`rq suspend` is noticed within a second instead of before every job."""
        if time.monotonic() - self._last_suspension_check < 1.0:
            return
        self._last_suspension_check = time.monotonic()
        super().check_for_suspension(burst)

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        """One beat a second, in one round trip, keeps the worker's key alive just as well."""
        if pipeline is not None or timeout is not None:
            super().heartbeat(timeout, pipeline)
            return
        if time.monotonic() - self._last_beat < 1.0:
            return
        self._last_beat = time.monotonic()
        with self.connection.pipeline() as beat:
            super().heartbeat(None, beat)
            beat.execute()

    def perform_job(self, *args: Any, **kwargs: Any) -> Any:
        with self.app.app_context():
            try:
                return super().perform_job(*args, **kwargs)
            finally:
                db.session.remove()

    def work(self, burst: bool = False, *args: Any, **kwargs: Any) -> bool:
        """Sweep once before working (so `--burst` also recovers lost jobs), then periodically."""
        self.sweeper = Sweeper(self.app)
        self.sweeper.sweep_once(grace=0)
        if not burst:
            self.sweeper.start()
        try:
            return super().work(burst, *args, **kwargs)
        finally:
            self.sweeper.stop()


def build_worker(app: Flask, name: str | None = None) -> AppWorker:
    """A worker for the app's queue, connected to the app's Redis."""
    worker = AppWorker([get_queue(app)], connection=redis_connection(app), name=name)
    worker.app = app
    return worker


def run(app: Flask, *, burst: bool = False, with_scheduler: bool = True) -> bool:
    """Work until stopped (or, with burst, until the queue is empty)."""
    worker = build_worker(app)
    return worker.work(burst=burst, with_scheduler=with_scheduler, logging_level="INFO")
