"""Locking an instance row for a change outside a step: the write lock first (BEGIN IMMEDIATE on
SQLite, `infra.database.begin_write`), then the row FOR UPDATE."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from webapp.engine.errors import EngineError
from webapp.infra.database import begin_write
from webapp.models import Instance


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
