"""Bulk changes (the kinds in `bulk_actions`): the selection is fixed when the operator submits,
then an RQ job works through it, one engine transaction per instance, and records each outcome.

An item is marked in the same transaction as its engine step, so a job run twice (resumed after
a worker died) never applies a step twice: under the instance lock it skips items already done.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app
from redis.exceptions import RedisError
from sqlalchemy import func, insert, select, update

from webapp.engine import EngineError
from webapp.engine.dispatch import JobRef
from webapp.engine.locking import lock_instance
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.infra.queue import get_queue
from webapp.models import BulkItem, BulkOperation, Instance, User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.models.statuses import BulkItemStatus, BulkStatus, InstanceStatus
from webapp.permissions import can
from webapp.services.jobs import commit
from webapp.services.operations.bulk_actions import ACTIONS, BulkAction
from webapp.services.operations.common import OperationsError, visible
from webapp.services.operations.filters import Filters, matching_ids

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 10_000
MAX_REASON = 500
BATCH = 20
ENTRY_POINT = "webapp.services.operations.bulk.run"


def limit() -> int:
    return int(current_app.config.get("BULK_LIMIT", DEFAULT_LIMIT))


def selection(
    user: User,
    action: str,
    *,
    reason: str = "",
    ids: list[int] | None = None,
    filters: Filters | None = None,
) -> list[int]:
    """The instance ids a bulk action would take now (ids, or everything matching `filters`);
    OperationsError naming each field that needs fixing. For the confirmation and `create`."""
    fields: dict[str, str] = {}
    kind = ACTIONS.get(action)
    if kind is None:
        *others, last = sorted(ACTIONS)
        fields["action"] = f"Choose {', '.join(others)} or {last}."
    reason = (reason or "").strip()
    if kind is not None and kind.reason_required and not reason:
        fields["reason"] = kind.reason_required
    if len(reason) > MAX_REASON:
        fields["reason"] = f"Use at most {MAX_REASON} characters."
    if not can(user, kind.permission if kind else "instances.manage", scoped=False):
        raise OperationsError("forbidden", "You may not change instances.", status=403)
    most = limit()
    if filters is not None:
        selected = matching_ids(user, filters, most)
    else:
        wanted = sorted(set(ids or []))[: most + 1]
        query = select(Instance.id).where(Instance.id.in_(wanted), visible(user))
        selected = list(db.session.scalars(query.order_by(Instance.id))) if wanted else []
    if not selected:
        fields["selection"] = "Select at least one instance (or all matching the filter)."
    elif len(selected) > most:
        fields["selection"] = f"At most {most:,} instances at once; narrow the filter."
    if fields:
        raise OperationsError("invalid", "The bulk action needs fixing.", fields=fields)
    return selected


def create(
    user: User,
    action: str,
    *,
    reason: str = "",
    ids: list[int] | None = None,
    filters: Filters | None = None,
    params: dict[str, Any] | None = None,
) -> BulkOperation:
    """Fix the selection (ids, or everything matching `filters` now) and store the operation;
    `params` are the action's own settings, checked by the caller."""
    selected = selection(user, action, reason=reason, ids=ids, filters=filters)
    reason = (reason or "").strip()
    now = utcnow()
    scope = filters.describe() if filters is not None else f"{len(selected)} selected"
    operation = BulkOperation(
        action=action,
        reason=reason,
        scope=scope[:500],
        status=BulkStatus.QUEUED,
        total=len(selected),
        actor_id=user.id,
        created_at=now,
        params=params,
    )
    db.session.add(operation)
    db.session.flush()
    item = {"operation_id": operation.id, "status": BulkItemStatus.PENDING, "message": ""}
    db.session.execute(insert(BulkItem), [{**item, "instance_id": i} for i in selected])
    db.session.commit()
    return operation


def enqueue(operation: BulkOperation) -> bool:
    """Hand the operation to a worker; False (logged) when Redis cannot be reached."""
    try:
        get_queue().enqueue_call(
            ENTRY_POINT,
            args=(operation.id,),
            job_id=f"flowdesk-bulk-{operation.id}",
            timeout=-1,
            result_ttl=24 * 3600,
            failure_ttl=7 * 24 * 3600,
            description=f"flowdesk bulk {operation.action} {operation.id}",
        )
    except (RedisError, OSError) as error:
        log.warning("bulk operation %s not enqueued: %s", operation.id, error)
        return False
    return True


def get_operation(user: User, operation_id: int) -> BulkOperation:
    """The operation if `user` started it (admins see all); 404 otherwise."""
    operation = db.session.get(BulkOperation, operation_id)
    if operation is None or not (operation.actor_id == user.id or "admin" in user.permissions):
        message = f"There is no bulk operation {operation_id}."
        raise OperationsError("not_found", message, status=404)
    return operation


