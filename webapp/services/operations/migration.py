"""Migrating running instances to another version of their process, for the pages and the API:
check the request, give every selected instance a verdict (dry run), then hand the migration to
the bulk worker (`bulk_actions` "migrate"), which moves each instance in its own transaction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from webapp.engine import migration as engine_migration
from webapp.extensions import db
from webapp.models import BulkOperation, Instance, Process, ProcessVersion, User
from webapp.models.session import db_session
from webapp.models.statuses import UNFINISHED_INSTANCE
from webapp.permissions import can, partition_filter
from webapp.process.diff import diff_documents
from webapp.process.migration import (
    AS_IS,
    CANNOT,
    MAPPED,
    Plan,
    Verdict,
    candidates,
    check_mapping,
    needs_choice,
    node_label,
)
from webapp.services.operations import bulk
from webapp.services.operations.common import OperationsError

PERMISSION = "instances.modify"
ACTION = "migrate"
# Outcomes besides the plan's: instances the request named that cannot be considered.
ALREADY = "already"
ELSEWHERE = "elsewhere"
GROUPS = {
    AS_IS: "Migrate as they are",
    MAPPED: "Migrate with the chosen mapping",
    ALREADY: "Already on the target version",
    CANNOT: "Cannot migrate",
    ELSEWHERE: "Not running on the source version",
}
MAX_MAPPING = 500


@dataclass
class Setup:
    """A checked migration request: the process, both versions and the operator's mapping."""

    process: Process
    source: ProcessVersion
    target: ProcessVersion
    mapping: dict[str, str]

    @property
    def plan(self) -> Plan:
        return engine_migration.plan(self.source, self.target, self.mapping)

    def params(self) -> dict[str, Any]:
        """What the bulk operation keeps to migrate each instance later."""
        return {
            "process": self.process.key,
            "from": self.source.number,
            "to": self.target.number,
            "from_version_id": self.source.id,
            "to_version_id": self.target.id,
            "mapping": self.mapping,
        }


@dataclass
class Choice:
    """A node where instances stand that has no same-id, same-kind node in the target, or that
    changed: the candidates offered, best first, and the one chosen."""

    node_id: str
    label: str
    status: str
    candidates: list[tuple[str, str]]
    chosen: str
    required: bool


@dataclass
class Report:
    """The dry run: every instance's verdict, counted per outcome and per reason."""

    verdicts: dict[int, Verdict]
    extra: dict[int, tuple[str, str]] = field(default_factory=dict)

    def outcome(self, instance_id: int) -> tuple[str, str]:
        if instance_id in self.extra:
            return self.extra[instance_id]
        verdict = self.verdicts[instance_id]
        return verdict.outcome, verdict.reason

    @property
    def ids(self) -> list[int]:
        return sorted({*self.verdicts, *self.extra})

    def counts(self) -> dict[str, int]:
        found = Counter(self.outcome(i)[0] for i in self.ids)
        return {name: found[name] for name in GROUPS if found[name]}

    def groups(self) -> list[tuple[str, str, str, list[int]]]:
        """(outcome, its heading, the reason, instance ids) for each outcome and reason."""
        grouped: dict[tuple[str, str], list[int]] = {}
        for instance_id in self.ids:
            grouped.setdefault(self.outcome(instance_id), []).append(instance_id)
        order = list(GROUPS)
        return [
            (outcome, GROUPS[outcome], reason, ids)
            for (outcome, reason), ids in sorted(
                grouped.items(), key=lambda item: (order.index(item[0][0]), -len(item[1]))
            )
        ]

    def migratable(self) -> list[int]:
        return [i for i in self.ids if self.outcome(i)[0] in (AS_IS, MAPPED)]

    def settled(self) -> list[int]:
        """Instances a migration takes: those that can move and those already moved (reported
        as such, so repeating a migration is safe)."""
        return [i for i in self.ids if self.outcome(i)[0] in (AS_IS, MAPPED, ALREADY)]

    def as_dict(self, instance_id: int) -> dict[str, Any]:
        outcome, reason = self.outcome(instance_id)
        verdict = self.verdicts.get(instance_id)
        used = dict(verdict.used) if verdict is not None and instance_id not in self.extra else {}
        return {"instance": instance_id, "verdict": outcome, "reason": reason, "mapping": used}


