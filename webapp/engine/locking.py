"""Write transactions that lock first: BEGIN IMMEDIATE on SQLite, FOR UPDATE on the instance row.

SQLite has no row locks; BEGIN IMMEDIATE takes the database write lock from the first statement,
so a step never reads under a deferred transaction and then fails to upgrade it.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session, scoped_session

from webapp.engine.errors import EngineError
from webapp.models import Instance


def is_sqlite(session: Session) -> bool:
    return session.get_bind().dialect.name == "sqlite"


def begin_write(session: Session) -> None:
    """Make sure the session's transaction holds the write lock (SQLite) before it reads.

    A transaction already begun IMMEDIATE is kept; one that only read is ended first (its reads
    are repeated under the lock); one with unsaved changes is a programming error.
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


def lock_instance(session: Session, instance_id: int) -> Instance:
    """Begin a write and lock the instance row (ORM), for services that change rows the engine
    owns outside a step (e.g. claiming a task); EngineError 404 when it does not exist."""
    begin_write(session)
    instance = session.scalar(
        select(Instance)
        .where(Instance.id == instance_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    if instance is None:
        raise EngineError("not_found", f"Instance {instance_id} does not exist.", status=404)
    return instance
