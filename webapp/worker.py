"""The RQ worker: jobs run inside the Flask app context with a fresh database session each."""

from __future__ import annotations

from typing import Any

from flask import Flask
from rq import SimpleWorker

from webapp.extensions import db
from webapp.queue import get_queue, redis_connection


class AppWorker(SimpleWorker):
    """Runs each job in the worker process itself (no fork), inside an app context.

    No fork keeps the per-job cost low; a job that crashes the process is recovered by the
    engine's sweep, which re-enqueues work whose lease expired.
    """

    app: Flask

    def perform_job(self, *args: Any, **kwargs: Any) -> Any:
        with self.app.app_context():
            try:
                return super().perform_job(*args, **kwargs)
            finally:
                db.session.remove()


def build_worker(app: Flask, name: str | None = None) -> AppWorker:
    """A worker for the app's queue, connected to the app's Redis."""
    worker = AppWorker([get_queue(app)], connection=redis_connection(app), name=name)
    worker.app = app
    return worker


def run(app: Flask, *, burst: bool = False, with_scheduler: bool = True) -> bool:
    """Work until stopped (or, with burst, until the queue is empty)."""
    worker = build_worker(app)
    return worker.work(burst=burst, with_scheduler=with_scheduler, logging_level="INFO")
