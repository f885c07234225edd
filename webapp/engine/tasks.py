"""User tasks: a token waits while a person works the task (assignee, candidates, due time)."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select

from webapp.engine.context import jsonable
from webapp.engine.runtime import Behaviour, Step
from webapp.engine.store import TokenRow as Token
from webapp.models import Role, User
from webapp.models.statuses import HistoryKind, TokenStatus
from webapp.process.durations import parse_duration
from webapp.process.expressions import ExpressionError, evaluate


class UserTask(Behaviour):
    """The token waits at an open task; completing the task completes the activity."""

    def enter(self, step: Step, token: Token, node: dict[str, Any]) -> None:
        _user(step, token, node)


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
        user_id = _named(step, "user", value.lower())
    elif kind == "role" and isinstance(value, str) and value:
        role_id = _named(step, "role", value)
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
    token.status = TokenStatus.WAITING
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
        HistoryKind.TASK_CREATED,
        token,
        assignee=value if user_id else None,
        role=value if role_id else None,
        unresolved=jsonable(value) if unresolved else None,
        open_to_partition=True if kind is None and not offers and not missing else None,
        candidates=[name for _, _, name in offers] or None,
        unresolved_candidates=missing or None,
    )


def _named(step: Step, kind: str, name: str) -> int | None:
    """The id of the user or role `name`, looked up once a step (a batch of multi-instance
    tasks names the same assignee hundreds of times)."""
    key = (kind, name)
    if key not in step.named:
        column, match = (User.id, User.username) if kind == "user" else (Role.id, Role.name)
        step.named[key] = step.conn.scalar(select(column).where(match == name))
    return step.named[key]


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


BEHAVIOURS: dict[str, Behaviour] = {"userTask": UserTask()}