def _refuse(fields: dict[str, str], message: str = "Some values need fixing.") -> OperationsError:
    return OperationsError("invalid", message, fields=fields)


def setup(
    user: User, key: str, was: Any, to: Any, mapping: Any = None, *, check_mapping_too: bool = True
) -> Setup:
    """Check a request to migrate process `key` from version `was` to `to` with `mapping`:
    OperationsError naming what is wrong (404 for a process or version that does not exist or
    the user may not see, 422 for the rest)."""
    if not can(user, PERMISSION, scoped=False):
        raise OperationsError("forbidden", "You may not migrate instances.", status=403)
    process = db.session.scalar(select(Process).where(Process.key == str(key or "")))
    if process is None or not can(user, PERMISSION, process.partition_id):
        raise OperationsError("not_found", f"There is no process '{key}' you may see.", status=404)
    numbers: dict[str, int] = {}
    fields: dict[str, str] = {}
    for name, value in (("from", was), ("to", to)):
        if isinstance(value, bool) or not isinstance(value, int | str):
            fields[name] = "Give a version number."
            continue
        try:
            numbers[name] = int(value)
        except ValueError:
            fields[name] = "Give a version number."
    if fields:
        raise _refuse(fields)
    versions = {}
    for name, number in numbers.items():
        version = db.session.scalar(
            select(ProcessVersion).where(
                ProcessVersion.process_id == process.id, ProcessVersion.number == number
            )
        )
        if version is None:
            raise OperationsError(
                "not_found",
                f"Process '{process.key}' has no version {number}.",
                status=404,
                fields={name: f"'{process.key}' has no version {number}."},
            )
        versions[name] = version
    if numbers["from"] == numbers["to"]:
        raise _refuse({"to": "Choose a version other than the one the instances are on."})
    if mapping is None:
        mapping = {}
    if not isinstance(mapping, Mapping):
        raise _refuse({"mapping": "Give the mapping as an object of node id: node id."})
    if len(mapping) > MAX_MAPPING:
        raise _refuse({"mapping": f"Map at most {MAX_MAPPING} nodes."})
    source, target = versions["from"], versions["to"]
    old = source.document.get("nodes") or {}
    new = target.document.get("nodes") or {}
    chosen = {str(a): b for a, b in mapping.items() if b not in (None, "")}
    problems = check_mapping(old, new, chosen, target.number, source.number)
    if problems:
        raise _refuse(
            {f"mapping.{node}": message for node, message in problems.items()},
            "The mapping needs fixing: " + " ".join(problems.values()),
        )
    return Setup(process, source, target, {a: str(b) for a, b in chosen.items()})


def _modifiable(user: User):
    return partition_filter(Instance.partition_id, user)


def running_count(user: User, version: ProcessVersion) -> int:
    """Unfinished instances of `version` the user may migrate."""
    if not can(user, PERMISSION, scoped=False):
        return 0
    return int(
        db.session.scalar(
            select(func.count()).where(
                Instance.version_id == version.id,
                Instance.status.in_(UNFINISHED_INSTANCE),
                _modifiable(user),
            )
        )
        or 0
    )


