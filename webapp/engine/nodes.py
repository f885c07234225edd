"""What happens when a token enters a node, per node kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from webapp.engine import activities, children, gateways, scopes, signal_events, waits
from webapp.engine.context import jsonable
from webapp.engine.runtime import Step
from webapp.engine.store import TokenRow as Token
from webapp.models import Role, User
from webapp.process.durations import parse_duration
from webapp.process.expressions import ExpressionError, evaluate


def _start(step: Step, token: Token, node: dict[str, Any]) -> None:
    step.leave_single(token)


def _end(step: Step, token: Token, node: dict[str, Any]) -> None:
    """A plain end ends its token; error, escalation and terminate ends act on their scope."""
    config = node.get("config") or {}
    event = config.get("event") or ""
    code = str(config.get("code") or "")
    if event == "message":
        activities.message_end(step, token, node)
        return
    if event == "error":
        scopes.raise_error(step, token, code)
        return
    if event == "escalation":
        scopes.throw(step, token, "escalation", code)
        if token.status not in ("active",):
            return
    if event == "signal":
        thrown = signal_events.broadcast_from(step, token, config)
        if thrown is None:
            return
        token.status = "done"
        step.ended(token)
        signal_events.reach_own(step, thrown)
        return
    if event == "terminate":
        scopes.terminate(step, token)
    token.status = "done"
    step.ended(token)


def _escalate(step: Step, token: Token, node: dict[str, Any]) -> None:
    """An intermediate escalation: thrown to the nearest catcher, then the token goes on."""
    scopes.throw(step, token, "escalation", str((node.get("config") or {}).get("code") or ""))
    if token.status == "active":
        step.leave_single(token)


def _sub_process(step: Step, token: Token, node: dict[str, Any]) -> None:
    scopes.enter_scope(step, token, token.node_id)


def _not_entered(step: Step, token: Token, node: dict[str, Any]) -> None:
    step.fail(
        token,
        "unknown_node",
        f"{step.definition.described(token.node_id)} cannot be entered by a flow.",
    )


def _call(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Evaluate the inputs now; a job starts the child instance (one lock per step)."""
    children.call(step, token, node)


def _exclusive(step: Step, token: Token, node: dict[str, Any]) -> None:
    """The first outgoing flow (document order) whose condition is true, else the default."""
    chosen = gateways.choose(step, token, first=True)
    if chosen is not None:
        flows, default = chosen
        step.leave(token, flows[0], **({"default": True} if default else {}))


