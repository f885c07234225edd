"""Redis and the RQ queue: one connection per process, the embedded server when none is set."""

from __future__ import annotations

from flask import Flask, current_app
from redis import Redis
from rq import Queue

from webapp.infra.redis_server import EmbeddedRedis


def redis_url(app: Flask | None = None) -> str:
    """The configured Redis URL, starting the embedded server when none is configured."""
    app = app or current_app
    url = app.config.get("REDIS_URL")
    if url:
        return url
    embedded = app.extensions.get("flowdesk.embedded_redis")
    if embedded is None:
        embedded = EmbeddedRedis(app.instance_path)
        app.extensions["flowdesk.embedded_redis"] = embedded
    embedded.ensure_running()
    return embedded.url


def redis_connection(app: Flask | None = None) -> Redis:
    """This process's Redis client for the app (created once, thread-safe pool)."""
    app = app or current_app
    client = app.extensions.get("flowdesk.redis")
    if client is None:
        client = Redis.from_url(redis_url(app))
        app.extensions["flowdesk.redis"] = client
    return client


def get_queue(app: Flask | None = None) -> Queue:
    """The RQ queue every Flowdesk job goes to."""
    app = app or current_app
    return Queue(app.config["RQ_QUEUE"], connection=redis_connection(app))
