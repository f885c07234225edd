"""Instances for the web and the API: start, cancel, retry and lists, permission-checked.

Every change is one engine step: the service checks permissions and input, runs the step, commits,
and only then enqueues the jobs the step wrote (`services.jobs.commit`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from sqlalchemy import Select, false, func, select, update
from sqlalchemy.exc import IntegrityError

from webapp.engine import EngineError, definitions, steps
from webapp.engine.suspended_versions import check_startable
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.inputs import MAX_INT32
from webapp.models import Instance, Partition, Process, ProcessVersion, Task, Token, User
from webapp.models.session import db_session
from webapp.models.statuses import INSTANCE_STATUSES, OPEN_TOKEN, TaskStatus
from webapp.permissions import can, partition_filter, visible_partition_ids
from webapp.process import document, forms
from webapp.services.jobs import commit

R = TypeVar("R")

MAX_BUSINESS_KEY = 200
MAX_REASON = 500
# The `suspended` filter of the instance list: true for suspended instances, false for the others.
SUSPENDED_FILTER = {"true": True, "1": True, "false": False, "0": False}
IDEMPOTENCY_HEADER = "Idempotency-Key"
# An idempotency key or message id: 1-255 visible ASCII characters (a UUID, say).
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x7e]{1,255}")


class InstanceError(Exception):
    """A refused request: a stable code, a message, the HTTP status and per-field messages."""

    def __init__(
        self, code: str, message: str, *, status: int = 422, fields: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        self.fields = fields or {}


def invalid(fields: dict[str, str]) -> InstanceError:
    names = ", ".join(sorted(fields))
    return InstanceError("invalid", f"Some values need fixing: {names}.", fields=fields)


# --- idempotency keys -------------------------------------------------------------------------


def clean_idempotency_key(value: Any, name: str = IDEMPOTENCY_HEADER) -> str | None:
    """The key as sent, or None when none was sent; 400 naming `name` when it is malformed."""
    if value is None:
        return None
    if not isinstance(value, str) or not _IDEMPOTENCY_KEY.fullmatch(value):
        raise InstanceError(
            "invalid_idempotency_key",
            f"{name} must be 1-255 visible ASCII characters (such as a UUID).",
            status=400,
            fields={name: "Use 1-255 visible ASCII characters: letters, digits, punctuation."},
        )
    return value


def request_digest(data: Any) -> str:
    """A digest of a request body, to tell a retry from another request under the same key."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def reused(name: str, what: str) -> InstanceError:
    return InstanceError(
        "idempotency_key_reused",
        f"This {name} was already used for a different {what}; use a new {name} for it.",
        fields={name: f"Already used for a different {what}."},
    )


def _started_with(user: User, key: str, digest: str) -> Instance | None:
    """The instance `user` started with this Idempotency-Key; 422 if that was another request,
    409 if the user may no longer see that instance (its id is not given away)."""
    instance = db.session.scalar(
        select(Instance).where(Instance.started_by_id == user.id, Instance.idempotency_key == key)
    )
    if instance is None:
        return None
    if instance.request_hash != digest:
        raise reused(IDEMPOTENCY_HEADER, "request (process or body)")
    visible = visible_partition_ids(user)
    if visible is not None and instance.partition_id not in (visible | {None}):
        raise InstanceError(
            "idempotency_key_unavailable",
            f"This {IDEMPOTENCY_HEADER} started an instance you may no longer see; use a new key.",
            status=409,
            fields={IDEMPOTENCY_HEADER: "Used for an instance outside your partitions."},
        )
    return instance


# --- processes a user may start ---------------------------------------------------------------


def _latest_versions() -> Select:
    latest = (
        select(ProcessVersion.process_id, func.max(ProcessVersion.number).label("number"))
        .group_by(ProcessVersion.process_id)
        .subquery()
    )
    return (
        select(Process, ProcessVersion)
        .join(latest, latest.c.process_id == Process.id)
        .join(
            ProcessVersion,
            (ProcessVersion.process_id == Process.id) & (ProcessVersion.number == latest.c.number),
        )
    )


