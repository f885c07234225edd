"""Database engine settings per backend and the instance-row lock every engine step takes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Flask
from sqlalchemy import event
from sqlalchemy.engine import Engine

from webapp.extensions import db

F = TypeVar("F", bound=Callable[..., Any])


def configure(app: Flask) -> None:
    """SQLite: WAL, foreign keys, a busy timeout; writing requests begin with the write lock."""
    with app.app_context():
        engine = db.engine
    if engine.dialect.name != "sqlite":
        return
    _configure_sqlite(engine)

    @app.before_request
    def lock_for_writes() -> None:
        from flask import request

        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            begin_write()


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        if mode != "AUTOCOMMIT":
            connection.exec_driver_sql(f"BEGIN {mode}")


def begin_write() -> None:
    """Start the session's transaction holding the write lock from its first statement.

    On SQLite this is BEGIN IMMEDIATE, so a write transaction never fails upgrading a read lock
    (the SQLite counterpart of taking rows FOR UPDATE). The session must have no transaction open.
    """
    if db.session().in_transaction():
        db.session.commit()
    db.session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})


def is_sqlite() -> bool:
    return db.engine.dialect.name == "sqlite"


def transactional(function: F) -> F:
    """A service that owns its transaction: commit when it returns, roll back when it raises."""

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            result = function(*args, **kwargs)
        except BaseException:
            db.session.rollback()
            raise
        db.session.commit()
        return result

    return run  # type: ignore[return-value]
