"""Structured instances for operators: the tokens inside sub-processes and multi-instance
activities, the children a call activity started, the caller of a child, and incidents of
called children shown on their callers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from webapp.engine.tree import is_body, is_listener
from webapp.extensions import db
from webapp.models import Instance, Token, User
from webapp.models.statuses import OPEN_TOKEN, UNFINISHED_INSTANCE, InstanceStatus, TokenStatus
from webapp.permissions import can
from webapp.services import scopes
from webapp.services.operations import waits

TOKENS_SHOWN = 200
CHILDREN_SHOWN = 50
# Live calls nest at most this deep (the engine's call depth limit is lower).
MAX_CALL_LEVELS = 32


@dataclass(frozen=True)
class TokenRow:
    id: int
    node_id: str
    status: str
    since: datetime
    place: scopes.Place
    child: tuple[int, str] | None  # a call activity's child: (id, status)
    progress: tuple[int, int] | None = None  # a multi-instance activity's (done, total)
    awaits: str | None = None  # at an event-based gateway or inclusive join: what it waits for


@dataclass(frozen=True)
class TokenTable:
    rows: list[TokenRow]
    total: int


def token_table(instance: Instance) -> TokenTable:
    """The instance's open tokens in creation order (scopes before what runs inside them), each
    with its scope and multi-instance position; listeners show as "listening"."""
    condition = (Token.instance_id == instance.id, Token.status.in_(OPEN_TOKEN))
    total = db.session.scalar(select(func.count()).select_from(Token).where(*condition)) or 0
    rows = db.session.execute(
        select(
            Token.id, Token.node_id, Token.status, Token.parent_id, Token.locals, Token.updated_at
        )
        .where(*condition)
        .order_by(Token.id)
        .limit(TOKENS_SHOWN)
    ).all()
    infos = scopes.load_tokens(row.id for row in rows)
    children: dict[int | None, tuple[int, str]] = {}
    if any(row.status == TokenStatus.WAITING for row in rows):
        found = db.session.execute(
            select(Instance.parent_token_id, Instance.id, Instance.status)
            .where(
                Instance.parent_id == instance.id,
                Instance.parent_token_id.in_([row.id for row in rows]),
            )
            .order_by(Instance.id)
        )
        children = {token_id: (child_id, status) for token_id, child_id, status in found}
    document = instance.process_version.document
    awaited = {token_id: wait.text for token_id, wait in waits.awaits(instance).items()}
    shown = []
    for row in rows:
        status = "listening" if is_listener(row.locals) else row.status
        place = scopes.place_of(document, row.id, infos)
        progress = None
        if is_body(row.locals):
            progress = (int(row.locals.get("completed") or 0), int(row.locals.get("count") or 0))
        shown.append(
            TokenRow(
                row.id,
                row.node_id,
                status,
                row.updated_at,
                place,
                children.get(row.id),
                progress,
                awaited.get(row.id),
            )
        )
    return TokenTable(shown, total)


def multi_instance_progress(rows: Iterable[Any]) -> dict[str, dict[str, int]]:
    """{node id: {done, total}} over the open multi-instance bodies among token rows (with
    `node_id` and `locals`); bodies at the same node (inside a repeated scope) add up."""
    found: dict[str, dict[str, int]] = {}
    for row in rows:
        if not is_body(row.locals):
            continue
        entry = found.setdefault(row.node_id, {"done": 0, "total": 0})
        entry["done"] += int(row.locals.get("completed") or 0)
        entry["total"] += int(row.locals.get("count") or 0)
    return found


def calls_by_node(instance_id: int) -> dict[str, dict[str, int]]:
    """{call activity node id: {count, latest}}: how many children each call started, and the
    newest one's id."""
    rows = db.session.execute(
        select(Instance.parent_node_id, func.count(), func.max(Instance.id))
        .where(Instance.parent_id == instance_id)
        .group_by(Instance.parent_node_id)
    )
    return {node: {"count": count, "latest": latest} for node, count, latest in rows if node}


@dataclass(frozen=True)
class Child:
    id: int
    process_key: str
    version: int
    status: str
    node_id: str
    error: dict[str, Any] | None
    created_at: datetime


def called(instance: Instance) -> tuple[list[Child], int]:
    """The instances this one's call activities started, newest first, and how many in all."""
    condition = Instance.parent_id == instance.id
    total = db.session.scalar(select(func.count()).select_from(Instance).where(condition)) or 0
    if not total:
        return [], 0
    rows = db.session.execute(
        select(
            Instance.id,
            Instance.process_key,
            Instance.version,
            Instance.status,
            Instance.parent_node_id,
            Instance.error,
            Instance.created_at,
        )
        .where(condition)
        .order_by(Instance.id.desc())
        .limit(CHILDREN_SHOWN)
    )
    return [
        Child(row[0], row[1], row[2], row[3], row[4] or "", row[5], row[6]) for row in rows
    ], total


@dataclass(frozen=True)
class Caller:
    id: int
    process_key: str
    node_id: str
    node_title: str
    scope: str
    visible: bool


def caller(user: User, instance: Instance) -> Caller | None:
    """The instance whose call activity started this one, with the call's node by its title."""
    if instance.parent_id is None:
        return None
    parent = db.session.get(Instance, instance.parent_id)
    node_id = instance.parent_node_id or ""
    if parent is None:
        return None
    document = parent.process_version.document
    return Caller(
        parent.id,
        parent.process_key,
        node_id,
        scopes.title(document, node_id),
        scopes.scope_text(document, node_id),
        can(user, "instances.read", parent.partition_id),
    )


@dataclass(frozen=True)
class ChildIncident:
    id: int
    process_key: str
    error: dict[str, Any]
    depth: int


def child_incidents(root_ids: Iterable[int]) -> dict[int, list[ChildIncident]]:
    """{instance id: failed instances its calls started, directly or further down}: only
    unfinished children are followed, one query per level of calls."""
    found: dict[int, list[ChildIncident]] = {}
    root_of = {root: root for root in root_ids}
    frontier = sorted(root_of)
    depth = 0
    while frontier and depth < MAX_CALL_LEVELS:
        depth += 1
        rows = db.session.execute(
            select(
                Instance.id,
                Instance.parent_id,
                Instance.process_key,
                Instance.status,
                Instance.error,
            )
            .where(Instance.parent_id.in_(frontier), Instance.status.in_(UNFINISHED_INSTANCE))
            .order_by(Instance.id)
        ).all()
        frontier = []
        for row in rows:
            root = root_of[row.parent_id]
            root_of[row.id] = root
            frontier.append(row.id)
            if row.status == InstanceStatus.FAILED:
                incident = ChildIncident(row.id, row.process_key, row.error or {}, depth)
                found.setdefault(root, []).append(incident)
    return found