def counts(operation: BulkOperation) -> dict[str, int]:
    rows = db.session.execute(
        select(BulkItem.status, func.count())
        .where(BulkItem.operation_id == operation.id)
        .group_by(BulkItem.status)
    )
    found: dict[str, int] = {**dict.fromkeys(BulkItemStatus, 0), **dict(rows.all())}
    found["done"] = found[BulkItemStatus.OK] + found[BulkItemStatus.ERROR]
    return found


def items(operation: BulkOperation, *, size: int = 200) -> list[BulkItem]:
    """The report rows: failures first, then the rest in instance order."""
    order = [BulkItem.status != BulkItemStatus.ERROR]
    return list(
        db.session.scalars(
            select(BulkItem)
            .where(BulkItem.operation_id == operation.id)
            .order_by(*order, BulkItem.instance_id)
            .limit(size)
        )
    )


# --- the worker side --------------------------------------------------------------------------


def run(operation_id: int) -> dict[str, Any]:
    """RQ entry point: process the pending items in small batches; returns the counts."""
    session = db_session()
    begin_write(session)
    operation = session.get(BulkOperation, operation_id)
    if operation is None:
        session.rollback()
        return {"missing": operation_id}
    operation.status = BulkStatus.RUNNING
    operation.started_at = operation.started_at or utcnow()
    actor_id, action, reason = operation.actor_id, ACTIONS[operation.action], operation.reason
    params = dict(operation.params or {})
    session.commit()
    actor = session.get(User, actor_id) if actor_id is not None else None
    while True:
        batch = session.execute(
            select(BulkItem.id, BulkItem.instance_id)
            .where(BulkItem.operation_id == operation_id, BulkItem.status == BulkItemStatus.PENDING)
            .order_by(BulkItem.id)
            .limit(BATCH)
        ).all()
        session.rollback()
        if not batch:
            break
        for item_id, instance_id in batch:
            _process(action, reason, params, actor, item_id, instance_id, operation_id)
    begin_write(session)
    session.execute(
        update(BulkOperation)
        .where(BulkOperation.id == operation_id)
        .values(status=BulkStatus.DONE, finished_at=utcnow())
    )
    session.commit()
    return counts(session.get_one(BulkOperation, operation_id))


def _process(
    action: BulkAction,
    reason: str,
    params: dict[str, Any],
    actor: User | None,
    item_id: int,
    instance_id: int,
    operation_id: int,
) -> None:
    session = db_session()
    try:
        instance = lock_instance(session, instance_id)
        item = session.get(BulkItem, item_id, populate_existing=True)
        if item is None or item.status != BulkItemStatus.PENDING:
            session.rollback()
            return
        if actor is None or not can(actor, action.permission, instance.partition_id):
            raise EngineError("forbidden", "You may no longer change this instance.", status=403)
        if action.name == "cancel" and _cancelled_with_caller(instance, operation_id):
            item.status = BulkItemStatus.OK
            item.message = f"Cancelled with its calling instance {instance.parent_id}."
            item.updated_at = utcnow()
            session.commit()
            return
        result = action.apply(session, instance, reason, actor, params)
        item.status = BulkItemStatus.OK
        item.message = (result.note or f"Now {result.instance.status}.") + _children_note(
            result.jobs
        )
        item.updated_at = utcnow()
        commit(result)
    except EngineError as error:
        session.rollback()
        _mark_error(item_id, error.message)
    except Exception as error:
        session.rollback()
        log.exception("bulk item %s (instance %s) failed", item_id, instance_id)
        _mark_error(item_id, f"Unexpected error: {type(error).__name__}.")


def _cancelled_with_caller(instance: Instance, operation_id: int) -> bool:
    """A called child whose caller this operation cancelled: the caller's cancel already handed
    it a cancel job, so it ends the same way whether or not that job has run yet."""
    if instance.parent_id is None or instance.status == InstanceStatus.COMPLETED:
        return False
    caller_done = db.session.scalar(
        select(BulkItem.id).where(
            BulkItem.operation_id == operation_id,
            BulkItem.instance_id == instance.parent_id,
            BulkItem.status == BulkItemStatus.OK,
        )
    )
    return caller_done is not None


def _children_note(jobs: list[JobRef]) -> str:
    """Cancelling a caller hands each running child a cancel job: say which ones."""
    children = sorted({job.instance_id for job in jobs if job.entry == "cancel"})
    if not children:
        return ""
    shown = ", ".join(str(child) for child in children[:10])
    more = f" and {len(children) - 10} more" if len(children) > 10 else ""
    plural = "s" if len(children) > 1 else ""
    return f" Its called instance{plural} {shown}{more} {'are' if plural else 'is'} cancelled too."


def _mark_error(item_id: int, message: str) -> None:
    session = db_session()
    begin_write(session)
    session.execute(
        update(BulkItem)
        .where(BulkItem.id == item_id, BulkItem.status == BulkItemStatus.PENDING)
        .values(status=BulkItemStatus.ERROR, message=message[:500], updated_at=utcnow())
    )
    session.commit()
