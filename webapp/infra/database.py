"""Database engine settings per backend, the instance-row lock every engine step takes, and how
a request tells a database outage (and a commit whose outcome is unknown) from a bug."""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
from flask import Flask, g, has_request_context, request
from sqlalchemy import create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, scoped_session
from sqlalchemy.pool import StaticPool

from webapp.config import ConfigError
from webapp.extensions import db

F = TypeVar("F", bound=Callable[..., Any])

# Seconds a PostgreSQL connection attempt may take before the request gives up (503).
POSTGRES_CONNECT_TIMEOUT = 5
# A pooled PostgreSQL connection is pinged before use when it sat idle longer than this (the
# app's DB_PING_AFTER_IDLE), so one the database dropped (a restart, an outage) is replaced instead
# of failing. Web requests ping every time (0); a worker's steps follow each other closely, and a
# ping is a round trip per transaction, so workers ping only after a second idle: a drop within
# that second fails one job, which is delivered again.
WORKER_PING_AFTER_IDLE = 1.0
# What PostgreSQL says, while connecting, about settings that waiting will not fix: a wrong
# password or user, a database that does not exist, a client address it refuses. psycopg gives
# these no SQLSTATE, so the server's words are matched.
_REFUSED_SETTINGS = (
    "password authentication failed",
    "does not exist",
    "no pg_hba.conf entry",
    "no password supplied",
    "is not permitted to log in",
    "authentication failed for user",
)
# Seconds a SQLite writer waits for another one's lock before giving up (503).
SQLITE_BUSY_TIMEOUT = 30.0


def configure(app: Flask) -> None:
    """SQLite: WAL, foreign keys, a busy timeout; writing requests begin with the write lock.
    PostgreSQL: a connect timeout. Both: commits are tracked per request (`commit_outcome`)."""
    with app.app_context():
        engine = db.engine
    _track_commits(engine)
    if engine.dialect.name == "postgresql":
        _configure_postgres(engine, app)
    if engine.dialect.name != "sqlite":
        return
    _configure_sqlite(engine, float(app.config.get("SQLITE_BUSY_TIMEOUT", SQLITE_BUSY_TIMEOUT)))

    @app.before_request
    def lock_for_writes() -> None:
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            begin_write(db.session())


def _configure_postgres(engine: Engine, app: Flask) -> None:
    @event.listens_for(engine, "do_connect")
    def with_timeout(_dialect: Any, _record: Any, _args: Any, params: dict[str, Any]) -> None:
        params.setdefault("connect_timeout", POSTGRES_CONNECT_TIMEOUT)

    @event.listens_for(engine.pool, "checkin")
    def checked_in(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine.pool, "checkout")
    def checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.get("idle_since")
        if since is None or time.monotonic() - since < app.config.get("DB_PING_AFTER_IDLE", 0):
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:  # the pool discards it and connects anew
            raise sa_exc.DisconnectionError(str(error)) from error


def _configure_sqlite(engine: Engine, busy_timeout: float) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy, not pysqlite, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        mode = connection.get_execution_options().get("sqlite_begin", "DEFERRED")
        if mode != "AUTOCOMMIT":
            connection.exec_driver_sql(f"BEGIN {mode}")


def memory_engine() -> Engine:
    """A private in-memory SQLite database on one connection, set up as the app's SQLite is:
    for throw-away runs (test scenarios) that must never touch the real tables."""
    engine = create_engine("sqlite://", poolclass=StaticPool)
    _configure_sqlite(engine, SQLITE_BUSY_TIMEOUT)
    return engine


