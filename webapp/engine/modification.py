"""Instance modification: an operator moves, cancels and adds tokens (and edits variables) of one
instance in one step under its lock, by the engine's own rules for leaving and entering nodes.

Leaving withdraws what a token and everything inside it wait for (tasks, jobs, subscriptions,
called children); arriving queues the token for the interpreter, which enters the node as a flow
would. Scopes a target needs are opened, scopes left with nothing live are closed. The effects are
read back from the rows the step wrote, so a dry run is this same step rolled back by the caller.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Connection

from webapp.engine import interpreter, multi, scopes, steps, tree
from webapp.engine.context import jsonable
from webapp.engine.definitions import Definition
from webapp.engine.errors import EngineError
from webapp.engine.runtime import NO_OUTPUT, Step, StepResult
from webapp.engine.store import JOBS, SUBSCRIPTIONS, TASKS, TOKENS, TokenRow
from webapp.models.base import utcnow
from webapp.models.statuses import (
    OPEN_TOKEN,
    UNFINISHED_INSTANCE,
    HistoryKind,
    JobStatus,
    TaskStatus,
    TokenStatus,
)

MAX_OPERATIONS = 100
MAX_VARIABLES = 100
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,99}$")
# Node kinds no token can be put at: they fire on their host or scope, never by arriving.
NOT_TARGETS = ("boundaryEvent", "eventSubProcess")
SHAPES = {"move": ("move", "to"), "cancel": ("cancel",), "cancel_branch": ("cancel_branch",)}


@dataclass(frozen=True)
class Operation:
    """One change: `move` token_id to node_id, `cancel` or `cancel_branch` token_id, `add` at
    node_id."""

    kind: str
    token_id: int | None = None
    node_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        if self.kind == "move":
            return {"move": self.token_id, "to": self.node_id}
        if self.kind == "add":
            return {"add": self.node_id}
        return {self.kind: self.token_id}


@dataclass
class Modification:
    """What a modification did (or would do): the step's result, the preview and its stamps."""

    result: StepResult
    preview: dict[str, Any] = field(default_factory=dict)


def _refused(
    field_name: str, message: str, status: int = 422, code: str = "invalid"
) -> EngineError:
    return EngineError(code, message, status=status, details={"fields": {field_name: message}})