def startable_processes(user: User) -> list[tuple[Process, ProcessVersion]]:
    """Published processes (with their latest version) the user may start, by name."""
    if not can(user, "instances.start", scoped=False):
        return []
    query = _latest_versions().where(partition_filter(Process.partition_id, user))
    rows = db.session.execute(query.order_by(Process.name, Process.key))
    return [(process, version) for process, version in rows if starts_by_hand(version)]


NO_HAND_START = (
    "{name} has no plain start event: only its message, timer or signal start events start it."
)


def starts_by_hand(version: ProcessVersion) -> bool:
    """Whether a person or the API may start `version` (it has a plain start event)."""
    return document.plain_start(version.document) is not None


def find_version(user: User, key: str, number: int | None = None) -> ProcessVersion:
    """The version to start (latest unless `number`); 404 when unknown or not the user's."""
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None or not can(user, "instances.start", process.partition_id):
        raise InstanceError("not_found", f"There is no process '{key}' you may start.", status=404)
    query = select(ProcessVersion).where(ProcessVersion.process_id == process.id)
    if number is None:
        query = query.order_by(ProcessVersion.number.desc()).limit(1)
    else:
        query = query.where(ProcessVersion.number == number)
    version = db.session.scalar(query)
    if version is None:
        what = f"version {number}" if number is not None else "a published version"
        raise InstanceError("not_found", f"Process '{key}' has no {what}.", status=404)
    return version


def start_form(version: ProcessVersion) -> dict[str, Any] | None:
    """The start event's form spec, if it has one with fields."""
    node = document.plain_start(version.document)
    form = (node.get("config") or {}).get("form") if node else None
    return form if form and list(forms.iter_fields(form)) else None


# --- starting ---------------------------------------------------------------------------------