def is_sqlite(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def begin_write(session: Session) -> None:
    """Make sure the session's transaction holds the write lock (SQLite) before it reads.

    BEGIN IMMEDIATE is the SQLite counterpart of taking rows FOR UPDATE: a write transaction never
    fails upgrading a read lock. A transaction already begun IMMEDIATE is kept; one that only read
    is ended first (its reads are repeated under the lock); one with unsaved changes is a
    programming error.
    """
    if not is_sqlite(session):
        return
    if isinstance(session, scoped_session):
        session = session()
    if session.in_transaction():
        mode = session.connection().get_execution_options().get("sqlite_begin")
        if mode in ("IMMEDIATE", "EXCLUSIVE"):
            return
        if session.new or session.dirty or session.deleted:
            raise RuntimeError("a step must start before the transaction writes anything")
        session.commit()
    session.connection(execution_options={"sqlite_begin": "IMMEDIATE"})


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


# --- outages and commits whose outcome is unknown ---------------------------------------------

# Seconds a client is asked to wait (Retry-After) when the database is unavailable.
RETRY_AFTER = 5

# PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": connection exceptions (08),
# insufficient resources (53), shutdown and "cannot connect now" (57P), system errors (58),
# serialization failures and deadlocks, lock and statement timeouts.
_TRANSIENT_STATES = ("08", "53", "57P", "58", "40001", "40P01", "55P03", "57014")
# SQLite primary result codes of the same kind: BUSY, LOCKED, READONLY, IOERR, FULL, CANTOPEN,
# PROTOCOL.
_TRANSIENT_SQLITE = {5, 6, 8, 10, 13, 14, 15}
_READS = {"SELECT", "BEGIN", "PRAGMA", "SAVEPOINT", "RELEASE", "SHOW", "SET", "ROLLBACK"}


def _causes(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def is_unavailable(error: BaseException) -> bool:
    """True when `error` (or what caused it) says the database is unreachable or too busy right
    now: worth a 503 and a retry, not a bug."""
    for cause in _causes(error):
        if isinstance(cause, sa_exc.TimeoutError):  # no pooled connection came free in time
            return True
        if isinstance(cause, sa_exc.DBAPIError) and cause.connection_invalidated:
            return True
        original = cause.orig if isinstance(cause, sa_exc.DBAPIError) else cause
        if isinstance(original, psycopg.InterfaceError):  # e.g. "the connection is closed"
            return True
        if isinstance(original, psycopg.OperationalError):
            state = original.sqlstate
            if state is None or state.startswith(_TRANSIENT_STATES):
                return True
        if isinstance(original, sqlite3.OperationalError):
            code = getattr(original, "sqlite_errorcode", None)
            if code is not None and code & 0xFF in _TRANSIENT_SQLITE:
                return True
    return False


def refused_settings(error: BaseException) -> str | None:
    """The server's reason when `error` says DATABASE_URL is wrong (credentials, database name),
    not that the server is down; None otherwise."""
    for cause in _causes(error):
        original = cause.orig if isinstance(cause, sa_exc.DBAPIError) else cause
        if isinstance(original, psycopg.OperationalError) and original.sqlstate is None:
            reason = str(original).strip().splitlines()[0]
            if any(words in reason for words in _REFUSED_SETTINGS):
                return reason.rpartition("FATAL:")[2].strip() or reason
    return None


def check_settings(app: Flask) -> None:
    """Connect once at start-up and raise ConfigError when PostgreSQL refuses
    DATABASE_URL itself; an unreachable server is an outage the processes ride out."""
    with app.app_context():
        if db.engine.dialect.name != "postgresql":
            return
        try:
            with db.engine.connect():
                pass
        except sa_exc.DBAPIError as error:
            reason = refused_settings(error)
            if reason is None:
                return
            target = db.engine.url.render_as_string(hide_password=True)
            raise ConfigError(f"DATABASE_URL is wrong: {target} refused it: {reason}") from None
        finally:
            db.engine.dispose()


def _track_commits(engine: Engine) -> None:
    """Note, per request, whether a transaction that wrote has been committed, or had its COMMIT
    sent without an answer: a connection lost then leaves the outcome unknown."""

    @event.listens_for(engine, "begin")
    def began(_conn: Any) -> None:
        if has_request_context():
            g.db_writing = False

    @event.listens_for(engine, "after_cursor_execute")
    def executed(*args: Any) -> None:
        statement = args[2]
        if has_request_context() and not g.get("db_writing"):
            words = statement.lstrip()[:16].split(None, 1)
            g.db_writing = bool(words) and words[0].upper() not in _READS

    @event.listens_for(engine, "commit")
    def committing(_conn: Any) -> None:
        if has_request_context() and g.get("db_writing"):
            g.db_commit_sent = True


@event.listens_for(db.session, "after_commit")
def _committed(_session: Any) -> None:
    if has_request_context() and g.get("db_commit_sent"):
        g.db_commit_sent = False
        g.db_committed = True


def commit_outcome() -> str:
    """What this request's failure left in the database: "none" (nothing was committed),
    "saved" (some of it was committed), or "unknown" (the connection failed during a COMMIT)."""
    if g.get("db_commit_sent") and db.engine.dialect.name != "sqlite":
        return "unknown"
    return "saved" if g.get("db_committed") else "none"


def reset_session() -> None:
    """End the request's transaction after an error. A connection the database dropped is
    invalidated by SQLAlchemy, never returned to the pool; a failing rollback discards the
    session."""
    try:
        db.session.rollback()
    except Exception:
        db.session.remove()
