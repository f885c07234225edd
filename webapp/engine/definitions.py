"""Published versions as the engine reads them, parsed once per process and cached by version id.

A version is immutable, so caching it is not engine state. Flow order decides exclusive gateways:
the stored document keeps it (plain JSON, never JSONB; migration 0006).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from webapp.models import ProcessVersion

CACHE_SIZE = 256


@dataclass(frozen=True)
class Definition:
    """A version's nodes with their outgoing flows (document order) and incoming flow ids."""

    version_id: int
    process_key: str
    number: int
    nodes: Mapping[str, dict[str, Any]]
    flows: Mapping[str, dict[str, Any]]
    outgoing: Mapping[str, list[tuple[str, dict[str, Any]]]]
    incoming: Mapping[str, list[str]]
    start: str

    def node(self, node_id: str) -> dict[str, Any]:
        return self.nodes[node_id]

    def config(self, node_id: str) -> dict[str, Any]:
        return self.nodes[node_id].get("config") or {}

    def title(self, node_id: str) -> str:
        return self.nodes.get(node_id, {}).get("title") or node_id


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
    starts = [node_id for node_id, node in nodes.items() if node.get("kind") == "startEvent"]
    if len(starts) != 1:
        raise ValueError(f"version {version.id} has {len(starts)} start events, not 1")
    return Definition(
        version_id=version.id,
        process_key=doc.get("key") or "",
        number=version.number,
        nodes=nodes,
        flows=flows,
        outgoing=outgoing,
        incoming=incoming,
        start=starts[0],
    )