def as_submission(data: Mapping[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """JSON values as the strings a form would send, so API and form share one validation."""
    return forms.as_submission(data, spec)


def check_input(version: ProcessVersion, data: Mapping[str, Any]) -> dict[str, Any]:
    """Validate `data` against the start form (if any); the form's fields come back coerced."""
    spec = start_form(version)
    if spec is None:
        return dict(data)
    values, errors = forms.coerce_submission(spec, as_submission(data, spec))
    if errors:
        raise invalid({f"input.{key}": message for key, message in errors.items()})
    return {**data, **values}


def _partition_for(user: User, process: Process, key: Any) -> int | None:
    if key in (None, ""):
        return process.partition_id
    if process.partition_id is not None:
        if process.partition is None or key != process.partition.key:
            name = process.partition.key if process.partition else process.partition_id
            raise invalid({"partition": f"Process '{process.key}' runs in partition '{name}'."})
        return process.partition_id
    partition_id = None
    if isinstance(key, str):
        partition_id = db.session.scalar(select(Partition.id).where(Partition.key == key))
    if partition_id is None or not can(user, "instances.start", partition_id):
        raise invalid({"partition": "Unknown partition, or not one you may start in."})
    return partition_id


def clean_business_key(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid({"business_key": "The business key must be text."})
    value = value.strip()
    if len(value) > MAX_BUSINESS_KEY:
        raise invalid({"business_key": f"Use at most {MAX_BUSINESS_KEY} characters."})
    return value or None


def start(
    user: User,
    version: ProcessVersion,
    *,
    input: Mapping[str, Any],
    business_key: str | None = None,
    partition: Any = None,
    via: str = "api",
    idempotency: tuple[str, str] | None = None,
) -> Instance:
    """Start an instance of `version` with checked input; commits, then enqueues its jobs.

    `idempotency` (key, request digest) is stored on the instance in the same transaction; the
    unique (starter, key) index makes a concurrent start with the same key fail (IntegrityError).
    """
    begin_write(db_session())
    partition_id = _partition_for(user, version.process, partition)
    run_step(lambda: check_startable(version))
    result = run_step(
        lambda: steps.start_instance(
            db_session(),
            definitions.for_version(version),
            input=dict(input),
            business_key=business_key,
            partition_id=partition_id,
            actor=user,
            via=via,
        )
    )
    if idempotency is not None:
        key, digest = idempotency
        db.session.execute(
            update(Instance)
            .where(Instance.id == result.instance.id)
            .values(idempotency_key=key, request_hash=digest)
        )
    commit(result)
    return db.session.get_one(Instance, result.instance.id)


def start_from_request(
    user: User,
    payload: Mapping[str, Any],
    *,
    via: str = "api",
    idempotency_key: str | None = None,
) -> tuple[Instance, bool]:
    """The API's start: checks every field of the JSON body, naming the wrong ones. Returns the
    instance and whether it was created now: with an Idempotency-Key already used by this user
    for the same request, the instance started then comes back instead of a new one."""
    retry_key = clean_idempotency_key(idempotency_key)
    digest = request_digest(payload) if retry_key else ""
    if retry_key:
        begin_write(db_session())
        earlier = _started_with(user, retry_key, digest)
        if earlier is not None:
            return earlier, False
    fields: dict[str, str] = {}
    key = payload.get("process_key")
    if not isinstance(key, str) or not key.strip():
        fields["process_key"] = "Give the key of a published process."
    number = payload.get("version")
    if number is not None and (
        isinstance(number, bool) or not isinstance(number, int) or not 0 < number <= MAX_INT32
    ):
        fields["version"] = "The version must be a whole number such as 3."
    data = payload.get("input", {})
    if data is None:
        data = {}
    if not isinstance(data, dict):
        fields["input"] = "The input must be a JSON object."
    partition = payload.get("partition")
    if partition is not None and not isinstance(partition, str):
        fields["partition"] = "The partition must be a partition key."
    unknown = sorted(
        set(payload) - {"process_key", "version", "input", "business_key", "partition"}
    )
    for name in unknown:
        fields[name] = "Unknown field."
    if fields:
        raise invalid(fields)
    business_key = clean_business_key(payload.get("business_key"))
    version = find_version(user, str(key).strip(), number)
    try:
        instance = start(
            user,
            version,
            input=check_input(version, data),
            business_key=business_key,
            partition=partition,
            via=via,
            idempotency=(retry_key, digest) if retry_key else None,
        )
    except IntegrityError:
        # A concurrent request with the same key committed first: answer with its instance.
        db.session.rollback()
        winner = _started_with(user, retry_key, digest) if retry_key else None
        if winner is None:
            raise
        return winner, False
    return instance, True


# --- reading ----------------------------------------------------------------------------------


def _visible(user: User) -> Any:
    """Instances the user may read: by partition with instances.read, else those they started."""
    if can(user, "instances.read", scoped=False):
        return partition_filter(Instance.partition_id, user)
    return Instance.started_by_id == user.id


def may_see(user: User, instance: Instance) -> bool:
    """Whether `get_instance` gives `user` this instance (the rule of `_visible`), so a page
    links only to instances that open."""
    if can(user, "instances.read", scoped=False):
        return can(user, "instances.read", instance.partition_id)
    return instance.started_by_id == user.id


def get_instance(user: User, instance_id: int) -> Instance:
    instance = db.session.scalar(select(Instance).where(Instance.id == instance_id, _visible(user)))
    if instance is None:
        raise InstanceError(
            "not_found", f"There is no instance {instance_id} you may see.", status=404
        )
    return instance


def list_query(user: User, filters: Mapping[str, Any]) -> Select:
    """Instances the user may read, newest first, narrowed by process, status, business key,
    partition and whether they are suspended."""
    fields: dict[str, str] = {}
    query = select(Instance).where(_visible(user))
    status = filters.get("status")
    if status:
        if status not in INSTANCE_STATUSES:
            fields["status"] = f"Use one of {', '.join(INSTANCE_STATUSES)}."
        query = query.where(Instance.status == status)
    if filters.get("process"):
        query = query.where(Instance.process_key == filters["process"])
    if filters.get("business_key"):
        query = query.where(Instance.business_key == filters["business_key"])
    if filters.get("partition"):
        partition_id = db.session.scalar(
            select(Partition.id).where(Partition.key == filters["partition"])
        )
        query = query.where(Instance.partition_id == partition_id if partition_id else false())
    suspended = filters.get("suspended")
    if suspended:
        if suspended not in SUSPENDED_FILTER:
            fields["suspended"] = "Use true for suspended instances, false for the others."
        elif SUSPENDED_FILTER[suspended]:
            query = query.where(Instance.suspended_at.is_not(None))
        else:
            query = query.where(Instance.suspended_at.is_(None))
    if fields:
        raise invalid(fields)
    return query.order_by(Instance.id.desc())


# --- operating --------------------------------------------------------------------------------


def _manageable(user: User, instance_id: int) -> Instance:
    begin_write(db_session())
    instance = get_instance(user, instance_id)
    if not can(user, "instances.manage", instance.partition_id):
        raise InstanceError("forbidden", "You may not change running instances.", status=403)
    return instance


def cancel(user: User, instance_id: int, reason: Any = "") -> Instance:
    if reason is not None and not isinstance(reason, str):
        raise invalid({"reason": "The reason must be text."})
    reason = (reason or "").strip()
    if len(reason) > MAX_REASON:
        raise invalid({"reason": f"Use at most {MAX_REASON} characters."})
    _manageable(user, instance_id)
    result = run_step(
        lambda: steps.cancel_instance(db_session(), instance_id, reason=reason, actor=user)
    )
    commit(result)
    return db.session.get_one(Instance, instance_id)


def retry(user: User, instance_id: int) -> Instance:
    _manageable(user, instance_id)
    result = run_step(lambda: steps.retry_instance(db_session(), instance_id, actor=user))
    commit(result)
    return db.session.get_one(Instance, instance_id)


def run_step(step: Callable[[], R]) -> R:
    """Run an engine step; an engine refusal rolls back and becomes an InstanceError."""
    try:
        return step()
    except EngineError as error:
        db.session.rollback()
        raise InstanceError(error.code, error.message, status=error.status) from None


# --- presenting -------------------------------------------------------------------------------


def _iso(value) -> str | None:
    return value.isoformat() if value is not None else None


def as_dict(instance: Instance, *, detail: bool = False) -> dict[str, Any]:
    """The JSON shape of an instance; `detail` adds data, current nodes and open tasks."""
    data: dict[str, Any] = {
        "id": instance.id,
        "process_key": instance.process_key,
        "version": instance.version,
        "status": instance.status,
        "business_key": instance.business_key,
        "partition": instance.partition.key if instance.partition else None,
        "started_via": instance.started_via,
        "started_by": instance.started_by.username if instance.started_by else None,
        "error": instance.error,
        "created_at": _iso(instance.created_at),
        "updated_at": _iso(instance.updated_at),
        "ended_at": _iso(instance.ended_at),
        "called_by": (
            {"instance": instance.parent_id, "node": instance.parent_node_id}
            if instance.parent_id is not None
            else None
        ),
        "suspended": _suspension(instance),
    }
    if detail:
        data["input"] = instance.input
        data["vars"] = instance.vars
        data["nodes"] = instance.nodes
        data["tokens"] = [
            {"id": t.id, "node": t.node_id, "status": t.status, "scope": t.parent_id}
            for t in current_tokens(instance)
        ]
        data["tasks"] = [_task_dict(task) for task in open_tasks(instance)]
    return data


def _suspension(instance: Instance) -> dict[str, Any] | None:
    """Who suspended the instance, when and why; None when it is not suspended."""
    if instance.suspended_at is None:
        return None
    return {
        "at": _iso(instance.suspended_at),
        "by": instance.suspended_by.username if instance.suspended_by else None,
        "reason": instance.suspend_reason,
    }


def _task_dict(task) -> dict[str, Any]:
    return {
        "id": task.id,
        "node": task.node_id,
        "title": task.title,
        "status": task.status,
        "assignee": task.assignee.username if task.assignee else None,
        "role": task.candidate_role.name if task.candidate_role else None,
        "open_to_partition": task.open_to_partition,
        "due_at": _iso(task.due_at),
    }


def current_tokens(instance: Instance) -> list:
    return list(
        db.session.scalars(
            select(Token)
            .where(Token.instance_id == instance.id, Token.status.in_(OPEN_TOKEN))
            .order_by(Token.id)
        )
    )


def open_tasks(instance: Instance) -> list:
    return list(
        db.session.scalars(
            select(Task)
            .where(Task.instance_id == instance.id, Task.status == TaskStatus.OPEN)
            .order_by(Task.id)
        )
    )
