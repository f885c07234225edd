"""Suspend and resume instances and process versions, permission-checked (`instances.modify`
in the object's partition), each change one engine step committed before its jobs are sent.

A suspended version starts nothing (webapp/engine/suspended_versions.py); suspending it can also
suspend its running instances, through a bulk operation with progress (bulk_actions "suspend").
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from webapp.engine import held, suspension
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import Instance, Process, ProcessVersion, User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.models.statuses import UNFINISHED_INSTANCE
from webapp.permissions import can
from webapp.services.instances import get_instance, invalid, run_step
from webapp.services.jobs import commit
from webapp.services.operations import bulk
from webapp.services.operations.common import OperationsError

PERMISSION = "instances.modify"
MAX_REASON = 500


def clean_reason(value: Any, *, required: bool, what: str = "suspended") -> str:
    """The reason as typed (trimmed); 422 naming `reason` when missing, not text or too long."""
    if value is not None and not isinstance(value, str):
        raise invalid({"reason": "The reason must be text."})
    reason = (value or "").strip()
    if required and not reason:
        raise invalid({"reason": f"Say why it is {what}."})
    if len(reason) > MAX_REASON:
        raise invalid({"reason": f"Use at most {MAX_REASON} characters."})
    return reason


def may_modify(user: User, partition_id: int | None) -> bool:
    return can(user, PERMISSION, partition_id)


def _modifiable(user: User, instance_id: int) -> Instance:
    """The instance if the user may see it (else 404) and modify it (else 403)."""
    begin_write(db_session())
    instance = get_instance(user, instance_id)
    if not may_modify(user, instance.partition_id):
        raise OperationsError(
            "forbidden", "You may not suspend or resume this instance.", status=403
        )
    return instance


def suspend(user: User, instance_id: int, reason: Any) -> Instance:
    """Suspend one instance with a reason: nothing of it moves until it is resumed."""
    reason = clean_reason(reason, required=True)
    _modifiable(user, instance_id)
    result = run_step(
        lambda: suspension.suspend_instance(db_session(), instance_id, reason=reason, actor=user)
    )
    commit(result)
    return db.session.get_one(Instance, instance_id)


def resume(user: User, instance_id: int, reason: Any = "") -> Instance:
    """Resume one instance: what waited is applied in order, its jobs are sent."""
    reason = clean_reason(reason, required=False)
    _modifiable(user, instance_id)
    result = run_step(
        lambda: suspension.resume_instance(db_session(), instance_id, reason=reason, actor=user)
    )
    commit(result)
    return db.session.get_one(Instance, instance_id)


# --- versions ---------------------------------------------------------------------------------


def get_version(user: User, key: str, number: int) -> ProcessVersion:
    """The version if the user holds `instances.modify` in its process's partition; 404 else."""
    version = db.session.scalar(
        select(ProcessVersion)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == key, ProcessVersion.number == number)
    )
    if version is None or not may_modify(user, version.process.partition_id):
        raise OperationsError(
            "not_found",
            f"There is no version {number} of process '{key}' you may suspend or resume.",
            status=404,
        )
    return version


def running_ids(user: User, version: ProcessVersion, *, suspended: bool) -> list[int]:
    """The unfinished instances of `version` the user may modify that are (not) suspended."""
    state = Instance.suspended_at.is_not(None) if suspended else Instance.suspended_at.is_(None)
    ids = db.session.execute(
        select(Instance.id, Instance.partition_id)
        .where(
            Instance.version_id == version.id,
            Instance.status.in_(UNFINISHED_INSTANCE),
            state,
        )
        .order_by(Instance.id)
    ).all()
    return [row.id for row in ids if may_modify(user, row.partition_id)]


def suspend_version(
    user: User, key: str, number: int, reason: Any, *, instances: bool = False
) -> tuple[ProcessVersion, int | None]:
    """Suspend a version (no new starts); with `instances`, its running instances too, by a
    bulk operation (its id is returned; None when none was needed)."""
    reason = clean_reason(reason, required=True)
    begin_write(db_session())
    version = get_version(user, key, number)
    if version.suspended_at is not None:
        raise OperationsError(
            "suspended", f"Version {number} of process '{key}' is suspended already.", status=409
        )
    version.suspended_at = utcnow()
    version.suspended_by_id = user.id
    version.suspend_reason = reason
    db.session.commit()
    selected = running_ids(user, version, suspended=False) if instances else []
    return version, _bulk(user, "suspend", reason, selected)


def resume_version(
    user: User, key: str, number: int, reason: Any = "", *, instances: bool = False
) -> tuple[ProcessVersion, int | None]:
    """Resume a version (starts allowed again); with `instances`, its suspended instances too."""
    reason = clean_reason(reason, required=False)
    begin_write(db_session())
    version = get_version(user, key, number)
    if version.suspended_at is None:
        raise OperationsError(
            "not_suspended", f"Version {number} of process '{key}' is not suspended.", status=409
        )
    version.suspended_at = None
    version.suspended_by_id = None
    version.suspend_reason = None
    db.session.commit()
    selected = running_ids(user, version, suspended=True) if instances else []
    return version, _bulk(user, "resume", reason, selected)


def _bulk(user: User, action: str, reason: str, ids: list[int]) -> int | None:
    if not ids:
        return None
    operation = bulk.create(user, action, reason=reason, ids=ids)
    bulk.enqueue(operation)
    return operation.id


def version_dict(version: ProcessVersion) -> dict[str, Any]:
    """The JSON shape of a version's suspension."""
    return {
        "process_key": version.process.key,
        "version": version.number,
        "suspended": version.suspended_at is not None,
        "suspended_at": version.suspended_at.isoformat() if version.suspended_at else None,
        "suspended_by": version.suspended_by.username if version.suspended_by else None,
        "reason": version.suspend_reason,
    }


# --- what the pages show ----------------------------------------------------------------------


def held_count(instance_id: int) -> int:
    """How many messages, signals and tool results wait for a suspended instance."""
    return held.count(db.session.connection(), instance_id)


def process_versions(user: User, key: str) -> tuple[Process, list[dict[str, Any]]]:
    """A process's versions, newest first, each with its unfinished and suspended instance
    counts; 404 unless the user holds `instances.modify` in its partition."""
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None or not may_modify(user, process.partition_id):
        raise OperationsError(
            "not_found", f"There is no process '{key}' you may suspend or resume.", status=404
        )
    unfinished = Instance.status.in_(UNFINISHED_INSTANCE)
    counts = {
        row.version_id: row
        for row in db.session.execute(
            select(
                Instance.version_id,
                func.count().label("running"),
                func.count(Instance.suspended_at).label("suspended"),
            )
            .join(ProcessVersion, ProcessVersion.id == Instance.version_id)
            .where(ProcessVersion.process_id == process.id, unfinished)
            .group_by(Instance.version_id)
        )
    }
    versions = db.session.scalars(
        select(ProcessVersion)
        .where(ProcessVersion.process_id == process.id)
        .order_by(ProcessVersion.number.desc())
    )
    return process, [
        {
            "version": version,
            "running": counts[version.id].running if version.id in counts else 0,
            "suspended": counts[version.id].suspended if version.id in counts else 0,
        }
        for version in versions
    ]