def _parallel(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Join: wait for a token on every incoming flow, then continue once; split: fork."""
    node_id = token.node_id
    incoming = step.definition.incoming.get(node_id, [])
    continuing = token
    joined = 1
    if len(incoming) > 1:
        token.status = "waiting"
        scope = token.parent
        arrived: dict[str, Token] = {}
        for other in step.tokens:
            if other.status == "waiting" and other.node_id == node_id and other.parent is scope:
                arrived.setdefault(other.arrived_via or "", other)
        if any(flow_id not in arrived for flow_id in incoming):
            return
        continuing = arrived[token.arrived_via or ""]
        for flow_id in incoming:
            if arrived[flow_id] is not continuing:
                arrived[flow_id].status = "done"
        continuing.status = "active"
        joined = len(incoming)
    outgoing = step.definition.outgoing.get(node_id, [])
    if not outgoing:
        step.fail(
            continuing, "no_flow", f"{step.definition.described(node_id)} has no outgoing flow."
        )
        return
    # Branches move in the order of the outgoing flows (as at an inclusive split), so within
    # one step a signal thrown in a later branch reaches a catch an earlier branch reached.
    step.leave(continuing, outgoing[0][0], **({"joined": joined} if joined > 1 else {}))
    for flow_id, _flow in outgoing[1:]:
        child = step.new_token(node_id, continuing.arrived_via, parent=continuing.parent)
        child.step = continuing.step
        step.leave(child, flow_id)


def _service(step: Step, token: Token, node: dict[str, Any]) -> None:
    """Evaluate the tool's inputs now; a job runs the tool (and its retries) with them."""
    activities.call_tool(step, token, node.get("config") or {})


def _user(step: Step, token: Token, node: dict[str, Any]) -> None:
    config = node.get("config") or {}
    assignee = config.get("assignee") or {}
    kind, value = assignee.get("type"), assignee.get("value")
    if not value:
        kind = None  # no assignee: open to everyone who may work tasks in the partition
    user_id = role_id = None
    if kind == "expression" and value:
        try:
            value = evaluate(value, step.context(token))
        except ExpressionError as error:
            at = step.definition.mentioned(token.node_id)
            step.fail(token, "expression", f"The assignee expression of {at} failed: {error}")
            return
    if kind in ("user", "expression") and isinstance(value, str) and value:
        user_id = step.conn.scalar(select(User.id).where(User.username == value.lower()))
    elif kind == "role" and isinstance(value, str) and value:
        role_id = step.conn.scalar(select(Role.id).where(Role.name == value))
    due_at = None
    if config.get("dueIn"):
        try:
            due_at = step.now + parse_duration(config["dueIn"])
        except ValueError as error:
            step.fail(
                token,
                "due",
                f"The due time of {step.definition.mentioned(token.node_id)} is invalid: {error}",
            )
            return
    try:
        offers, missing = _candidates(step, token, config.get("candidates"))
    except (ExpressionError, ValueError) as error:
        step.fail(
            token,
            "expression",
            f"The candidates of {step.definition.mentioned(token.node_id)} failed: {error}",
        )
        return
    token.status = "waiting"
    step.add_task(
        token,
        node_id=token.node_id,
        title=(node.get("title") or token.node_id)[:200],
        form=config.get("form"),
        assignee_id=user_id,
        candidate_role_id=role_id,
        open_to_partition=kind is None and not offers and not missing,
        due_at=due_at,
        candidates=offers,
    )
    unresolved = kind in ("user", "role", "expression") and user_id is None and role_id is None
    step.history.add(
        "task_created",
        token,
        assignee=value if user_id else None,
        role=value if role_id else None,
        unresolved=jsonable(value) if unresolved else None,
        open_to_partition=True if kind is None and not offers and not missing else None,
        candidates=[name for _, _, name in offers] or None,
        unresolved_candidates=missing or None,
    )


def _candidates(
    step: Step, token: Token, wanted: Any
) -> tuple[list[tuple[str, int, str]], list[str]]:
    """The further roles and users a task is offered to, as ("role" | "user", id, name), and
    the names that name nobody. `rolesFrom`/`usersFrom` expressions add names (raises
    ExpressionError or ValueError when one fails or gives something else)."""
    wanted = wanted if isinstance(wanted, dict) else {}
    roles = [r for r in wanted.get("roles") or [] if isinstance(r, str) and r]
    users = [u for u in wanted.get("users") or [] if isinstance(u, str) and u]
    for key, names in (("rolesFrom", roles), ("usersFrom", users)):
        if isinstance(wanted.get(key), str) and wanted[key].strip():
            names += computed_names(evaluate(wanted[key], step.context(token)), key)
    roles = list(dict.fromkeys(roles))
    users = list(dict.fromkeys(u.lower() for u in users))
    found: list[tuple[str, int, str]] = []
    if roles:
        ids = dict(step.conn.execute(select(Role.name, Role.id).where(Role.name.in_(roles))).all())
        found += [("role", ids[name], name) for name in roles if name in ids]
    if users:
        ids = dict(
            step.conn.execute(select(User.username, User.id).where(User.username.in_(users))).all()
        )
        found += [("user", ids[name], name) for name in users if name in ids]
    named = {name for _, _, name in found}
    return found, [name for name in [*roles, *users] if name not in named]


#: The most names one candidates expression may give (each becomes a row of the task).
MAX_COMPUTED_CANDIDATES = 200


def computed_names(value: Any, key: str) -> list[str]:
    """The names a candidates expression gave, read as Camunda reads them: a text is a
    comma-separated list, a list holds texts, null is none."""
    if value is None:
        return []
    if isinstance(value, str):
        names = [name.strip() for name in value.split(",") if name.strip()]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        names = [name.strip() for name in value if name.strip()]
    else:
        shown = json.dumps(jsonable(value))[:200]
        raise ValueError(f"'{key}' gave {shown}, not a text or a list of texts")
    if len(names) > MAX_COMPUTED_CANDIDATES:
        raise ValueError(f"'{key}' gave {len(names)} names; at most {MAX_COMPUTED_CANDIDATES}")
    return names


def _timer(step: Step, token: Token, node: dict[str, Any]) -> None:
    wait = waits.prepare(step, token, token.node_id, "timer")
    if wait is None:
        return
    token.status = "waiting"
    waits.place(step, token, wait)


def _message(step: Step, token: Token, node: dict[str, Any]) -> None:
    wait = waits.prepare(step, token, token.node_id, "message")
    if wait is None:
        return
    token.status = "waiting"
    waits.place(step, token, wait)


HANDLERS: dict[str, Callable[[Step, Token, dict[str, Any]], None]] = {
    **activities.HANDLERS,
    "startEvent": _start,
    "endEvent": _end,
    "exclusiveGateway": _exclusive,
    "parallelGateway": _parallel,
    "serviceTask": _service,
    "userTask": _user,
    "timerCatch": _timer,
    "messageCatch": _message,
    "receiveTask": _message,
    "subProcess": _sub_process,
    "eventSubProcess": _not_entered,
    "callActivity": _call,
    "boundaryEvent": _start,
    "escalationThrow": _escalate,
    "inclusiveGateway": gateways.inclusive,
    "eventBasedGateway": gateways.event_gateway,
    "signalCatch": signal_events.catch,
    "signalThrow": signal_events.throw,
}