def selection(user: User, the_setup: Setup, ids: Any = None) -> list[int]:
    """The instances a request names (ids the user may see), or every unfinished instance of
    the source version the user may migrate; 422 for ids that are not whole numbers."""
    if ids is None:
        query = select(Instance.id).where(
            Instance.version_id == the_setup.source.id,
            Instance.status.in_(UNFINISHED_INSTANCE),
            _modifiable(user),
        )
        return list(db.session.scalars(query.order_by(Instance.id).limit(bulk.limit() + 1)))
    if not isinstance(ids, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 < i < 2**31 for i in ids
    ):
        raise _refuse({"instances": "Give a list of instance ids (whole numbers)."})
    wanted = sorted(set(ids))[: bulk.limit() + 1]
    if not wanted:
        raise _refuse({"instances": "Select at least one instance."})
    named = select(Instance.id, Instance.process_key).where(
        Instance.id.in_(wanted), _modifiable(user)
    )
    found: dict[int, str] = {row[0]: row[1] for row in db.session.execute(named)}
    missing = sorted(set(wanted) - set(found))
    if missing:
        raise OperationsError(
            "not_found",
            f"There is no instance {missing[0]} you may see.",
            status=404,
            fields={"instances": f"No instance {missing[0]} you may see."},
        )
    key = the_setup.process.key
    other = next((i for i in sorted(found) if found[i] != key), None)
    if other is not None:
        message = f"Instance {other} belongs to process '{found[other]}', not '{key}'."
        raise _refuse({"instances": message}, message)
    return sorted(found)


def dry_run(the_setup: Setup, ids: list[int]) -> Report:
    """Every instance's verdict: instances on the source version and unfinished get the plan's;
    the others are reported as already moved or elsewhere."""
    rows = engine_migration.states(db_session().connection(), ids)
    extra: dict[int, tuple[str, str]] = {}
    candidates_ids = []
    for instance_id, version_id, number, status in rows:
        if version_id == the_setup.target.id:
            extra[instance_id] = (ALREADY, f"Already on v{the_setup.target.number}.")
        elif version_id != the_setup.source.id:
            extra[instance_id] = (ELSEWHERE, f"On v{number}, not v{the_setup.source.number}.")
        elif status not in UNFINISHED_INSTANCE:
            extra[instance_id] = (ELSEWHERE, f"It is {status}.")
        else:
            candidates_ids.append(instance_id)
    verdicts = engine_migration.dry_run(db_session(), the_setup.plan, candidates_ids)
    db.session.rollback()
    return Report(verdicts, extra)


def choices(the_setup: Setup) -> list[Choice]:
    """The nodes where instances of the source version stand that were removed, changed kind or
    changed in the target: each with its candidates, the operator's or the best one chosen."""
    old = the_setup.source.document.get("nodes") or {}
    new = the_setup.target.document.get("nodes") or {}
    statuses = {
        item.id: item.status
        for item in diff_documents(the_setup.source.document, the_setup.target.document).nodes
    }
    found = []
    for node_id in sorted(engine_migration.occupied(db_session(), the_setup.source.id)):
        if node_id not in old:
            continue
        required = needs_choice(old, new, node_id)
        status = statuses.get(node_id, "same")
        if not required and status not in ("changed",) and node_id not in the_setup.mapping:
            continue
        offered = candidates(old, new, node_id)
        default = "" if required else node_id
        found.append(
            Choice(
                node_id=node_id,
                label=node_label(old, node_id),
                status="removed" if node_id not in new else ("kind" if required else status),
                candidates=[(c, node_label(new, c)) for c in offered],
                chosen=the_setup.mapping.get(node_id, default),
                required=required,
            )
        )
    return found


def start(user: User, the_setup: Setup, ids: list[int], reason: str = "") -> BulkOperation:
    """Store the migration of those of `ids` a dry run lets migrate (or finds moved already) as a
    bulk operation and hand it to a worker (an unreachable queue leaves it for Resume); 422 when
    none can. The worker checks each instance again under its lock."""
    movable = dry_run(the_setup, ids).settled()
    if not movable:
        raise _refuse({"instances": "None of the selected instances can migrate; see the dry run."})
    operation = bulk.create(user, ACTION, reason=reason, ids=movable, params=the_setup.params())
    bulk.enqueue(operation)
    return operation
