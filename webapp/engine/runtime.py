"""Token movement inside one step: tokens enter nodes and move on until each waits or ends.

A `Step` holds what one transaction changes for one (already locked) instance: its open tokens,
the jobs, tasks and subscriptions to create, and the history to append. `finish` writes it all,
one statement per table.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from webapp import tools
from webapp.engine import store
from webapp.engine.definitions import Definition
from webapp.engine.dispatch import JobRef
from webapp.engine.history import History
from webapp.engine.store import InstanceRow, JobRow, TokenRow
from webapp.models import MessageSubscription, Task

LIVE = ("active", "waiting")
# Node entries in one step; more means a loop that never waits.
MAX_ENTRIES = 10_000


@dataclass
class StepResult:
    """What a step did: the instance, the jobs to enqueue after commit, whether it applied."""

    instance: InstanceRow
    jobs: list[JobRef] = field(default_factory=list)
    applied: bool = True
    note: str = ""


def entry_point(kind: str, tool: str | None) -> str:
    """Which RQ entry point runs a job: pure tools run inline in the step, timers fire."""
    if kind == "timer":
        return "timer"
    registered = tools.get(tool or "")
    return "inline" if registered is not None and registered.pure else "tool"


class Step:
    """One transaction's changes to one locked instance."""

    def __init__(
        self,
        conn: Connection,
        instance: InstanceRow,
        definition: Definition,
        tokens: list[TokenRow],
        *,
        now: datetime,
        starter: str | None = None,
    ) -> None:
        self.conn = conn
        self.instance = instance
        self.definition = definition
        self.tokens = tokens
        self.now = now
        self.starter = starter
        self.history = History(instance, now)
        self.vars = dict(instance.vars or {})
        self.nodes = dict(instance.nodes or {})
        self._data_changed = False
        self._queue: deque[tuple[TokenRow, str, str | None]] = deque()
        self._entries = 0
        self._new_jobs: list[tuple[TokenRow, dict[str, Any]]] = []
        self._new_tasks: list[tuple[TokenRow, dict[str, Any]]] = []
        self._new_subscriptions: list[tuple[TokenRow, str, str]] = []
        self._jobs: list[JobRow] = []

    # --- data ------------------------------------------------------------------------------

    def context(self) -> dict[str, Any]:
        return {"$input": self.instance.input or {}, "$vars": self.vars, "$nodes": self.nodes}

    def record_output(self, node_id: str, output: Any) -> None:
        """Store a finished step's output as `$nodes.<id>` and under its `saveTo` variable."""
        self.nodes[node_id] = output
        save_to = self.definition.config(node_id).get("saveTo")
        if isinstance(save_to, str) and save_to:
            self.vars[save_to] = output
        self._data_changed = True

    def token(self, token_id: int) -> TokenRow | None:
        return next((t for t in self.tokens if t.id == token_id), None)

    def track(self, job: JobRow) -> None:
        """Save this existing job's changes when the step finishes."""
        if job not in self._jobs:
            self._jobs.append(job)

    # --- movement --------------------------------------------------------------------------

    def new_token(self, node_id: str, via: str | None = None) -> TokenRow:
        token = TokenRow(None, node_id, via, "active", 0)
        self.tokens.append(token)
        return token

    def enter(self, token: TokenRow, node_id: str, via: str | None) -> None:
        self._queue.append((token, node_id, via))

    def leave(self, token: TokenRow, flow_id: str, **details: Any) -> None:
        self.history.add("left", token, flow=flow_id, **details)
        self.enter(token, self.definition.flows[flow_id]["target"], flow_id)

    def leave_single(self, token: TokenRow) -> None:
        """Move on along the node's only outgoing flow."""
        flows = self.definition.outgoing.get(token.node_id) or []
        if not flows:
            self.fail(token, "no_flow", f"Node '{token.node_id}' has no outgoing flow.")
            return
        self.leave(token, flows[0][0])

    def run(self) -> None:
        """Move queued tokens until each waits, ends or fails."""
        from webapp.engine.nodes import HANDLERS

        while self._queue:
            token, node_id, via = self._queue.popleft()
            self._entries += 1
            token.node_id = node_id
            token.arrived_via = via
            token.step += 1
            token.status = "active"
            if self._entries > MAX_ENTRIES:
                self.fail(token, "loop", f"More than {MAX_ENTRIES} steps without waiting.")
                continue
            self.history.add("entered", token, flow=via)
            node = self.definition.nodes.get(node_id)
            handler = HANDLERS.get(node["kind"]) if node else None
            if node is None or handler is None:
                self.fail(token, "unknown_node", f"Node '{node_id}' cannot be run.")
                continue
            handler(self, token, node)

    def fail(self, token: TokenRow, code: str, message: str, **details: Any) -> None:
        """An incident: the token and the instance fail with node, code and message."""
        token.status = "failed"
        self.instance.status = "failed"
        self.instance.error = {
            "node": token.node_id,
            "code": code,
            "message": message,
            "at": self.now.isoformat(),
        }
        self.history.add("error", token, code=code, message=message, **details)

    # --- what waits ------------------------------------------------------------------------

    def add_job(self, token: TokenRow, kind: str, due_at: datetime, **options: Any) -> None:
        self._new_jobs.append((token, {"kind": kind, "due_at": due_at, **options}))

    def add_task(self, token: TokenRow, **values: Any) -> None:
        self._new_tasks.append((token, values))

    def add_subscription(self, token: TokenRow, name: str, correlation_key: str) -> None:
        self._new_subscriptions.append((token, name, correlation_key))

    # --- the end of the step ---------------------------------------------------------------

    def finish(self) -> StepResult:
        """Complete the instance if nothing is left, write every row, list jobs to enqueue."""
        self._complete_if_done()
        self._save_instance()
        self._save_tokens()
        new_jobs = self._insert_jobs()
        self._save_jobs()
        self._insert_waits()
        self.history.write(self.conn)
        refs = [
            JobRef(
                store.saved_id(job.id),
                job.instance_id,
                entry_point(job.kind, job.tool),
                job.due_at,
                job.attempt,
            )
            for job in [*new_jobs, *self._jobs]
            if job.status == "pending"
        ]
        return StepResult(self.instance, refs)

    def _save_instance(self) -> None:
        instance = self.instance
        instance.updated_at = self.now
        values = {
            "instance_id": instance.id,
            "status": instance.status,
            "error": instance.error,
            "ended_at": instance.ended_at,
            "updated_at": self.now,
        }
        if self._data_changed or instance.id is None:
            instance.vars = dict(self.vars)
            instance.nodes = dict(self.nodes)
            values.update(vars=instance.vars, nodes=instance.nodes)
        if instance.id is None:
            row = store.values_of(instance, exclude=("id",))
            instance.id = self.conn.execute(store.INSERT_INSTANCE, row).scalar_one()
        elif self._data_changed:
            self.conn.execute(store.UPDATE_INSTANCE_DATA, values)
        else:
            self.conn.execute(store.UPDATE_INSTANCE, values)

    def _save_tokens(self) -> None:
        changed = [
            {"token_id": t.id, "updated_at": self.now, **t.values()}
            for t in self.tokens
            if t.id is not None and t.changed
        ]
        if changed:
            self.conn.execute(store.UPDATE_TOKEN, changed)
        new = [t for t in self.tokens if t.id is None]
        if new:
            stamp = {
                "instance_id": self.instance.id,
                "created_at": self.now,
                "updated_at": self.now,
            }
            rows = [{**stamp, **t.values()} for t in new]
            ids = self.conn.execute(store.INSERT_TOKENS, rows).scalars().all()
            for token, token_id in zip(new, ids, strict=True):
                token.id = token_id
        for token in self.tokens:
            token.saved = token.snapshot()

    def _insert_jobs(self) -> list[JobRow]:
        if not self._new_jobs:
            return []
        jobs = [
            JobRow(
                id=None,
                instance_id=store.saved_id(self.instance.id),
                token_id=store.saved_id(token.id),
                node_id=token.node_id,
                key=f"{token.id}:{token.node_id}:{token.step}",
                actor=self.starter,
                status="pending",
                attempt=0,
                **options,
            )
            for token, options in self._new_jobs
        ]
        rows = [
            {
                **store.values_of(job, exclude=("id", "saved")),
                "created_at": self.now,
                "updated_at": self.now,
            }
            for job in jobs
        ]
        ids = self.conn.execute(store.INSERT_JOBS, rows).scalars().all()
        for job, job_id in zip(jobs, ids, strict=True):
            job.id = job_id
        return jobs

    def _save_jobs(self) -> None:
        changed = [
            {"job_id": job.id, "updated_at": self.now, **store.values_of(job, store.JOB_STATE)}
            for job in self._jobs
            if job.changed
        ]
        if changed:
            self.conn.execute(store.UPDATE_JOB, changed)

    def _insert_waits(self) -> None:
        stamp = {"instance_id": self.instance.id, "created_at": self.now}
        if self._new_tasks:
            tasks = [
                {**stamp, "token_id": token.id, "status": "open", **values}
                for token, values in self._new_tasks
            ]
            for task in tasks:
                task.setdefault("partition_id", self.instance.partition_id)
            self.conn.execute(Task.__table__.insert(), tasks)
        if self._new_subscriptions:
            subscriptions = [
                {**stamp, "token_id": t.id, "node_id": t.node_id, "name": n, "correlation_key": k}
                for t, n, k in self._new_subscriptions
            ]
            self.conn.execute(MessageSubscription.__table__.insert(), subscriptions)

    def _complete_if_done(self) -> None:
        instance = self.instance
        if instance.status not in ("running", "failed"):
            return
        if any(token.status in LIVE for token in self.tokens):
            return
        if any(token.status == "failed" for token in self.tokens):
            instance.status = "failed"
            return
        instance.status = "completed"
        instance.ended_at = self.now
        self.history.add("completed")
