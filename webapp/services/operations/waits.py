"""What a token waiting at a gateway waits for, in words: the events of an event-based gateway,
and the incoming flows of an inclusive join that a live token can still reach (decided by the
engine's own check, `gateways.awaited`)."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import ColumnElement, select

from webapp.engine import definitions, gateways, tree
from webapp.engine.definitions import Definition
from webapp.extensions import db
from webapp.models import Instance, Token
from webapp.models.statuses import OPEN_TOKEN, TokenStatus
from webapp.process.kinds import EVENT_GATEWAY_TARGETS


class Await(NamedTuple):
    node_id: str
    text: str


def awaits(instance: Instance) -> dict[int, Await]:
    """Token id -> where and for what it waits, for the instance's tokens waiting at an
    event-based gateway, an inclusive join or a complex gateway."""
    definition = definitions.for_version(instance.process_version)
    return {**_at_joins(instance, definition), **_at_complex(instance, definition)}


def _at_complex(instance: Instance, definition: Definition) -> dict[int, Await]:
    """Tokens waiting at a complex gateway for its activation condition (not its reset wait,
    which keeps no scope alive and is no token of work)."""
    gateways_here = [n for n in definition.nodes if definition.kind(n) == "complexGateway"]
    if not gateways_here:
        return {}
    waiting = db.session.execute(
        select(Token.id, Token.node_id, Token.parent_id, Token.arrived_via, Token.locals).where(
            Token.instance_id == instance.id,
            Token.status == TokenStatus.WAITING,
            Token.node_id.in_(gateways_here),
        )
    ).all()
    tokens = [row for row in waiting if not tree.is_listener(row.locals)]
    found = {}
    for row in tokens:
        arrived = {t.arrived_via for t in tokens if _same(t, row)}
        total = len(definition.incoming.get(row.node_id, []))
        text = f"its activation condition ({len(arrived)} of {total} branches arrived)"
        found[row.id] = Await(row.node_id, text)
    return found


def _at_joins(instance: Instance, definition: Definition) -> dict[int, Await]:
    """Tokens waiting at an event-based gateway or an inclusive join."""
    events = [n for n in definition.nodes if definition.kind(n) == "eventBasedGateway"]
    joins = list(definition.inclusive_reach)
    if not events and not joins:
        return {}
    waiting = db.session.execute(
        select(Token.id, Token.node_id, Token.parent_id, Token.arrived_via).where(
            Token.instance_id == instance.id,
            Token.status == TokenStatus.WAITING,
            Token.node_id.in_([*events, *joins]),
        )
    ).all()
    found = {
        row.id: Await(row.node_id, _events_text(definition, row.node_id))
        for row in waiting
        if row.node_id not in definition.inclusive_reach
    }
    at_joins = [row for row in waiting if row.node_id in definition.inclusive_reach]
    if not at_joins:
        return found
    scopes = {row.parent_id for row in at_joins}
    in_scope: ColumnElement[bool] = Token.parent_id.in_([s for s in scopes if s is not None])
    if None in scopes:
        in_scope = in_scope | Token.parent_id.is_(None)
    live = db.session.execute(
        select(Token.node_id, Token.parent_id).where(
            Token.instance_id == instance.id, Token.status.in_(OPEN_TOKEN), in_scope
        )
    ).all()
    for row in at_joins:
        filled = [t.arrived_via or "" for t in at_joins if _same(t, row)]
        nodes = [node_id for node_id, parent_id in live if parent_id == row.parent_id]
        flows = gateways.awaited(definition, row.node_id, filled, nodes)
        found[row.id] = Await(row.node_id, _flows_text(definition, flows))
    return found


def _same(one, other) -> bool:
    return one.node_id == other.node_id and one.parent_id == other.parent_id


def _events_text(definition: Definition, gateway: str) -> str:
    """ "the first of: message 'paid' (Paid), timer (Late)"."""
    parts = []
    for target in gateways.targets(definition, gateway):
        event = EVENT_GATEWAY_TARGETS.get(definition.kind(target), "event")
        config = definition.config(target)
        name = config.get("message") if event == "message" else config.get("signal")
        named = f" '{name}'" if name else ""
        parts.append(f"{event}{named} ({definition.title(target)})")
    return "the first of: " + ", ".join(parts)


def _flows_text(definition: Definition, flows: list[str]) -> str:
    """ "the branches from Review (f4), from Pay (f5)", or that it is about to go on."""
    if not flows:
        return "nothing more: it goes on in its next step"
    parts = []
    for flow_id in flows:
        parts.append(f"from {definition.title(definition.flows[flow_id]['source'])} ({flow_id})")
    return "the branches " + ", ".join(parts)
