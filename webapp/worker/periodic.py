"""A worker's background thread that does one pass every few seconds in an app context: the
clock and the webhook sender. A pass that fails on the database is noted once (DatabaseOutage)
and the next pass simply tries again."""

from __future__ import annotations

import threading

from flask import Flask

from webapp.extensions import db
from webapp.worker.outages import DatabaseOutage


class PeriodicThread(threading.Thread):
    """Calls `work` every `interval` seconds until `stop`; `tick` is one pass (tests call it)."""

    def __init__(self, app: Flask, name: str, interval: float, database: DatabaseOutage) -> None:
        super().__init__(name=name, daemon=True)
        self.app = app
        self.interval = interval
        self.database = database
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(self.interval):
            self.tick()

    def stop(self) -> None:
        self.stopped.set()

    def tick(self) -> int:
        """One pass; how many things it did (0 when the database failed it)."""
        with self.app.app_context():
            try:
                done = self.work()
            except Exception as error:  # the next pass tries again
                self.database.failed(error)
                return 0
            finally:
                db.session.remove()
        self.database.passed()
        return done

    def work(self) -> int:
        raise NotImplementedError
