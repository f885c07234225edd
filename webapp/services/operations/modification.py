"""Moving tokens of a running instance for the page and the API: permission, input, the
engine's modification step, then a commit (apply) or a rollback (preview)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from webapp.engine import EngineError, definitions, modification
from webapp.extensions import db
from webapp.models import Instance, User
from webapp.models.session import db_session
from webapp.permissions import can
from webapp.services.instances import MAX_REASON, InstanceError
from webapp.services.jobs import commit
from webapp.services.operations.common import get_instance

FIELDS = {"operations", "variables", "reason", "dry_run", "stamp"}
MAX_STAMP = 64


def modifiable(user: User, instance_id: int) -> Instance:
    """The instance if `user` may move its tokens: 404 when they may not see it, 403 when they
    see it without `instances.modify` in its partition."""
    instance = get_instance(user, instance_id)
    if not can(user, "instances.modify", instance.partition_id):
        raise InstanceError(
            "forbidden", "You may not move the tokens of this instance.", status=403
        )
    return instance


def _invalid(name: str, message: str) -> InstanceError:
    return InstanceError("invalid", message, fields={name: message})


def clean_reason(value: Any, *, required: bool) -> str:
    if value is not None and not isinstance(value, str):
        raise _invalid("reason", "reason: the reason must be text.")
    reason = (value or "").strip()
    if len(reason) > MAX_REASON:
        raise _invalid("reason", f"reason: use at most {MAX_REASON} characters.")
    if required and not reason:
        raise _invalid("reason", "reason: say why the instance is changed.")
    return reason


def run(
    user: User,
    instance_id: int,
    operations: list[modification.Operation],
    variables: dict[str, Any],
    *,
    reason: str,
    dry_run: bool,
    stamp: str | None = None,
) -> dict[str, Any]:
    """Preview (`dry_run`: the step rolled back) or apply the change; the effects, with the
    stamp of the state they were decided on. Refusals are InstanceErrors naming the field."""
    modifiable(user, instance_id)
    try:
        done = modification.modify(
            db_session(),
            instance_id,
            operations,
            variables,
            reason=reason,
            actor=user.username,
            stamp=stamp,
        )
    except EngineError as error:
        db.session.rollback()
        fields = (error.details or {}).get("fields") if isinstance(error.details, dict) else None
        raise InstanceError(error.code, error.message, status=error.status, fields=fields) from None
    if dry_run:
        db.session.rollback()
        return {**done.preview, "applied": False}
    commit(done.result)
    return {**done.preview, "applied": True}


def from_body(user: User, instance_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
    """The API's request: operations, variables, reason, dry_run and stamp."""
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise InstanceError(
            "invalid",
            f"Unknown fields: {', '.join(unknown)[:200]}.",
            fields={name: "Unknown field." for name in unknown[:20]},
        )
    modifiable(user, instance_id)
    dry_run = body.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise _invalid("dry_run", "dry_run: use true or false.")
    stamp = body.get("stamp")
    if stamp is not None and (not isinstance(stamp, str) or not 0 < len(stamp) <= MAX_STAMP):
        raise _invalid("stamp", "stamp: send the stamp of the preview, as it came.")
    try:
        operations = modification.parse_operations(body.get("operations", []))
        variables = modification.parse_variables(body.get("variables"))
    except EngineError as error:
        raise InstanceError(
            error.code, error.message, status=error.status, fields=error.details["fields"]
        ) from None
    reason = clean_reason(body.get("reason"), required=not dry_run)
    return run(
        user, instance_id, operations, variables, reason=reason, dry_run=dry_run, stamp=stamp
    )


@dataclass(frozen=True)
class Choice:
    """A node a token may be moved to, as the page's select offers it."""

    node_id: str
    label: str


def choices(instance: Instance) -> list[Choice]:
    """The nodes of the instance's version a token may go to, by name, kind and scope."""
    definition = definitions.for_version(instance.process_version)
    found = []
    for node_id in modification.targets(definition):
        kind = definition.kind(node_id)
        title = definition.nodes[node_id].get("title") or ""
        label = f"{title or node_id} ({_words(kind)}"
        scope = definition.parent.get(node_id)
        if scope is not None:
            label += f", in {definition.title(scope)}"
        found.append(Choice(node_id, f"{label}; {node_id})" if title else f"{label})"))
    return found


def _words(kind: str) -> str:
    """`userTask` as "user task"."""
    spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in kind)
    return spaced.strip()
