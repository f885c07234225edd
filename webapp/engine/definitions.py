"""Published versions as the engine reads them, parsed once per process and cached by version id.

A version is immutable, so caching it is not engine state. Flow order decides exclusive gateways:
the stored document keeps it (plain JSON, never JSONB; migration 0006).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from sqlalchemy.orm import Session

from webapp.models import ProcessVersion
from webapp.process import instantiating
from webapp.process.compensation import Compensation, analyse
from webapp.process.document import uses_pool
from webapp.process.naming import Namer, capitalized

CACHE_SIZE = 256


@dataclass(frozen=True)
class Definition:
    """A version's nodes with their outgoing flows (document order) and incoming flow ids.

    Compiled once per version so steps do no graph search: each node's scope (`parent`), each
    scope's plain start event, the boundary events of each host and the event sub-processes of
    each scope (None is the process level). `start` is the process's none start (None when only
    its message, timer or signal starts can start it: `event_starts`).
    """

    version_id: int
    process_key: str
    number: int
    nodes: Mapping[str, dict[str, Any]]
    flows: Mapping[str, dict[str, Any]]
    outgoing: Mapping[str, list[tuple[str, dict[str, Any]]]]
    incoming: Mapping[str, list[str]]
    start: str | None
    parent: Mapping[str, str | None] = field(default_factory=dict)
    starts: Mapping[str, str] = field(default_factory=dict)
    # (scope, link name) -> the link catch event a link throw of that name in that scope jumps to.
    links: Mapping[tuple[str | None, str], str] = field(default_factory=dict)
    boundaries: Mapping[str, list[str]] = field(default_factory=dict)
    event_subprocesses: Mapping[str | None, list[str]] = field(default_factory=dict)
    event_starts: tuple[str, ...] = ()
    # The nodes whose message starts the process (`process.instantiating`), with the
    # instantiating event-based gateway before each (None: a receive task starting it itself).
    triggers: Mapping[str, str | None] = field(default_factory=dict)
    # Per inclusive join: node id -> the join's incoming flows a token there can still reach.
    inclusive_reach: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    # The same per complex gateway: what its reset phase waits for.
    complex_reach: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    # `"variables": "pool"`: outputs and the start input also land in `$vars` (see Step.pool).
    pool: bool = False

    def node(self, node_id: str) -> dict[str, Any]:
        return self.nodes[node_id]

    def config(self, node_id: str) -> dict[str, Any]:
        return self.nodes[node_id].get("config") or {}

    def title(self, node_id: str) -> str:
        return self.nodes.get(node_id, {}).get("title") or node_id

    def kind(self, node_id: str) -> str:
        return self.nodes.get(node_id, {}).get("kind") or ""

    @cached_property
    def namer(self) -> Namer:
        """Names nodes as people see them in incident messages (built once per version)."""
        return Namer(self.nodes, self.flows)

    @cached_property
    def compensation(self) -> Compensation:
        """Handlers, compensation event sub-processes and compensable activities (built once)."""
        return analyse(self.nodes)

    def described(self, node_id: str) -> str:
        """A node at the start of a sentence: "User task 'Review'", "The end event after 'Pay'"."""
        return capitalized(self.namer.node(node_id))

    def mentioned(self, node_id: str) -> str:
        """A node inside a sentence: "'Review'", "the end event after 'Pay'"."""
        return self.namer.short(node_id)

    def mentioned_flow(self, flow_id: str) -> str:
        """A flow inside a sentence: "flow 'Approved'", "the flow from 'A' to 'B'"."""
        text = self.namer.flow(flow_id)
        return "f" + text[1:] if text.startswith("Flow '") else text

    @cached_property
    def conditional(self) -> bool:
        """Whether any node waits for a condition in an instance (a step then re-evaluates them
        on a change); the process's own conditional starts are evaluated by the API instead."""
        return any(
            node.get("kind") == "conditionalCatch"
            or (
                (node.get("config") or {}).get("event") == "conditional"
                and node_id not in self.event_starts
            )
            for node_id, node in self.nodes.items()
        )

    def multi_instance(self, node_id: str) -> dict[str, Any] | None:
        """The node's multi-instance settings, or None when it runs once."""
        settings = self.config(node_id).get("multiInstance")
        return settings if isinstance(settings, dict) and settings else None

    def standard_loop(self, node_id: str) -> dict[str, Any] | None:
        """The node's standard loop settings (`loop`), or None when it runs once."""
        settings = self.config(node_id).get("loop")
        return settings if isinstance(settings, dict) and settings else None

    def catchers(self, node_ids: list[str], event: str, code: str | None) -> str | None:
        """Of these boundary or event-start nodes, the one catching `event` with `code`.

        A catcher naming the code wins over a catch-all (empty code); None when none catches.
        """
        catch_all = None
        for node_id in node_ids:
            config = self.config(node_id)
            if config.get("event") != event:
                continue
            caught = config.get("code") or ""
            if caught and caught == (code or ""):
                return node_id
            if not caught and catch_all is None:
                catch_all = node_id
        return catch_all


# Keyed by (version id, content hash): a reused id (a deleted row on SQLite) cannot match.
_cache: OrderedDict[tuple[int, str], Definition] = OrderedDict()
_lock = threading.Lock()


