"""Migrating instances to another version of their process: the dry run (set-based reads of
where many instances stand, one verdict per distinct shape) and the change of one instance,
in one transaction under its lock.

What moves: the instance's version, its open tokens' nodes, its pending jobs (timers keep their
due time, tool jobs their key), its subscriptions and open tasks (assignee and claim kept, title
and form from the new version). Where the new version waits otherwise, the instance is made to
wait as it says: a subscription whose message name, correlation expression or signal name
changed is made again from the new node, and an event sub-process it adds starts listening in the
instance's open scopes. Steps after the commit read the new version's definition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Integer, any_, bindparam, case, cast, literal, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from webapp.engine import history, scopes, steps, store, tree, waits
from webapp.engine.dispatch import JobRef
from webapp.engine.errors import EngineError
from webapp.engine.runtime import Step, StepResult
from webapp.infra.database import begin_write
from webapp.models import ProcessVersion
from webapp.models.statuses import (
    OPEN_TOKEN,
    UNFINISHED_INSTANCE,
    HistoryKind,
    JobStatus,
    TaskStatus,
    TokenStatus,
)
from webapp.process.kinds import SCOPE_KINDS
from webapp.process.migration import Plan, Positions, TokenAt, Verdict

# Instance ids per IN list: well under SQLite's and PostgreSQL's parameter limits.
CHUNK = 2_000


def plan(source: ProcessVersion, target: ProcessVersion, mapping: Mapping[str, str]) -> Plan:
    """The plan from `source` to `target` (the mapping checked by the caller)."""
    return Plan(
        old=source.document.get("nodes") or {},
        new=target.document.get("nodes") or {},
        mapping=dict(mapping),
        was=source.number,
        to=target.number,
        new_flows=target.document.get("flows") or {},
    )


def _chunks(ids: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start : start + size]


def _among(conn: Connection, column: Any, ids: list[int]) -> Any:
    """`column` is one of `ids`: one array parameter on PostgreSQL (a long IN list costs more to
    send and parse than the rows it reads), an IN list on SQLite."""
    if conn.dialect.name == "postgresql":
        return column == any_(cast(literal(ids), ARRAY(Integer)))
    return column.in_(ids)


def _chunk_size(conn: Connection, ids: list[int]) -> int:
    return max(len(ids), 1) if conn.dialect.name == "postgresql" else CHUNK


def states(conn: Connection, instance_ids: list[int]) -> list[tuple[int, int, int, str]]:
    """(id, version id, version number, status) of each instance."""
    i = store.INSTANCES.c
    found: list[tuple[int, int, int, str]] = []
    for chunk in _chunks(instance_ids, _chunk_size(conn, instance_ids)):
        query = select(i.id, i.version_id, i.version, i.status).where(_among(conn, i.id, chunk))
        found.extend((row[0], row[1], row[2], row[3]) for row in conn.execute(query))
    return found


def positions(conn: Connection, instance_ids: list[int]) -> dict[int, Positions]:
    """Where each instance stands, in four statements per chunk of ids (no ORM objects)."""
    tokens: dict[int, list[tuple]] = defaultdict(list)
    jobs: dict[int, list[tuple[str, int | None]]] = defaultdict(list)
    subscriptions: dict[int, list[tuple[str, int]]] = defaultdict(list)
    tasks: dict[int, list[tuple[str, tuple[str, ...]]]] = defaultdict(list)
    t, j, s, k = store.TOKENS.c, store.JOBS.c, store.SUBSCRIPTIONS.c, store.TASKS.c
    for chunk in _chunks(sorted(instance_ids), _chunk_size(conn, instance_ids)):
        token_rows = conn.execute(
            select(t.instance_id, t.id, t.node_id, t.parent_id, t.arrived_via, t.status, t.locals)
            .where(_among(conn, t.instance_id, chunk), t.status.in_(OPEN_TOKEN))
            .order_by(t.instance_id, t.id)
        )
        for row in token_rows:
            tokens[row[0]].append(tuple(row[1:]))
        job_rows = conn.execute(
            select(j.instance_id, j.node_id, j.token_id)
            .where(_among(conn, j.instance_id, chunk), j.status == JobStatus.PENDING)
            .order_by(j.instance_id, j.id)
        )
        for instance_id, node_id, token_id in job_rows:
            jobs[instance_id].append((node_id, token_id))
        subscription_rows = conn.execute(
            select(s.instance_id, s.node_id, s.token_id)
            .where(_among(conn, s.instance_id, chunk))
            .order_by(s.instance_id, s.id)
        )
        for instance_id, node_id, token_id in subscription_rows:
            subscriptions[instance_id].append((node_id, token_id))
        task_rows = conn.execute(
            select(k.instance_id, k.node_id, k.result)
            .where(_among(conn, k.instance_id, chunk), k.status == TaskStatus.OPEN)
            .order_by(k.instance_id, k.id)
        )
        for instance_id, node_id, result in task_rows:
            held = tuple(sorted(result)) if isinstance(result, dict) else ()
            tasks[instance_id].append((node_id, held))
    return {
        instance_id: Positions(
            tokens=_tokens(tokens.get(instance_id, [])),
            jobs=tuple(jobs.get(instance_id, ())),
            subscriptions=tuple(subscriptions.get(instance_id, ())),
            tasks=tuple(tasks.get(instance_id, ())),
        )
        for instance_id in instance_ids
    }


def _tokens(rows: list[tuple]) -> tuple[TokenAt, ...]:
    nodes = {row[0]: row[1] for row in rows}
    return tuple(
        TokenAt(
            id=token_id,
            node_id=node_id,
            parent_id=parent_id,
            arrived_via=arrived_via,
            failed=status == TokenStatus.FAILED,
            body=tree.is_body(locals_),
            instance=tree.is_instance(node_id, locals_, nodes.get(parent_id)),
            listener=tree.is_listener(locals_),
        )
        for token_id, node_id, parent_id, arrived_via, status, locals_ in rows
    )


def dry_run(session: Session, the_plan: Plan, instance_ids: list[int]) -> dict[int, Verdict]:
    """The verdict of every instance in `instance_ids` (those still on the plan's source
    version and unfinished; the caller reports the others)."""
    found = positions(session.connection(), instance_ids)
    return {instance_id: the_plan.verdict(found[instance_id]) for instance_id in instance_ids}


def occupied(session: Session, version_id: int) -> set[str]:
    """The nodes where unfinished instances of a version have tokens, jobs, subscriptions or
    open tasks: the places a mapping must cover."""
    i, t, j, s = store.INSTANCES.c, store.TOKENS.c, store.JOBS.c, store.SUBSCRIPTIONS.c
    running = select(i.id).where(i.version_id == version_id, i.status.in_(UNFINISHED_INSTANCE))
    found: set[str] = set()
    for query in (
        select(t.node_id).where(t.instance_id.in_(running), t.status.in_(OPEN_TOKEN)),
        select(j.node_id).where(j.instance_id.in_(running), j.status == JobStatus.PENDING),
        select(s.node_id).where(s.instance_id.in_(running)),
    ):
        found.update(session.execute(query.distinct()).scalars())
    return found


def migrate_instance(
    session: Session,
    instance_id: int,
    source_id: int,
    target_id: int,
    the_plan: Plan,
    *,
    actor: str | None,
    now: datetime,
    reason: str = "",
) -> StepResult:
    """Move one instance from version `source_id` to `target_id` (the plan's), under its lock;
    an instance already there is left as it is (not applied). EngineError when it cannot move."""
    begin_write(session)
    conn = session.connection()
    locked = store.lock(conn, instance_id)
    if locked is None:
        raise EngineError("not_found", f"Instance {instance_id} does not exist.", status=404)
    instance, _ = locked
    if instance.version_id == target_id:
        return StepResult(instance, applied=False, note=f"Already on v{the_plan.to}.")
    if instance.version_id != source_id:
        raise EngineError(
            "other_version",
            f"Instance {instance_id} is on v{instance.version}, not v{the_plan.was}.",
            status=409,
        )
    if instance.status not in UNFINISHED_INSTANCE:
        raise EngineError(
            "not_active",
            f"Instance {instance_id} is {instance.status}; only running or failed instances move.",
            status=409,
        )
    found = positions(conn, [instance_id])[instance_id]
    verdict = the_plan.verdict(found)
    if not verdict.migrates:
        raise EngineError("cannot_migrate", verdict.reason, status=409)
    _move(conn, instance_id, found, the_plan, now)
    instance = replace(instance, version_id=target_id, version=the_plan.to, updated_at=now)
    conn.execute(
        update(store.INSTANCES)
        .where(store.INSTANCES.c.id == instance_id)
        .values(version_id=target_id, version=the_plan.to, updated_at=now)
    )
    details: dict[str, Any] = {"from": the_plan.was, "to": the_plan.to}
    history.append(
        session,
        instance_id,
        HistoryKind.MIGRATED,
        actor=actor,
        now=now,
        **details,
        mapping=dict(verdict.used) or None,
        reason=reason or None,
    )
    jobs = _wait_as_new(session, instance_id, found, the_plan, now)
    return StepResult(instance, jobs, note=f"Migrated to v{the_plan.to}.")


def _wait_as_new(
    session: Session, instance_id: int, found: Positions, the_plan: Plan, now: datetime
) -> list[JobRef]:
    """After the move, in a step on the new version: subscribe again where the new version's
    wait changed, and open the listeners of the event sub-processes it adds; the jobs to send.
    EngineError naming the node when the new wait cannot be made for this instance."""
    changed = [node for node, _ in found.subscriptions if the_plan.wait_changed(node)]
    stale = {the_plan.target(node) for node in changed}
    added = the_plan.added_event_subprocesses()
    if not stale and not added:
        return []
    step, _ = steps.open_step(session, instance_id, now)
    s = store.SUBSCRIPTIONS
    if stale:
        rows = step.conn.execute(
            select(s.c.id, s.c.token_id, s.c.node_id, s.c.kind, s.c.correlation_key).where(
                s.c.instance_id == instance_id, s.c.node_id.in_(sorted(stale))
            )
        ).all()
        for row in rows:
            holder = step.token(row.token_id)
            if holder is None:
                continue
            name, key = _new_wait(step, holder, row, the_plan.to)
            step.conn.execute(
                update(s).where(s.c.id == row.id).values(name=name, correlation_key=key)
            )
    for scope, scope_node in _open_scopes(step):
        for subprocess in added.get(scope_node, ()):
            if not scopes.open_listener(step, scope, subprocess):
                raise EngineError(
                    "cannot_migrate",
                    f"{step.definition.mentioned(subprocess)}, which v{the_plan.to} adds, cannot "
                    "start listening for this instance: its timer or correlation key fails.",
                    status=409,
                )
    return step.finish().jobs


def _new_wait(step: Step, holder: Any, row: Any, to: int) -> tuple[str, str]:
    """The name and key a subscription at `row.node_id` gets from the new version's node, the
    key computed at its holder as entering the node would."""
    config = step.definition.config(row.node_id)
    if row.kind == waits.CONDITION:  # the new condition is read when the data next changes
        return "", ""
    if row.kind == "signal":
        return str(config.get("signal") or ""), row.correlation_key
    key, problem = waits.evaluate_key(step, holder, config)
    if key is None:
        raise EngineError(
            "cannot_migrate",
            f"The correlation key of {step.definition.mentioned(row.node_id)} in v{to} "
            f"{problem} for this instance.",
            status=409,
        )
    return str(config.get("message") or ""), key


def _open_scopes(step: Step) -> list[tuple[Any, str | None]]:
    """The instance's open scopes as (scope token, its node): the process (None), then each
    sub-process and running event sub-process (of a multi-instance one, each instance)."""
    found: list[tuple[Any, str | None]] = [(None, None)]
    for token in step.tokens:
        kind = step.definition.kind(token.node_id)
        if token.status not in OPEN_TOKEN or token.listener:
            continue
        if kind not in SCOPE_KINDS:
            continue
        if step.definition.multi_instance(token.node_id) and not step.is_inner(token):
            continue
        found.append((token, token.node_id))
    return found


def _rename(table: Any, renamed: dict[str, str], *where: Any, **values: Any) -> Any:
    """UPDATE table SET node_id = its new name (one CASE, so swapped pairs stay right)."""
    new_name = case(renamed, value=table.c.node_id)
    return (
        update(table)
        .where(table.c.node_id.in_(list(renamed)), *where)
        .values(node_id=new_name, **values)
    )


def _move(
    conn: Connection,
    instance_id: int,
    found: Positions,
    the_plan: Plan,
    now: datetime,
) -> None:
    """Rename the nodes of the instance's open rows to their targets (a statement per table,
    none when nothing is renamed); open tasks also take the new title and form, keeping
    assignee, offers and claim."""
    places = {t.node_id for t in found.tokens} | {node for node, _ in found.jobs}
    places |= {node for node, _ in found.subscriptions} | {node for node, _ in found.tasks}
    renamed = {
        node_id: target for node_id in places if (target := the_plan.target(node_id)) != node_id
    }
    t, j, s, k = store.TOKENS, store.JOBS, store.SUBSCRIPTIONS, store.TASKS
    if renamed:
        conn.execute(
            _rename(t, renamed, t.c.instance_id == instance_id, t.c.status.in_(OPEN_TOKEN),
                    updated_at=now)
        )  # fmt: skip
        conn.execute(
            _rename(j, renamed, j.c.instance_id == instance_id, j.c.status == JobStatus.PENDING,
                    updated_at=now)
        )  # fmt: skip
        conn.execute(_rename(s, renamed, s.c.instance_id == instance_id))
    if not found.tasks:
        return
    rows = conn.execute(
        select(k.c.id, k.c.node_id).where(
            k.c.instance_id == instance_id, k.c.status == TaskStatus.OPEN
        )
    ).all()
    tasks = []
    for task_id, node_id in rows:
        to = renamed.get(node_id, node_id)
        node = the_plan.new.get(to) or {}
        title = (node.get("title") or to)[:200]
        form = (node.get("config") or {}).get("form")
        tasks.append({"row_id": task_id, "to_node": to, "title": title, "form": form})
    conn.execute(
        update(k)
        .where(k.c.id == bindparam("row_id"))
        .values(node_id=bindparam("to_node"), title=bindparam("title"), form=bindparam("form")),
        tasks,
    )
