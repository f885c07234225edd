"""A step's state and token movement, and the table of node behaviours the runtime looks up.

A `Step` holds what one transaction changes for one (already locked) instance: its open tokens,
the jobs, tasks and subscriptions to create, and the history to append. `finish` has the store
write it all, one statement per table; `interpreter.run` moves the queued tokens.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Connection

from webapp.engine import compensations, store, tools, tree
from webapp.engine.compensations import Completion
from webapp.engine.context import instance_values, jsonable
from webapp.engine.definitions import Definition
from webapp.engine.dispatch import JobRef
from webapp.engine.history import History
from webapp.engine.store import InstanceRow, JobRow, TokenRow
from webapp.models.statuses import (
    LIVE_TOKEN,
    OPEN_TOKEN,
    UNFINISHED_INSTANCE,
    CallOutcome,
    HistoryKind,
    InstanceStatus,
    JobStatus,
    TokenStatus,
)
from webapp.process.document import UNPOOLED_KINDS
from webapp.process.expressions import ExpressionError, evaluate

# An activity that finished without an output of its own (a sub-process, a timer).
NO_OUTPUT: Any = object()
# Node entries in one step; more means a loop that never waits.
MAX_ENTRIES = 10_000


@dataclass
class StepResult:
    """What a step did: the instance, the jobs to enqueue after commit, whether it applied."""

    instance: InstanceRow
    jobs: list[JobRef] = field(default_factory=list)
    applied: bool = True
    note: str = ""


def _key(scope: TokenRow | None) -> int | None:
    """The key of a scope's token in a step's index of tokens by scope."""
    return id(scope) if scope is not None else None


def _creation(token: TokenRow) -> tuple[bool, int]:
    """Saved tokens in id order, then those made in this step (a stable sort keeps theirs)."""
    return (token.id is None, token.id or 0)


def entry_point(kind: str, tool: str | None) -> str:
    """Which RQ entry point runs a job: pure tools run inline in the step, timers fire, and
    hand-overs between a caller and its child (call, resume, cancel) run as their own steps."""
    if kind != "tool":
        return kind
    registered = tools.get(tool or "")
    return "inline" if registered is not None and registered.pure else "tool"


class Behaviour:
    """What a family of node kinds does: as a token enters, as the activity there completes, as a
    scope empties, as an event it waits for fires (one object per family, found by node kind)."""

    def enter(self, step: Step, token: TokenRow, node: dict[str, Any]) -> None:
        """A token entered the node: act, then move on, wait, end or fail."""
        step.fail(
            token, "unknown_node", f"{step.definition.described(token.node_id)} cannot be run."
        )

    def completed(self, step: Step, token: TokenRow) -> None:
        """The activity at `token` finished (its output recorded): move on."""
        step.leave_single(token)

    def try_complete(self, step: Step, scope: TokenRow) -> bool:
        """Complete the scope `scope` when nothing live is left in it; False when it stays."""
        return False

    def holds(self, step: Step, token: TokenRow, node_id: str) -> bool:
        """Whether `token`, at a node of this kind, holds the wait of event node `node_id`."""
        return False

    def held_by(self, step: Step, token: TokenRow, node_id: str) -> bool:
        """Whether the wait of event node `node_id` (of this kind) is held by `token`."""
        return False


class Wrapper(Behaviour):
    """The multi-instance body around an activity: its instances run inside it, one per item."""

    def instance_completed(self, step: Step, body: TokenRow, inner: TokenRow, output: Any) -> None:
        """One instance `inner` of `body` finished with `output`."""
        raise NotImplementedError

    def loop_values(self, step: Step, body: TokenRow, inner: TokenRow) -> dict[str, Any]:
        """`$item`, `$loop` and the element variable as the instance `inner` sees them."""
        raise NotImplementedError


class Looper(Behaviour):
    """A standard loop around an activity: it runs again while its condition holds."""

    def begins(self, step: Step, token: TokenRow) -> bool:
        """A token reached the looped activity; False when a test before the first run ended
        the loop (the token moved on)."""
        raise NotImplementedError

    def repeats(self, step: Step, token: TokenRow) -> bool:
        """One run finished; True when the activity runs again (the token re-entered it)."""
        raise NotImplementedError

    def loop_values(self, step: Step, token: TokenRow) -> dict[str, Any]:
        """`$loop` as the looped activity at `token` (or a token inside it) sees it."""
        raise NotImplementedError


# The table keys of the multi-instance wrapper and the standard loop (no node has these kinds).
MULTI_INSTANCE = "multiInstance"
STANDARD_LOOP = "standardLoop"
BEHAVIOURS: dict[str, Behaviour] = {}
PLAIN = Behaviour()


def install(table: Mapping[str, Behaviour]) -> None:
    """Make `table` the behaviours the runtime looks up (`behaviours` installs it once)."""
    BEHAVIOURS.clear()
    BEHAVIOURS.update(table)


def behaviour_of(kind: str | None) -> Behaviour:
    """The behaviour of node kind `kind` (a plain one that moves on for a kind without one)."""
    return BEHAVIOURS.get(kind or "", PLAIN)


def standard_loop() -> Looper:
    """The installed standard loop."""
    looper = BEHAVIOURS.get(STANDARD_LOOP)
    if not isinstance(looper, Looper):
        raise RuntimeError("the engine's behaviours are not installed")
    return looper


def multi_instance() -> Wrapper:
    """The installed multi-instance wrapper."""
    wrapper = BEHAVIOURS.get(MULTI_INSTANCE)
    if not isinstance(wrapper, Wrapper):
        raise RuntimeError("the engine's behaviours are not installed")
    return wrapper


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
        complete: bool = True,
    ) -> None:
        """`tokens` are the instance's open tokens (`complete`), or only some of them with their
        enclosing scopes: the step then reads the others when something needs them."""
        self.conn = conn
        self.instance = instance
        self.definition = definition
        self._tokens: list[TokenRow] = []
        self._by_id: dict[int, TokenRow] = {}
        # The tokens directly inside each scope (keyed by id() of the scope's token; None: the
        # process level), and the scopes whose open tokens are all loaded.
        self._inside: dict[int | None, list[TokenRow]] = {}
        self._inside_known: set[int | None] = set()
        self._live_saved: dict[int, int] = {}
        self._complete = complete
        self._adopt(tokens)
        self.now = now
        self.starter = starter
        self.history = History(instance, now)
        self.vars = dict(instance.vars or {})
        self.nodes = dict(instance.nodes or {})
        self._data_changed = False
        # Whether data changed or a conditional event subscribed since conditions were last
        # evaluated, and `$vars` as they were then (what a `watch` list compares against).
        self.conditions_due = False
        self.vars_evaluated = dict(self.vars)
        self._queue: deque[tuple[TokenRow, str, str | None, bool]] = deque()
        self._scopes_to_check: list[TokenRow] = []
        self._closed: list[tuple[TokenRow, tuple[str, ...] | None]] = []
        # A called child's outcome for its caller, written as a job when the step finishes.
        self.report: dict[str, Any] | None = None
        self._entries = 0
        self._new_jobs: list[tuple[TokenRow | None, dict[str, Any]]] = []
        self._new_tasks: list[tuple[TokenRow, dict[str, Any]]] = []
        self._new_subscriptions: list[tuple[TokenRow, str, str, str, str, bool | None]] = []
        self._jobs: list[JobRow] = []
        # Signals thrown in this step, written (and handed to workers) when it finishes.
        self.broadcasts: list[dict[str, Any]] = []
        # Ids of the users and roles the step's tasks named, by (kind, name).
        self.named: dict[tuple[str, str], int | None] = {}
        # Compensable activities completed in this step, saved as it finishes.
        self.completions: list[Completion] = []

    # --- data ------------------------------------------------------------------------------

    def context(self, token: TokenRow | None = None) -> dict[str, Any]:
        """What expressions read at `token`: inside a multi-instance, also `$item` and `$loop`."""
        context = {
            "$input": self.instance.input or {},
            "$vars": self.vars,
            "$nodes": self.nodes,
            "$instance": instance_values(self.instance),
        }
        inner = token
        while inner is not None and not self.is_inner(inner):
            inner = inner.parent
        if inner is not None and inner.parent is not None:
            context.update(multi_instance().loop_values(self, inner.parent, inner))
        looped = token
        while looped is not None and looped is not inner and not tree.is_looping(looped.locals):
            looped = looped.parent
        if looped is not None and looped is not inner:  # a standard loop nearer than an instance
            context.update(standard_loop().loop_values(self, looped))
        context.update(tree.handler_context(token, self.vars, self.nodes))
        return context

    def evaluate_inputs(self, token: TokenRow, mapping: dict[str, str]) -> dict[str, Any] | None:
        """Evaluate each named expression at `token` (a tool's or a call's inputs); on an error
        the token fails naming the input, and the result is None."""
        context = self.context(token)
        values = {}
        for name, text in mapping.items():
            try:
                values[name] = evaluate(text, context)
            except ExpressionError as error:
                at = self.definition.mentioned(token.node_id)
                self.fail(token, "expression", f"The input '{name}' of {at} failed: {error}")
                return None
        return values

    def record_output(self, node_id: str, output: Any) -> None:
        """Store a finished step's output as `$nodes.<id>` and under its `saveTo` variable (in
        a pooled process, without `saveTo`, its keys go into `$vars`)."""
        self.nodes[node_id] = output
        save_to = self.definition.config(node_id).get("saveTo")
        if isinstance(save_to, str) and save_to:
            self.vars[save_to] = output
        elif self.definition.kind(node_id) not in UNPOOLED_KINDS:
            self.pool(output)
        self._data_changed = True
        self.conditions_due = True

    def pool(self, values: Any) -> None:
        """In a process with `"variables": "pool"`, merge a JSON object's keys into `$vars`,
        later writes winning, as Camunda, Flowable and SpiffWorkflow do with process variables."""
        if self.definition.pool and isinstance(values, dict):
            self.vars.update(values)
            self._data_changed = True
            self.conditions_due = True

    def assign(self, values: dict[str, Any]) -> None:
        """Write `values` into `$vars` (a script task's assignments)."""
        self.vars.update(values)
        self._data_changed = True
        self.conditions_due = True

    # --- the tokens the step has read ------------------------------------------------------

    @property
    def tokens(self) -> list[TokenRow]:
        """Every open token of the instance (and those the step created or closed), in creation
        order: a step that read only some reads the rest first."""
        if not self._complete:
            if self.instance.id is not None:
                rows, _ = store.open_tokens(self.conn, self.instance.id)
                self._adopt(rows)
            self._complete = True
            self._tokens.sort(key=_creation)
        return self._tokens

    def _adopt(self, rows: list[TokenRow]) -> None:
        """Take tokens read from the database, keeping the step's own object for any it holds
        already, and link each to its scope's token."""
        fresh = [row for row in rows if row.id is None or row.id not in self._by_id]
        for token in fresh:
            if token.id is not None:
                self._by_id[token.id] = token
            self._tokens.append(token)
        for token in fresh:
            if token.parent_id is not None:
                token.parent = self._by_id.get(token.parent_id)
            self._inside.setdefault(_key(token.parent), []).append(token)
        if fresh:
            self._live_saved.clear()

    def token(self, token_id: int) -> TokenRow | None:
        """The open token `token_id` (with the scopes around it), None when it is not open."""
        found = self._by_id.get(token_id)
        if found is None and not self._complete and self.instance.id is not None:
            self._adopt(store.token_chain(self.conn, self.instance.id, token_id))
            found = self._by_id.get(token_id)
        return found

    def track(self, job: JobRow) -> None:
        """Save this existing job's changes when the step finishes."""
        if job not in self._jobs:
            self._jobs.append(job)

    # --- movement --------------------------------------------------------------------------

    def new_token(
        self,
        node_id: str,
        via: str | None = None,
        *,
        parent: TokenRow | None = None,
        locals: dict[str, Any] | None = None,
    ) -> TokenRow:
        token = TokenRow(None, node_id, via, TokenStatus.ACTIVE, 0, locals=locals)
        token.parent = parent
        token.parent_id = parent.id if parent is not None else None
        self._tokens.append(token)
        self._inside.setdefault(_key(parent), []).append(token)
        return token

    def enter(self, token: TokenRow, node_id: str, via: str | None, *, again: bool = False) -> None:
        """Queue `token` to enter `node_id`; `again` (a retry) does not reopen boundary events."""
        self._queue.append((token, node_id, via, again))

    def leave(self, token: TokenRow, flow_id: str, **details: Any) -> None:
        self.history.add(HistoryKind.LEFT, token, flow=flow_id, **details)
        self.enter(token, self.definition.flows[flow_id]["target"], flow_id)

    def leave_single(self, token: TokenRow) -> None:
        """Move on along the node's only outgoing flow; without one the path ends here, as at a
        plain end event (an implicit end)."""
        flows = self.definition.outgoing.get(token.node_id) or []
        if not flows:
            self.history.add(HistoryKind.LEFT, token, implicit_end=True)
            token.status = TokenStatus.DONE
            self.ended(token)
            return
        self.leave(token, flows[0][0])

    def queued(self) -> tuple[TokenRow, str, str | None, bool] | None:
        """The next queued entry (token, node, flow, again) of a token still open; None when
        the queue is empty."""
        while self._queue:
            entry = self._queue.popleft()
            if entry[0].status in OPEN_TOKEN:
                return entry
        return None

    def arrive(self, token: TokenRow, node_id: str, via: str | None) -> bool:
        """`token` enters `node_id` along `via`; False (the token failed) when this step has
        entered more nodes than a process that ever waits would."""
        self._entries += 1
        token.node_id = node_id
        token.arrived_via = via
        token.step += 1
        token.status = TokenStatus.ACTIVE
        if self._entries > MAX_ENTRIES:
            self.fail(token, "loop", f"More than {MAX_ENTRIES} steps without waiting.")
            return False
        self.history.add(HistoryKind.ENTERED, token, flow=via, scope=self.scope_of(token))
        return True

    # --- scopes ----------------------------------------------------------------------------

    def is_inner(self, token: TokenRow) -> bool:
        """Whether `token` is one instance of a multi-instance activity (its parent the body)."""
        parent = token.parent
        return parent is not None and tree.is_instance(token.node_id, token.locals, parent.node_id)

    def scope_of(self, token: TokenRow) -> str | None:
        """The node id of the scope `token` runs in (None at the process level)."""
        return self.definition.parent.get(token.node_id)

    def children(self, scope: TokenRow | None) -> list[TokenRow]:
        """The tokens directly inside `scope` (None: the process level), in creation order."""
        key = _key(scope)
        if not self._complete and key not in self._inside_known:
            if self.instance.id is not None and (scope is None or scope.id is not None):
                parent_id = scope.id if scope is not None else None
                self._adopt(store.children(self.conn, self.instance.id, parent_id))
            self._inside_known.add(key)
        return sorted(self._inside.get(key, ()), key=_creation)

    def live_children(self, scope: TokenRow) -> int:
        """How many tokens directly inside `scope` are live (without reading them all)."""
        key = _key(scope)
        held = self._inside.get(key, [])
        live = sum(1 for t in held if t.status in LIVE_TOKEN)
        if self._complete or key in self._inside_known or scope.id is None:
            return live
        saved = self._live_saved.get(scope.id)
        if saved is None:
            loaded = [t.id for t in held if t.id is not None]
            saved = store.live_children(self.conn, scope.id, loaded)
            self._live_saved[scope.id] = saved
        return live + saved

    def subtree(self, token: TokenRow) -> list[TokenRow]:
        """`token` and every token inside it (its scope's tokens, theirs, ...)."""
        found = [token]
        for member in found:
            found.extend(self.children(member))
        return found

    def ended(self, token: TokenRow) -> None:
        """`token` ended (done or cancelled): its scope may now be complete."""
        if token.parent is not None:
            self._scopes_to_check.append(token.parent)

    def cancel_tree(self, token: TokenRow) -> None:
        """End `token` and everything inside it: tokens, jobs, timers, subscriptions, tasks and
        called children."""
        doomed = [t for t in self.subtree(token) if t.status in OPEN_TOKEN]
        for member in doomed:
            member.status = TokenStatus.CANCELLED
        self.close_waits(doomed)
        self.ended(token)

    def close_waits(self, tokens: list[TokenRow], node_ids: tuple[str, ...] | None = None) -> None:
        """Withdraw what these tokens wait for (only at `node_ids`, e.g. a host's boundaries)."""
        members = {id(t) for t in tokens}

        def kept(token: TokenRow | None, node_id: str | None) -> bool:
            if token is None or id(token) not in members:
                return True
            return node_ids is not None and node_id not in node_ids

        self._new_jobs = [
            (t, o) for t, o in self._new_jobs if kept(t, o.get("node_id", t and t.node_id))
        ]
        self._new_subscriptions = [w for w in self._new_subscriptions if kept(w[0], w[3])]
        if node_ids is None:
            self._new_tasks = [w for w in self._new_tasks if kept(w[0], None)]
        for token in tokens:
            if token.id is not None:
                self._closed.append((token, node_ids))

    def complete(self, token: TokenRow, output: Any = NO_OUTPUT) -> None:
        """An activity finished: record its output, close its boundary events and move on (one
        instance of a multi-instance reports to its body instead)."""
        if self.is_inner(token) and token.parent is not None:
            self._remember(token, token.parent.parent, output)
            multi_instance().instance_completed(self, token.parent, token, output)
            return
        node_id = token.node_id
        if output is not NO_OUTPUT:
            self.record_output(node_id, output)
        if not tree.is_body(token.locals):
            self._remember(token, token.parent, NO_OUTPUT)
        boundaries = self.definition.boundaries.get(node_id)
        if boundaries:
            self.close_waits([token], tuple(boundaries))
        if tree.is_looping(token.locals) and standard_loop().repeats(self, token):
            return
        behaviour_of(self.definition.kind(node_id)).completed(self, token)
        if token.parent is not None:  # its scope may end on it (an ad-hoc completion condition)
            self._scopes_to_check.append(token.parent)

    def _remember(self, token: TokenRow, scope: TokenRow | None, output: Any) -> None:
        """Keep a compensable activity's completion, with the data as it completed (its own
        output, and an instance's `$item` and `$loop`), for a compensation throw to undo."""
        if token.node_id not in self.definition.compensation.compensable:
            return
        context = self.context(token)
        nodes = dict(context["$nodes"])
        if output is not NO_OUTPUT:
            nodes[token.node_id] = output
        data = {"vars": context["$vars"], "nodes": nodes}
        if "$loop" in context:
            data.update(item=context.get("$item"), loop=context["$loop"])
        self.completions.append(
            Completion(
                token.node_id,
                jsonable(data),
                scope=scope,
                scope_step=scope.step if scope is not None else 0,
                token=token,
                token_step=token.step,
            )
        )

    def scope_to_check(self) -> TokenRow | None:
        """A scope one of whose tokens ended since it was last checked (None: no such scope)."""
        return self._scopes_to_check.pop() if self._scopes_to_check else None

    def fail(self, token: TokenRow, code: str, message: str, **details: Any) -> None:
        """An incident: the token and the instance fail with node, code and message."""
        token.status = TokenStatus.FAILED
        self.instance.status = InstanceStatus.FAILED
        self.instance.error = {
            "node": token.node_id,
            "code": code,
            "message": message,
            "at": self.now.isoformat(),
        }
        self.history.add(HistoryKind.ERROR, token, code=code, message=message, **details)

    # --- what waits ------------------------------------------------------------------------

    def add_job(self, token: TokenRow | None, kind: str, due_at: datetime, **options: Any) -> None:
        """A job for `token` (at `node_id`, default its node); no token: a hand-over job whose
        `instance_id`, `node_id` and `key` are given."""
        self._new_jobs.append((token, {"kind": kind, "due_at": due_at, **options}))

    def add_task(self, token: TokenRow, **values: Any) -> None:
        self._new_tasks.append((token, values))

    def add_subscription(
        self,
        token: TokenRow,
        name: str,
        correlation_key: str,
        node_id: str | None = None,
        kind: str = "message",
        satisfied: bool | None = None,
    ) -> None:
        """`token` waits for a message (name and key), a signal name (`kind` "signal") or a
        condition (`kind` "condition", `satisfied`: whether it held when last evaluated)."""
        self._new_subscriptions.append(
            (token, name, correlation_key, node_id or token.node_id, kind, satisfied)
        )
        if kind == "condition":
            self.conditions_due = True

    def take_new_subscription(self, token: TokenRow, node_id: str, kind: str) -> bool:
        """Withdraw the not yet saved subscription of `token` at `node_id` of `kind`; False when
        there is none."""
        for index, wait in enumerate(self._new_subscriptions):
            if wait[0] is token and wait[3] == node_id and wait[4] == kind:
                del self._new_subscriptions[index]
                return True
        return False

    def new_subscriptions(self, kind: str) -> list[tuple[TokenRow, str, bool | None]]:
        """The (token, node id, satisfied) of the not yet saved subscriptions of `kind`."""
        return [(w[0], w[3], w[5]) for w in self._new_subscriptions if w[4] == kind]

    def mark_new_subscription(self, token: TokenRow, node_id: str, satisfied: bool) -> None:
        """Record whether the condition of an unsaved conditional subscription holds now."""
        self._new_subscriptions = [
            (*w[:5], satisfied) if w[0] is token and w[3] == node_id and w[4] == "condition" else w
            for w in self._new_subscriptions
        ]

    def take_subscriptions(self, kind: str, name: str) -> list[tuple[TokenRow, str]]:
        """Withdraw the not yet saved subscriptions of `kind` and `name` this step made; the
        (token, node id) of each, in the order they were made."""
        taken: list[tuple[TokenRow, str]] = []
        kept = []
        for wait in self._new_subscriptions:
            if wait[4] == kind and wait[1] == name:
                taken.append((wait[0], wait[3]))
            else:
                kept.append(wait)
        self._new_subscriptions = kept
        return taken

    # --- the end of the step ---------------------------------------------------------------

    def finish(self) -> StepResult:
        """Complete the instance if nothing is left, write every row, list jobs to enqueue."""
        self._complete_if_done()
        self._save_instance()
        if self.report is not None:
            self.to_parent(f"resume:{self.instance.id}", {"child": self.instance.id, **self.report})
            self.report = None
        store.save_tokens(self.conn, self._tokens, store.saved_id(self.instance.id), self.now)
        compensations.insert_all(
            self.conn, store.saved_id(self.instance.id), self.completions, self.now
        )
        self.completions.clear()
        for token in self._tokens:
            if token.id is not None:
                self._by_id.setdefault(token.id, token)
        self._withdraw_closed()
        waiting = self._suspended_id()
        for job in self._insert_jobs(waiting):
            self.track(job)
        store.save_jobs(self.conn, self._jobs, self.now, waiting)
        self._insert_waits()
        self.history.write(self.conn)
        refs = self._write_broadcasts()
        refs += [
            JobRef(
                store.saved_id(job.id),
                job.instance_id,
                entry_point(job.kind, job.tool),
                job.due_at,
                job.attempt,
                job.timeout,
                job.tool or "",
                job.node_id,
                job.held,
            )
            for job in self._jobs
            if job.status == JobStatus.PENDING and not job.waits(waiting)
        ]
        return StepResult(self.instance, refs)

    def _suspended_id(self) -> int | None:
        """The instance's id while it is suspended: the jobs a step made for it (an operator's
        modification, say) then wait for the resume like the rest of it."""
        if self.instance.suspended_at is None or self.instance.id is None:
            return None
        return self.instance.id

    def due_pure_jobs(self) -> list[JobRow]:
        """The saved, pending jobs of pure tools that are due now (a worker may run them in this
        same transaction: `steps.finish_with_pure_calls`)."""
        return [
            job
            for job in self._jobs
            if job.id is not None
            and job.status == JobStatus.PENDING
            and job.due_at <= self.now
            and entry_point(job.kind, job.tool) == "inline"
        ]

    def _write_broadcasts(self) -> list[JobRef]:
        """Insert the step's broadcasts (the instance row exists by now) for workers to plan."""
        refs = []
        for thrown in self.broadcasts:
            reached_own = thrown.pop("reached_own", False)
            broadcast_id = store.insert_broadcast(
                self.conn,
                now=self.now,
                partition_id=self.instance.partition_id,
                instance_id=self.instance.id,
                **thrown,
            )
            if reached_own:
                store.insert_receipt(
                    self.conn, broadcast_id, store.saved_id(self.instance.id), self.now
                )
            refs.append(JobRef(broadcast_id, 0, "signal", self.now, 0))
        self.broadcasts.clear()
        return refs

    def _save_instance(self) -> None:
        instance = self.instance
        if self._data_changed or instance.id is None:
            instance.vars = dict(self.vars)
            instance.nodes = dict(self.nodes)
        store.save_instance(self.conn, instance, self.now, data_changed=self._data_changed)

    def _withdraw_closed(self) -> None:
        """Cancel the saved jobs, subscriptions, tasks and called children of closed tokens."""
        if not self._closed:
            return
        closed = list(self._closed)
        self._closed.clear()
        instance_id = store.saved_id(self.instance.id)
        for child_id in store.withdraw(self.conn, instance_id, closed, self._jobs, self.now):
            self.cancel_child(child_id)

    def report_to_parent(self, status: CallOutcome, **details: Any) -> None:
        """The child ended: this step will write a `resume` job handing the outcome to the
        waiting call activity (once the child's row has its id)."""
        if self.instance.parent_id is not None:
            self.report = {"status": status, **jsonable(details)}

    def to_parent(self, key: str, outcome: dict[str, Any]) -> None:
        """A `resume` job on the caller's waiting token (checked against the token's step there)."""
        instance = self.instance
        if instance.parent_id is None or instance.parent_token_id is None:
            return
        self.add_job(
            None,
            "resume",
            self.now,
            instance_id=instance.parent_id,
            token_id=instance.parent_token_id,
            node_id=instance.parent_node_id or "",
            key=key,
            inputs={**outcome, "step": instance.parent_step},
        )

    def cancel_child(self, child_id: int) -> None:
        """Hand the cancelling of a called child to a job: one step never locks two instances."""
        self.add_job(
            None,
            "cancel",
            self.now,
            instance_id=child_id,
            node_id="",
            key=f"cancel:{child_id}:{self.instance.id}",
        )

    def _insert_jobs(self, waiting: int | None) -> list[JobRow]:
        if not self._new_jobs:
            return []
        jobs = store.insert_jobs(
            self.conn,
            self.instance.id,
            self._new_jobs,
            actor=self.starter,
            now=self.now,
            waiting=waiting,
        )
        self._new_jobs.clear()
        return jobs

    def _insert_waits(self) -> None:
        store.insert_waits(
            self.conn, self.instance, self._new_tasks, self._new_subscriptions, self.now
        )
        self._new_tasks.clear()
        self._new_subscriptions.clear()

    def _complete_if_done(self) -> None:
        instance = self.instance
        if instance.status not in UNFINISHED_INSTANCE:
            return
        if instance.status == InstanceStatus.RUNNING and any(
            token.status in LIVE_TOKEN and not token.listener for token in self._tokens
        ):
            # A running instance has no failed token (a failure fails the instance at once) and
            # one live token it holds keeps it running: the tokens it did not read change nothing.
            return
        if any(token.status == TokenStatus.FAILED for token in self.tokens):
            instance.status = InstanceStatus.FAILED
            return
        if instance.status == InstanceStatus.FAILED:
            instance.status = InstanceStatus.RUNNING
            instance.error = None
        if any(token.status in LIVE_TOKEN and not token.listener for token in self.tokens):
            return
        for token in self.tokens:
            if token.listener and token.status in LIVE_TOKEN:
                self.cancel_tree(token)
        instance.status = InstanceStatus.COMPLETED
        instance.ended_at = self.now
        self.history.add(HistoryKind.COMPLETED)
        if instance.parent_id is not None:
            self.report_to_parent(CallOutcome.COMPLETED, output=dict(self.vars))