def _token_id(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _refused(where, f"{where}: a token id is a positive whole number.")
    return value


def _node_id(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise _refused(where, f"{where}: a node id is a text of 1 to 200 characters.")
    return value.strip()


def parse_operations(raw: Any) -> list[Operation]:
    """The operations of a request body (a list of one-key objects, `move` with `to`); an
    EngineError naming the first that has no known shape."""
    if not isinstance(raw, list):
        raise _refused("operations", "operations: send a list of operations.")
    if len(raw) > MAX_OPERATIONS:
        raise _refused("operations", f"operations: at most {MAX_OPERATIONS} in one change.")
    found = []
    for index, item in enumerate(raw):
        where = f"operations[{index}]"
        if not isinstance(item, dict):
            raise _refused(where, f'{where}: an operation is an object such as {{"cancel": 5}}.')
        keys = tuple(sorted(item))
        if keys == ("add",):
            found.append(Operation("add", node_id=_node_id(item["add"], f"{where}.add")))
            continue
        kind = next((name for name, shape in SHAPES.items() if keys == tuple(sorted(shape))), None)
        if kind is None:
            raise _refused(
                where,
                f"{where}: unknown operation {json.dumps(jsonable(item))[:200]}; use "
                '{"move": token, "to": node}, {"cancel": token}, {"cancel_branch": token} '
                'or {"add": node}.',
            )
        token_id = _token_id(item[kind], f"{where}.{kind}")
        node_id = _node_id(item["to"], f"{where}.to") if kind == "move" else None
        found.append(Operation(kind, token_id=token_id, node_id=node_id))
    return found


def parse_variables(raw: Any) -> dict[str, Any]:
    """Variable edits of a request body: names as `$vars` keys, any JSON values."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _refused("variables", "variables: send an object of names and values.")
    if len(raw) > MAX_VARIABLES:
        raise _refused("variables", f"variables: at most {MAX_VARIABLES} in one change.")
    for name in raw:
        if not VARIABLE_NAME.match(name):
            raise _refused(
                f"variables.{name}"[:120],
                f"variables: '{name[:100]}' is no variable name; use letters, digits and _, "
                "not starting with a digit.",
            )
    return {name: jsonable(value) for name, value in raw.items()}


# --- the step ---------------------------------------------------------------------------------


def modify(
    session: Any,
    instance_id: int,
    operations: list[Operation],
    variables: dict[str, Any],
    *,
    reason: str,
    actor: str | None,
    stamp: str | None = None,
    now: datetime | None = None,
) -> Modification:
    """Apply the operations and variable edits in one step holding the instance's lock; the
    preview lists the effects. EngineError (nothing changed) for an unknown token or node, a
    finished instance, or a `stamp` the instance no longer has."""
    if not operations and not variables:
        raise _refused("operations", "Nothing to change: add an operation or a variable.")
    step, _ = steps.open_step(session, instance_id, now or utcnow())
    instance = step.instance
    if instance.status not in UNFINISHED_INSTANCE:
        raise EngineError(
            "not_active",
            f"Instance {instance_id} is {instance.status}; only running or failed instances can "
            "be modified.",
        )
    step.tokens  # noqa: B018 - a modification reads every open token of the instance
    before = _snapshot(step.conn, instance_id)
    current = _stamp(instance.status, step.vars, before)
    if stamp is not None and stamp != current:
        raise EngineError(
            "stale",
            f"Instance {instance_id} moved since the preview; preview the change again.",
            status=409,
            details={"fields": {"stamp": "The instance moved since the preview."}},
        )
    step.starter = steps.starter_of(step)
    edits = {name: {"before": step.vars.get(name), "after": v} for name, v in variables.items()}
    if variables:
        step.assign(variables)
    withdrawn: list[TokenRow] = []
    for index, operation in enumerate(operations):
        _apply(step, operation, f"operations[{index}]", withdrawn)
    _close_emptied(step, withdrawn)
    if not any(t.status in OPEN_TOKEN and not t.listener for t in step.tokens):
        raise _refused(
            "operations",
            "The change leaves no token in the instance; cancel the instance instead.",
        )
    interpreter.run(step)
    warnings = join_warnings(step)
    result = step.finish()
    if steps.suspended(step) and result.instance.status not in UNFINISHED_INSTANCE:
        raise EngineError(
            "suspended",
            f"Instance {instance_id} is suspended and this change would end it "
            f"({result.instance.status}); resume it first, or cancel it.",
            status=409,
        )
    after = _snapshot(step.conn, instance_id)
    definition = step.definition
    tokens_before = _tokens_named(definition, before["tokens"])
    tokens_after = _tokens_named(definition, after["tokens"])
    # One entry with the whole change (after the engine's own entries of the step).
    step.history.add(
        HistoryKind.MODIFIED,
        actor=actor,
        reason=reason or None,
        operations=[operation.as_dict() for operation in operations],
        variables=edits or None,
        before=[_brief(t) for t in tokens_before],
        after=[_brief(t) for t in tokens_after],
    )
    step.history.write(step.conn)
    preview = {
        "instance": instance_id,
        "stamp": current,
        "status": instance.status,
        "tokens_before": tokens_before,
        "tokens_after": tokens_after,
        "tasks_withdrawn": _gone(before["tasks"], after["tasks"]),
        "tasks_created": _gone(after["tasks"], before["tasks"]),
        "jobs_cancelled": _jobs_named(definition, _gone(before["jobs"], after["jobs"])),
        "jobs_created": _jobs_named(definition, _gone(after["jobs"], before["jobs"])),
        "subscriptions_withdrawn": _gone(before["subscriptions"], after["subscriptions"]),
        "subscriptions_created": _gone(after["subscriptions"], before["subscriptions"]),
        "variables": edits,
        "warnings": warnings,
        "stamp_after": _stamp(instance.status, step.vars, after),
    }
    return Modification(result, jsonable(preview))


def _apply(step: Step, operation: Operation, where: str, withdrawn: list[TokenRow]) -> None:
    near: TokenRow | None = None
    if operation.token_id is not None:
        near = _live_token(step, operation.token_id, where)
        if operation.kind == "cancel" and any(
            t.status in OPEN_TOKEN and not t.listener for t in step.children(near)
        ):
            raise _refused(
                where,
                f"{where}: token {near.id} at {step.definition.mentioned(near.node_id)} holds "
                "tokens inside it; cancel its branch (cancel_branch) or the tokens inside.",
            )
        _withdraw(step, near)
        withdrawn.append(near)
    if operation.node_id is None:
        return
    node_id = _target(step.definition, operation.node_id, where)
    scope = _scope_for(step, node_id, near, where)
    token = step.new_token(node_id, parent=scope)
    step.enter(token, node_id, None)


def _live_token(step: Step, token_id: int, where: str) -> TokenRow:
    token = step.token(token_id)
    if token is None or token.status not in OPEN_TOKEN:
        raise _refused(
            where,
            f"{where}: token {token_id} is no live token of instance {step.instance.id}.",
        )
    if token.listener:
        raise _refused(
            where,
            f"{where}: token {token_id} only listens for an event sub-process; it is no token "
            "of work.",
        )
    return token


def _target(definition: Definition, node_id: str, where: str) -> str:
    if node_id not in definition.nodes:
        raise _refused(
            where,
            f"{where}: there is no node '{node_id}' in version {definition.number} of "
            f"'{definition.process_key}'.",
        )
    scope: str | None = node_id
    while scope is not None:
        if definition.kind(scope) in NOT_TARGETS:
            raise _refused(
                where,
                f"{where}: {definition.mentioned(node_id)} ({node_id}) is started by its event, "
                "not by a token arriving; pick another node.",
            )
        scope = definition.parent.get(scope)
    return node_id


def targets(definition: Definition) -> list[str]:
    """The node ids a token may be moved to or added at, in document order."""
    allowed = []
    for node_id in definition.nodes:
        scope: str | None = node_id
        while scope is not None and definition.kind(scope) not in NOT_TARGETS:
            scope = definition.parent.get(scope)
        if scope is None:
            allowed.append(node_id)
    return allowed


def _withdraw(step: Step, token: TokenRow) -> None:
    """`token` and everything inside it leave their nodes: tasks, jobs, subscriptions and called
    children are withdrawn; its scope is looked at afterwards (`_close_emptied`)."""
    doomed = [t for t in step.subtree(token) if t.status in OPEN_TOKEN]
    for member in doomed:
        member.status = TokenStatus.CANCELLED
    step.close_waits(doomed)


def _occupied(step: Step, scope: TokenRow) -> bool:
    return any(t.status in OPEN_TOKEN and not t.listener for t in step.children(scope))


def _unstarted(body: TokenRow) -> bool:
    state = body.locals or {}
    return int(state.get("next") or 0) < int(state.get("count") or 0)


def _close_emptied(step: Step, withdrawn: list[TokenRow]) -> None:
    """Close the scopes the withdrawn tokens left with nothing live inside, outwards. A withdrawn
    instance of a multi-instance body that still has others counts as finished without output,
    so the body goes on by its own rules (its completion condition, its next instance)."""
    pending = list(withdrawn)
    while pending:
        token = pending.pop(0)
        scope = token.parent
        if scope is None or scope.status not in OPEN_TOKEN:
            continue
        if step.is_inner(token):
            if _occupied(step, scope) or _unstarted(scope):
                multi.instance_completed(step, scope, token, NO_OUTPUT)
                if token.status == TokenStatus.DONE:
                    token.status = TokenStatus.CANCELLED
                continue
        elif _occupied(step, scope):
            continue
        _withdraw(step, scope)
        pending.append(scope)


def _scope_for(step: Step, node_id: str, near: TokenRow | None, where: str) -> TokenRow | None:
    """The scope token a new token at `node_id` runs in: the scopes around `near` (the token
    moved) where they fit, else the one open scope at each level, else a new one."""
    definition = step.definition
    chain: list[str] = []
    level = definition.parent.get(node_id)
    while level is not None:
        chain.insert(0, level)
        level = definition.parent.get(level)
    ancestors: list[TokenRow] = []
    while near is not None and near.parent is not None:
        ancestors.append(near.parent)
        near = near.parent
    scope: TokenRow | None = None
    for scope_node in chain:
        holder = _pick(step, scope, scope_node, ancestors, where, body=False)
        if holder is None:
            holder = _open_scope(step, scope, scope_node)
        if definition.multi_instance(scope_node):
            inner = _pick(step, holder, scope_node, ancestors, where, body=True)
            holder = inner if inner is not None else _open_instance(step, holder, where)
        scope = holder
    return scope


def _pick(
    step: Step,
    scope: TokenRow | None,
    scope_node: str,
    ancestors: list[TokenRow],
    where: str,
    *,
    body: bool,
) -> TokenRow | None:
    """The open token at `scope_node` directly inside `scope` that a new token joins (inside a
    body: one of its instances); None when there is none; ambiguous choices are refused."""
    found = [
        t
        for t in step.children(scope)
        if t.node_id == scope_node
        and t.status == TokenStatus.WAITING
        and not t.listener
        and step.is_inner(t) == body
    ]
    for token in found:
        if any(token is ancestor for ancestor in ancestors):
            return token
    if len(found) > 1:
        what = "instances of" if body else "tokens at"
        raise _refused(
            where,
            f"{where}: {len(found)} {what} {step.definition.mentioned(scope_node)} are open; "
            "move a token from inside the one you mean.",
        )
    return found[0] if found else None


def _open_scope(step: Step, parent: TokenRow | None, scope_node: str) -> TokenRow:
    """Open the sub-process (or multi-instance body) `scope_node` as entering it would, without
    starting its start event: boundary events subscribe, event sub-processes listen."""
    token = step.new_token(scope_node, parent=parent)
    token.status = TokenStatus.WAITING
    step.history.add(HistoryKind.ENTERED, token, scope=step.scope_of(token))
    scopes.open_boundaries(step, token)
    if step.definition.multi_instance(scope_node):
        token.locals = {"count": 0, "completed": 0, "next": 0, "outputs": [], "items": None}
        step.history.add(HistoryKind.MULTI_INSTANCE, token, count=1, sequential=None)
    else:
        scopes.open_event_subprocesses(step, token, scope_node)
    return token


def _open_instance(step: Step, body: TokenRow, where: str) -> TokenRow:
    """One more instance (without an item) of the multi-instance body `body`."""
    if _unstarted(body):
        raise _refused(
            where,
            f"{where}: {step.definition.mentioned(body.node_id)} still starts its instances; "
            "try again once it has started them all.",
        )
    state = dict(body.locals or {})
    index = int(state.get("count") or 0)
    state["count"] = index + 1
    state["next"] = index + 1
    state["outputs"] = [*(state.get("outputs") or []), None]
    body.locals = state
    inner = step.new_token(body.node_id, parent=body, locals={"index": index, "item": None})
    inner.status = TokenStatus.WAITING
    step.history.add(HistoryKind.ENTERED, inner, scope=step.scope_of(inner))
    scopes.open_event_subprocesses(step, inner, body.node_id)
    return inner


# --- joins that would wait for ever -----------------------------------------------------------


def _reached(definition: Definition, starts: set[str], join: str) -> set[str]:
    """Nodes reachable from `starts` along flows, boundary events and link jumps, not through
    `join` (the start nodes included)."""
    seen = set(starts)
    frontier = list(starts)
    while frontier:
        node_id = frontier.pop()
        if node_id == join:
            continue
        following = [flow["target"] for _, flow in definition.outgoing.get(node_id, [])]
        following += definition.boundaries.get(node_id, [])
        link = definition.config(node_id).get("link")
        if definition.kind(node_id) == "linkThrow" and link:
            target = definition.links.get((definition.parent.get(node_id), link))
            if target:
                following.append(target)
        for target in following:
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return seen


def join_warnings(step: Step) -> list[str]:
    """Parallel joins that will wait for ever: an incoming flow holding no token that no live
    token of the join's scope can reach any more, at a join holding tokens or one a live token
    can reach. (Inclusive joins go on by themselves once nothing can reach them.)"""
    definition = step.definition
    joins = [
        n
        for n in definition.nodes
        if definition.kind(n) == "parallelGateway" and len(definition.incoming.get(n, [])) > 1
    ]
    if not joins:
        return []
    groups: dict[int, tuple[TokenRow | None, list[TokenRow]]] = {}
    for token in step.tokens:
        if token.status in OPEN_TOKEN and not token.listener:
            groups.setdefault(id(token.parent), (token.parent, []))[1].append(token)
    found = []
    for scope, members in groups.values():
        scope_node = scope.node_id if scope is not None else None
        for join in joins:
            if definition.parent.get(join) != scope_node:
                continue
            held = [t for t in members if t.node_id == join and t.status == TokenStatus.WAITING]
            others = {t.node_id for t in members if t.node_id != join}
            reached = _reached(definition, others, join)
            if not held and join not in reached:
                continue
            filled = {t.arrived_via for t in held}
            lost = [
                flow_id
                for flow_id in definition.incoming.get(join, [])
                if flow_id not in filled and definition.flows[flow_id]["source"] not in reached
            ]
            if not lost:
                continue
            branches = ", ".join(
                f"from {definition.mentioned(definition.flows[f]['source'])} ({f})" for f in lost
            )
            state = "holds a token and" if held else "will be reached, and"
            found.append(
                f"The join {definition.mentioned(join)} ({join}) {state} waits for the branch"
                f"{'es' if len(lost) > 1 else ''} {branches}, which no token can reach any more: "
                "it would wait for ever."
            )
    return found


# --- what the step changed --------------------------------------------------------------------


def _snapshot(conn: Connection, instance_id: int) -> dict[str, list[dict[str, Any]]]:
    """The instance's open tokens, open tasks, pending jobs and subscriptions as rows."""
    tokens = conn.execute(
        select(
            TOKENS.c.id,
            TOKENS.c.node_id,
            TOKENS.c.status,
            TOKENS.c.step,
            TOKENS.c.parent_id,
            TOKENS.c.locals,
        )
        .where(TOKENS.c.instance_id == instance_id, TOKENS.c.status.in_(OPEN_TOKEN))
        .order_by(TOKENS.c.id)
    )
    tasks = conn.execute(
        select(TASKS.c.id, TASKS.c.node_id, TASKS.c.title)
        .where(TASKS.c.instance_id == instance_id, TASKS.c.status == TaskStatus.OPEN)
        .order_by(TASKS.c.id)
    )
    jobs = conn.execute(
        select(JOBS.c.id, JOBS.c.kind, JOBS.c.node_id, JOBS.c.tool, JOBS.c.due_at)
        .where(JOBS.c.instance_id == instance_id, JOBS.c.status == JobStatus.PENDING)
        .order_by(JOBS.c.id)
    )
    subscriptions = conn.execute(
        select(
            SUBSCRIPTIONS.c.id, SUBSCRIPTIONS.c.kind, SUBSCRIPTIONS.c.name, SUBSCRIPTIONS.c.node_id
        )
        .where(SUBSCRIPTIONS.c.instance_id == instance_id)
        .order_by(SUBSCRIPTIONS.c.id)
    )
    return {
        "tokens": [
            {
                "id": row.id,
                "node": row.node_id,
                "status": row.status,
                "step": row.step,
                "scope": row.parent_id,
                "listener": tree.is_listener(row.locals),
            }
            for row in tokens
        ],
        "tasks": [{"id": r.id, "node": r.node_id, "title": r.title} for r in tasks],
        "jobs": [
            {"id": r.id, "kind": r.kind, "node": r.node_id, "tool": r.tool, "due_at": r.due_at}
            for r in jobs
        ],
        "subscriptions": [
            {"id": r.id, "kind": r.kind, "name": r.name, "node": r.node_id} for r in subscriptions
        ],
    }


def _stamp(status: str, variables: dict[str, Any], snapshot: dict[str, list]) -> str:
    """A digest of what a modification is decided on: the status, variables, open tokens,
    pending jobs, open tasks and subscriptions."""
    state = {
        "status": str(status),
        "vars": jsonable(variables),
        "tokens": [[t["id"], t["node"], t["status"], t["step"]] for t in snapshot["tokens"]],
        "jobs": [j["id"] for j in snapshot["jobs"]],
        "tasks": [t["id"] for t in snapshot["tasks"]],
        "subscriptions": [s["id"] for s in snapshot["subscriptions"]],
    }
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _gone(rows: list[dict[str, Any]], others: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of `rows` whose id is not among `others`."""
    kept = {row["id"] for row in others}
    return [row for row in rows if row["id"] not in kept]


def _tokens_named(definition: Definition, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**row, "name": definition.title(row["node"]), "kind": definition.kind(row["node"])}
        for row in rows
        if not row["listener"]
    ]


def _jobs_named(definition: Definition, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**row, "name": definition.title(row["node"])} for row in rows]


def _brief(token: dict[str, Any]) -> dict[str, Any]:
    return {"token": token["id"], "node": token["node"], "name": token["name"]}
