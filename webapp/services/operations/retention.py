"""Retention: finished instances (completed or cancelled) older than their process's limit are
deleted with their tokens, jobs, tasks, subscriptions and history, a batch per transaction.

Instances started by a call activity go with their caller, never before it: a caller is deleted
with all its (finished) children, grandchildren and so on; a child whose caller stays is kept.

The limit is RETENTION_DAYS (default 30) unless the process has its own policy; a policy without
days keeps the process's instances forever. Failed and running instances are never deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import Flask, current_app, has_app_context
from redis.exceptions import RedisError
from sqlalchemy import ColumnElement, Select, and_, delete, false, func, or_, select, update
from sqlalchemy.orm import Session, aliased

from webapp.extensions import db
from webapp.infra.database import begin_write, is_sqlite, is_unavailable
from webapp.infra.queue import redis_connection
from webapp.inputs import whole_number
from webapp.models import (
    HistoryEntry,
    Instance,
    Job,
    MessageSubscription,
    OutboxMessage,
    Process,
    RetentionPolicy,
    SignalBroadcast,
    Task,
    Token,
    User,
)
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.models.statuses import FINISHED_INSTANCE, BroadcastStatus
from webapp.permissions import can
from webapp.services.operations.common import OperationsError

log = logging.getLogger(__name__)

DEFAULT_DAYS = 30
MAX_DAYS = 36_500
BATCH = 200
# Rows named in one DELETE ... IN (...) (a family of callers and children can be large).
DELETE_CHUNK = 1000
CHILDREN = (HistoryEntry, MessageSubscription, Task, Job, Token)


def default_days(app: Flask | None = None) -> int | None:
    """RETENTION_DAYS from the settings; 0 or None keeps finished instances forever."""
    app = app or (current_app if has_app_context() else None)
    days = app.config.get("RETENTION_DAYS", DEFAULT_DAYS) if app is not None else DEFAULT_DAYS
    return int(days) if days else None


@dataclass(frozen=True)
class Rule:
    process_key: str | None  # None: every process without a policy of its own
    days: int | None


def rules(session: Session, default: int | None) -> list[Rule]:
    """Each process policy, then the default rule for every other process."""
    rows = session.execute(
        select(Process.key, RetentionPolicy.days).join(
            RetentionPolicy, RetentionPolicy.process_id == Process.id
        )
    ).all()
    return [*(Rule(key, days) for key, days in rows), Rule(None, default)]


def _expired(all_rules: Iterable[Rule], now: datetime) -> ColumnElement[bool]:
    all_rules = list(all_rules)
    named = [rule.process_key for rule in all_rules if rule.process_key is not None]
    clauses = []
    for rule in all_rules:
        if rule.days is None:
            continue
        old = Instance.ended_at < now - timedelta(days=rule.days)
        if rule.process_key is None:
            clauses.append(and_(old, Instance.process_key.not_in(named)) if named else old)
        else:
            clauses.append(and_(old, Instance.process_key == rule.process_key))
    if not clauses:
        return false()
    return and_(Instance.status.in_(FINISHED_INSTANCE), or_(*clauses))


def _family(roots: Select | list[int]) -> Any:
    """A recursive CTE (root, id, status, process_key): each instance of `roots` (ids) and every
    instance its call activities started, down the whole chain."""
    tree = (
        select(
            Instance.id.label("root"),
            Instance.id.label("id"),
            Instance.status.label("status"),
            Instance.process_key.label("process_key"),
        )
        .where(Instance.id.in_(roots))
        .cte("family", recursive=True)
    )
    child = aliased(Instance)
    return tree.union_all(
        select(tree.c.root, child.id, child.status, child.process_key).join(
            child, child.parent_id == tree.c.id
        )
    )


def _deletable(family: Any) -> Select:
    """Rows of `family` whose whole tree has finished (a running or failed child keeps its
    caller, and so the whole family)."""
    unfinished = select(family.c.root).where(family.c.status.not_in(FINISHED_INSTANCE))
    return select(family.c.root, family.c.id, family.c.process_key).where(
        family.c.root.not_in(unfinished)
    )


def _roots(condition: ColumnElement[bool]) -> Select:
    """Expired instances that no call activity started: the heads of what retention deletes.
    A called child is never a head: it goes with its caller, and stays while its caller stays."""
    return select(Instance.id).where(condition, Instance.parent_id.is_(None))


def preview(session: Session, now: datetime | None = None) -> dict[str, int]:
    """How many finished instances the next run would delete, per process (called children
    counted under their own process, with their callers)."""
    condition = _expired(rules(session, default_days()), now or utcnow())
    doomed = _deletable(_family(_roots(condition))).subquery()
    rows = session.execute(
        select(doomed.c.process_key, func.count()).group_by(doomed.c.process_key)
    )
    return dict(sorted(rows.all()))


def run_retention(session: Session, now: datetime | None = None, *, batch: int = BATCH) -> int:
    """Delete expired finished instances, each with the children its calls started, and
    everything they own; returns how many instances went.

    Each batch (of `batch` callers and their children) is its own transaction, so a long run
    never holds the write lock for long. A caller whose child has not finished waits for it.
    """
    now = now or utcnow()
    condition = _expired(rules(session, default_days()), now)
    session.rollback()
    deleted = 0
    after = 0
    while True:
        begin_write(session)
        query = _roots(condition).where(Instance.id > after).order_by(Instance.id).limit(batch)
        if not is_sqlite(session):
            query = query.with_for_update(skip_locked=True)
        roots = list(session.scalars(query))
        if not roots:
            session.rollback()
            break
        after = roots[-1]
        family = _deletable(_family(roots)).subquery()
        ids = sorted(set(session.scalars(select(family.c.id))))
        if ids:
            _delete(session, ids)
        session.commit()
        deleted += len(ids)
    if deleted:
        log.info("retention deleted %d finished instance(s)", deleted)
    _delete_broadcasts(session, now)
    return deleted


def _delete_broadcasts(session: Session, now: datetime) -> None:
    """Finished signal broadcasts go after RETENTION_DAYS too, with their batches and receipts."""
    days = default_days()
    if not days:
        return
    begin_write(session)
    session.execute(
        delete(SignalBroadcast).where(
            SignalBroadcast.status == BroadcastStatus.DONE,
            SignalBroadcast.finished_at < now - timedelta(days=days),
        )
    )
    session.commit()


def _delete(session: Session, ids: list[int]) -> None:
    for chunk in range(0, len(ids), DELETE_CHUNK):
        part = ids[chunk : chunk + DELETE_CHUNK]
        session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.instance_id.in_(part))
            .values(instance_id=None)
        )
        for model in CHILDREN:
            session.execute(delete(model).where(model.instance_id.in_(part)))
    # Callers and children go in one statement, so no child outlives its caller for a moment.
    session.execute(delete(Instance).where(Instance.id.in_(ids)))


def retention_tick(app: Flask, *, interval: float | None = None) -> int | None:
    """Run retention at most once per RETENTION_INTERVAL seconds across all workers.

    For the worker's sweep loop: a Redis key paces it; errors are logged, never raised.
    """
    seconds = interval or float(app.config.get("RETENTION_INTERVAL", 3600))
    key = f"flowdesk:retention:{app.config['RQ_QUEUE']}"
    try:
        if not redis_connection(app).set(key, "1", nx=True, px=max(1000, int(seconds * 1000))):
            return None
    except RedisError as error:
        log.warning("retention skipped, Redis unavailable: %s", error)
        return None
    with app.app_context():
        try:
            return run_retention(db_session())
        except Exception as error:  # the next run tries again
            if is_unavailable(error):
                log.warning("retention skipped, the database is unavailable: %s", error)
                return None
            log.exception("retention failed")
            db.session.rollback()
            return None
        finally:
            db.session.remove()


# --- policies ---------------------------------------------------------------------------------


def policies() -> dict[int, RetentionPolicy]:
    return {p.process_id: p for p in db.session.scalars(select(RetentionPolicy))}


DAYS_MESSAGE = (
    f"Use a number of days (1-{MAX_DAYS}), 0 or 'never' to keep them forever,"
    " or leave empty for the default."
)


def parse_days(text: str) -> tuple[bool, int | None]:
    """(has a policy, days) from the form: "" = use the default; "never" or 0 = keep forever,
    as RETENTION_DAYS=0 does."""
    text = (text or "").strip().lower()
    if text == "":
        return False, None
    if text in ("never", "forever"):
        return True, None
    days = whole_number(text, 0, MAX_DAYS)
    if days is None:
        raise OperationsError("invalid", DAYS_MESSAGE, fields={"days": DAYS_MESSAGE})
    return True, days or None


def set_policy(user: User, process: Process, text: str) -> RetentionPolicy | None:
    """Give `process` its own retention (or remove it); needs instances.manage for it."""
    if not can(user, "instances.manage", process.partition_id):
        raise OperationsError("not_found", f"There is no process '{process.key}'.", status=404)
    has_policy, days = parse_days(text)
    policy = db.session.scalar(
        select(RetentionPolicy).where(RetentionPolicy.process_id == process.id)
    )
    if not has_policy:
        if policy is not None:
            db.session.delete(policy)
        db.session.commit()
        return None
    if policy is None:
        policy = RetentionPolicy(process_id=process.id)
        db.session.add(policy)
    policy.days = days
    policy.updated_by_id = user.id
    policy.updated_at = utcnow()
    db.session.commit()
    return policy


def describe(days: int | None) -> str:
    return "kept forever" if days is None else f"{days} day{'s' if days != 1 else ''}"