def _cached(key: tuple[int, str]) -> Definition | None:
    with _lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
        return cached


def for_version(version: ProcessVersion) -> Definition:
    """The definition of `version`, from the cache when this process parsed it before."""
    key = (version.id, version.content_hash)
    cached = _cached(key)
    if cached is not None:
        return cached
    definition = _build(version)
    with _lock:
        _cache[key] = definition
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return definition


def for_version_id(session: Session, version_id: int, content_hash: str) -> Definition:
    """The definition for an instance's version, read from the database only on a cache miss."""
    cached = _cached((version_id, content_hash))
    if cached is not None:
        return cached
    version = session.get(ProcessVersion, version_id)
    if version is None:
        raise LookupError(f"process version {version_id} does not exist")
    return for_version(version)


def _build(version: ProcessVersion) -> Definition:
    doc = version.document
    nodes = doc.get("nodes") or {}
    flows = doc.get("flows") or {}
    outgoing: dict[str, list[tuple[str, dict[str, Any]]]] = {node_id: [] for node_id in nodes}
    incoming: dict[str, list[str]] = {node_id: [] for node_id in nodes}
    for flow_id, flow in flows.items():
        outgoing.setdefault(flow["source"], []).append((flow_id, flow))
        incoming.setdefault(flow["target"], []).append(flow_id)
    parent = {node_id: node.get("parent") or None for node_id, node in nodes.items()}
    starts: dict[str, str] = {}
    root_starts = []
    event_starts = []
    boundaries: dict[str, list[str]] = {}
    event_subprocesses: dict[str | None, list[str]] = {}
    links: dict[tuple[str | None, str], str] = {}
    for node_id, node in nodes.items():
        kind = node.get("kind")
        config = node.get("config") or {}
        scope = parent[node_id]
        if kind == "startEvent":
            if scope is None:
                if config.get("event"):
                    event_starts.append(node_id)
                else:
                    root_starts.append(node_id)
            else:
                starts.setdefault(scope, node_id)
        elif kind == "boundaryEvent":
            boundaries.setdefault(config.get("attachedTo") or "", []).append(node_id)
        elif kind == "eventSubProcess":
            event_subprocesses.setdefault(scope, []).append(node_id)
        elif kind == "linkCatch":
            links.setdefault((scope, str(config.get("link") or "")), node_id)
    triggers = {t.node_id: t.gateway for t in instantiating.triggers(doc)}
    event_starts.extend(triggers)
    if len(root_starts) > 1 or not (root_starts or event_starts):
        raise ValueError(f"version {version.id} has {len(root_starts)} none start events")
    return Definition(
        version_id=version.id,
        process_key=doc.get("key") or "",
        pool=uses_pool(doc),
        number=version.number,
        nodes=nodes,
        flows=flows,
        outgoing=outgoing,
        incoming=incoming,
        start=root_starts[0] if root_starts else None,
        parent=parent,
        starts=starts,
        links=links,
        boundaries=boundaries,
        event_subprocesses=event_subprocesses,
        event_starts=tuple(event_starts),
        triggers=triggers,
        inclusive_reach=_inclusive_reach(nodes, flows, incoming, parent, links),
        complex_reach=_inclusive_reach(nodes, flows, incoming, parent, links, "complexGateway"),
    )


def _inclusive_reach(
    nodes: Mapping[str, dict[str, Any]],
    flows: Mapping[str, dict[str, Any]],
    incoming: Mapping[str, list[str]],
    parent: Mapping[str, str | None],
    links: Mapping[tuple[str | None, str], str],
    kind: str = "inclusiveGateway",
) -> dict[str, dict[str, frozenset[str]]]:
    """For each join of `kind` (more than one incoming flow): which of its incoming flows a token
    at each node of the join's scope can still reach, along flows, boundary events and link
    jumps, without passing through the join. One backward search per incoming flow."""
    throws: dict[str, list[str]] = {}
    for node_id, node in nodes.items():
        if node.get("kind") == "linkThrow":
            key = (parent.get(node_id), str((node.get("config") or {}).get("link") or ""))
            catch = links.get(key)
            if catch is not None:
                throws.setdefault(catch, []).append(node_id)
    reach: dict[str, dict[str, frozenset[str]]] = {}
    for join, node in nodes.items():
        if node.get("kind") != kind or len(incoming.get(join, [])) < 2:
            continue
        scope = parent.get(join)
        found: dict[str, set[str]] = {}
        for flow_id in incoming[join]:
            source = flows[flow_id]["source"]
            if source == join:
                continue
            seen = {source}
            todo = [source]
            while todo:
                current = todo.pop()
                found.setdefault(current, set()).add(flow_id)
                before = [flows[f]["source"] for f in incoming.get(current, [])]
                before.extend(throws.get(current, ()))
                if nodes.get(current, {}).get("kind") == "boundaryEvent":
                    host = (nodes[current].get("config") or {}).get("attachedTo")
                    if host:
                        before.append(host)
                for previous in before:
                    if previous != join and previous not in seen and parent.get(previous) == scope:
                        seen.add(previous)
                        todo.append(previous)
        reach[join] = {node_id: frozenset(flow_ids) for node_id, flow_ids in found.items()}
    return reach
