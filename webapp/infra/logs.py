"""One log format for web and worker processes: UTC date and time, level, logger, and the
instance and job a line is about; one JSON object a line with LOG_FORMAT=json."""

from __future__ import annotations

import functools
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from flask import Flask

F = TypeVar("F", bound=Callable[..., Any])

_ids: ContextVar[tuple[tuple[str, Any], ...]] = ContextVar("flowdesk_log_ids", default=())


@contextmanager
def about(**ids: Any) -> Iterator[None]:
    """Lines logged inside the block name these ids (e.g. instance=12, job=40)."""
    merged = {**dict(_ids.get()), **{k: v for k, v in ids.items() if v is not None}}
    token = _ids.set(tuple(merged.items()))
    try:
        yield
    finally:
        _ids.reset(token)


def about_job(function: F) -> F:
    """For RQ entry points called as f(job_id, instance_id): log lines name both."""

    @functools.wraps(function)
    def wrapper(job_id: int, instance_id: int, *args: Any, **kwargs: Any) -> Any:
        with about(instance=instance_id, job=job_id):
            return function(job_id, instance_id, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class _Ids(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ids = dict(_ids.get())
        record.ids = ids
        record.about = " [" + " ".join(f"{k}={v}" for k, v in ids.items()) + "]" if ids else ""
        return True


class TextFormatter(logging.Formatter):
    """`2026-12-03T15:04:05.123Z WARNING webapp.engine.sweep [instance=12 job=40] message`."""

    converter = time.gmtime  # type: ignore[assignment]  # typeshed: gmtime takes an optional argument
    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(about)s %(message)s")


class JsonFormatter(TextFormatter):
    """One JSON object a line, for log collectors."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            **getattr(record, "ids", {}),
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class FlowdeskHandler(logging.StreamHandler):
    """The process's one handler on the root logger (standard error)."""


def configured() -> bool:
    """Whether this process logs through `configure`'s handler."""
    return any(isinstance(h, FlowdeskHandler) for h in logging.getLogger().handlers)


def configure(app: Flask) -> None:
    """Log every process's lines, Flask's, RQ's and the engine's, through one handler.

    Left alone under test runners (they capture logs themselves) and when the root logger
    already has a handler of ours; gunicorn keeps its own access and error logs.
    """
    if app.config.get("TESTING"):
        return
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, FlowdeskHandler)), None)
    if handler is None:
        handler = FlowdeskHandler(sys.stderr)
        handler.addFilter(_Ids())
        root.addHandler(handler)
    json_lines = app.config["LOG_FORMAT"] == "json"
    handler.setFormatter(JsonFormatter() if json_lines else TextFormatter())
    root.setLevel(app.config["LOG_LEVEL"])
    # Alembic announces each of its plugins whenever an app starts: noise unless debugging.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
