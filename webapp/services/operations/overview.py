"""The overview's numbers: counts per status and process, incidents, overdue tasks, the last day
by hour, and the heat of each version (how many wait at each node, and for how long)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, select

from webapp.engine import tree
from webapp.extensions import db
from webapp.models import Instance, Process, Task, Token, User
from webapp.models.base import utcnow
from webapp.models.statuses import (
    INSTANCE_STATUSES,
    OPEN_TOKEN,
    UNFINISHED_INSTANCE,
    InstanceStatus,
    TaskStatus,
    TokenStatus,
)
from webapp.permissions import partition_filter
from webapp.services.operations import labels
from webapp.services.operations.common import hour_of, visible

HOURS = 24
OVERDUE_SHOWN = 10


def status_counts(user: User) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Instances per status, and per process and status."""
    keys = (Instance.process_key, Instance.status)
    rows = db.session.execute(select(*keys, func.count()).where(visible(user)).group_by(*keys))
    totals = dict.fromkeys(INSTANCE_STATUSES, 0)
    per_process: dict[str, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(INSTANCE_STATUSES, 0)
    )
    for process_key, status, count in rows:
        totals[status] = totals.get(status, 0) + count
        per_process[process_key][status] = count
    return totals, dict(sorted(per_process.items()))


def incidents(user: User) -> list[dict[str, Any]]:
    """Failed instances grouped by process, node and error code, largest group first, with one
    of the group's error messages, the node titles and the process's partition name."""
    node = Instance.error["node"].as_string()
    code = Instance.error["code"].as_string()
    message = Instance.error["message"].as_string()
    rows = db.session.execute(
        select(
            Instance.process_key,
            node.label("node"),
            code.label("code"),
            func.max(message).label("message"),
            func.count().label("count"),
            func.max(Instance.updated_at).label("latest"),
        )
        .where(visible(user), Instance.status == InstanceStatus.FAILED)
        .group_by(Instance.process_key, node, code)
        .order_by(func.count().desc(), Instance.process_key)
        .limit(100)
    )
    found = [row._asdict() for row in rows]
    keys = {row["process_key"] for row in found}
    titles = labels.process_titles(keys)
    partitions = labels.process_partitions(keys)
    return [
        {
            **row,
            "titles": titles.get(row["process_key"], {}),
            "partition": partitions.get(row["process_key"]),
        }
        for row in found
    ]


def overdue_tasks(user: User, now: datetime | None = None) -> tuple[int, list[Task]]:
    """Open tasks past their due date: how many, and the most overdue few."""
    now = now or utcnow()
    where = and_(
        Task.status == TaskStatus.OPEN, Task.due_at < now, partition_filter(Task.partition_id, user)
    )
    count = db.session.scalar(select(func.count()).select_from(Task).where(where)) or 0
    shown = list(
        db.session.scalars(select(Task).where(where).order_by(Task.due_at).limit(OVERDUE_SHOWN))
    )
    return count, shown


@dataclass(frozen=True)
class Hour:
    label: str
    started: int
    completed: int
    failed: int


def last_day(user: User, now: datetime | None = None) -> list[Hour]:
    """Instances started, completed and failed in each of the last 24 hours (UTC)."""
    now = (now or utcnow()).replace(minute=0, second=0, microsecond=0)
    first = now - timedelta(hours=HOURS - 1)
    series: dict[str, dict[str, int]] = {"started": {}, "completed": {}, "failed": {}}
    queries = {
        "started": (Instance.created_at, None),
        "completed": (Instance.ended_at, InstanceStatus.COMPLETED),
        "failed": (Instance.updated_at, InstanceStatus.FAILED),
    }
    for name, (column, status) in queries.items():
        hour = hour_of(column)
        query = select(hour, func.count()).where(visible(user), column >= first)
        if status is not None:
            query = query.where(Instance.status == status)
        series[name] = dict(db.session.execute(query.group_by(hour)).all())
    hours = []
    for index in range(HOURS):
        moment = first + timedelta(hours=index)
        key = moment.strftime("%Y-%m-%d %H")
        hours.append(
            Hour(
                moment.strftime("%H:00"),
                series["started"].get(key, 0),
                series["completed"].get(key, 0),
                series["failed"].get(key, 0),
            )
        )
    return hours


@dataclass(frozen=True)
class NodeHeat:
    """Instances at one node now and how long they have been there (seconds)."""

    waiting: int
    failed: int
    median: float
    longest: float


def heat(
    user: User, process: Process, now: datetime | None = None
) -> dict[int, dict[str, NodeHeat]]:
    """{version id: {node id: NodeHeat}} over the process's unfinished instances `user` sees;
    nodes inside sub-processes count like any other, event sub-processes that only listen and
    the scope token of a multi-instance activity (its instances count) do not."""
    now = now or utcnow()
    rows = db.session.execute(
        select(
            Instance.version_id,
            Instance.id,
            Token.node_id,
            Token.status,
            Token.updated_at,
            Token.locals,
        )
        .join(Token, Token.instance_id == Instance.id)
        .where(
            visible(user),
            Instance.process_key == process.key,
            Instance.status.in_(UNFINISHED_INSTANCE),
            Token.status.in_(OPEN_TOKEN),
        )
    )
    waits: dict[tuple[int, str], list[float]] = defaultdict(list)
    waiting: dict[tuple[int, str], set[int]] = defaultdict(set)
    failed: dict[tuple[int, str], set[int]] = defaultdict(set)
    for version_id, instance_id, node_id, status, since, locals_ in rows:
        key = (version_id, node_id)
        if tree.is_listener(locals_) or tree.is_body(locals_):
            continue
        if status == TokenStatus.FAILED:
            failed[key].add(instance_id)
        else:
            waiting[key].add(instance_id)
            waits[key].append(max(0.0, (now - since).total_seconds()))
    result: dict[int, dict[str, NodeHeat]] = defaultdict(dict)
    for key in set(waits) | set(failed):
        version_id, node_id = key
        times = waits.get(key, [])
        result[version_id][node_id] = NodeHeat(
            len(waiting.get(key, ())),
            len(failed.get(key, ())),
            statistics.median(times) if times else 0.0,
            max(times) if times else 0.0,
        )
    return dict(result)
