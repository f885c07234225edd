"""Conditional start events: `POST /api/conditions` hands variables to the conditional starts of
the published processes the caller may start, and each start whose condition holds for them
starts one instance (with the variables as its `$input`), as Camunda 7's
`createConditionEvaluation().setVariables(...).evaluateStartConditions()` does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sqlalchemy import select

from webapp.engine import definitions, steps
from webapp.engine.context import jsonable
from webapp.extensions import db
from webapp.models import EventStart, Partition, Process, ProcessVersion, User
from webapp.models.session import db_session
from webapp.permissions import can
from webapp.process.expressions import ExpressionError, evaluate
from webapp.services.instances import InstanceError, invalid, run_step
from webapp.services.jobs import commit

FIELDS = {"variables", "process", "partition"}
KEYS = ("process", "partition")


class Evaluated(NamedTuple):
    """One conditional start evaluated: the instance it started, or why it could not."""

    process: str
    version: int
    node: str
    instance: int | None = None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"process": self.process, "version": self.version}
        data["node"] = self.node
        if self.instance is not None:
            data["instance"] = self.instance
        if self.error is not None:
            data["error"] = self.error
        return data


def evaluate_starts(user: User, body: Mapping[str, Any]) -> list[Evaluated]:
    """Evaluate the conditional starts of the processes `user` may start (one process, one
    partition when the body names them); start one instance for each condition that holds.
    Starts whose version is suspended are skipped; a condition that fails is answered with its
    error and starts nothing."""
    variables, key, partition_id = _request(user, body)
    query = (
        select(EventStart, Process)
        .join(Process, Process.id == EventStart.process_id)
        .where(EventStart.event == "conditional")
        .order_by(Process.key, EventStart.node_id)
    )
    if key is not None:
        query = query.where(Process.key == key)
    if partition_id is not None:
        query = query.where(Process.partition_id == partition_id)
    found: list[Evaluated] = []
    for start, process in db.session.execute(query).all():
        if not can(user, "instances.start", process.partition_id):
            continue
        version = db.session.get(ProcessVersion, start.version_id)
        if version is None or version.suspended_at is not None:
            continue
        evaluated = _evaluate(user, process, version, start.node_id, variables, partition_id)
        if evaluated is not None:
            found.append(evaluated)
    return found


def _request(user: User, body: Mapping[str, Any]) -> tuple[dict[str, Any], str | None, int | None]:
    """The variables (an object), process key and partition id of a request; 422 naming the
    field that is wrong."""
    fields: dict[str, str] = {}
    variables = body.get("variables", {})
    if not isinstance(variables, dict):
        fields["variables"] = "Give the variables as a JSON object."
    for name in KEYS:
        value = body.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            fields[name] = f"Give the {name} as its key."
    for unknown in sorted(set(body) - FIELDS):
        fields[unknown] = "Unknown field."
    if fields:
        raise invalid(fields)
    partition_id = None
    if body.get("partition"):
        partition_id = db.session.scalar(
            select(Partition.id).where(Partition.key == body["partition"])
        )
        if partition_id is None or not can(user, "instances.start", partition_id):
            raise invalid({"partition": "Unknown partition, or not one you may start in."})
    if not can(user, "instances.start", partition_id, scoped=partition_id is not None):
        raise InstanceError("forbidden", "You may not start instances.", status=403)
    return jsonable(variables), body.get("process"), partition_id


def _evaluate(
    user: User,
    process: Process,
    version: ProcessVersion,
    node_id: str,
    variables: dict[str, Any],
    partition_id: int | None,
) -> Evaluated | None:
    """Start an instance at `node_id` when its condition holds for `variables`; None when it
    does not."""
    node = (version.document.get("nodes") or {}).get(node_id) or {}
    condition = str((node.get("config") or {}).get("condition") or "false")
    context = {"$input": variables, "$vars": variables, "$nodes": {}, "$instance": {}}
    try:
        holds = bool(evaluate(condition, context))
    except ExpressionError as error:
        return Evaluated(process.key, version.number, node_id, error=str(error))
    if not holds:
        return None
    result = run_step(
        lambda: steps.start_instance(
            db_session(),
            definitions.for_version(version),
            input=variables,
            partition_id=process.partition_id or partition_id,
            actor=user,
            via="condition",
            start_node=node_id,
        )
    )
    commit(result)
    return Evaluated(process.key, version.number, node_id, instance=result.instance.id)
