"""Published versions as the engine reads them, parsed once per process and cached by version id.

A version is immutable, so caching it is not engine state. Flow order decides exclusive gateways;
versions stored as JSONB on PostgreSQL before migration 0006 lost their key order, so for them the
order is recovered from the version's BPMN XML and checked against the version's content hash.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree
from sqlalchemy.orm import Session

from webapp.models import ProcessVersion
from webapp.process.bpmn.namespaces import BPMN, q
from webapp.process.document import content_hash

log = logging.getLogger(__name__)

CACHE_SIZE = 256
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


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


def in_document_order(version: ProcessVersion) -> dict[str, Any]:
    """The version's document with nodes and flows in the order they were published."""
    doc = version.document
    if content_hash(doc) == version.content_hash:
        return doc
    order = _xml_order(version.bpmn_xml)
    rank = {element_id: index for index, element_id in enumerate(order)}
    last = len(rank)
    reordered = dict(doc)
    for part in ("nodes", "flows"):
        items = (doc.get(part) or {}).items()
        reordered[part] = dict(sorted(items, key=lambda item: rank.get(item[0], last)))
    if content_hash(reordered) != version.content_hash:
        log.warning("version %s: document order could not be verified", version.id)
    return reordered


def _xml_order(xml: str) -> list[str]:
    try:
        root = etree.fromstring(xml.encode("utf-8"), _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return []
    process = root.find(q(BPMN, "process"))
    if process is None:
        return []
    return [child.get("id") for child in process if isinstance(child.tag, str) and child.get("id")]


def _build(version: ProcessVersion) -> Definition:
    doc = in_document_order(version)
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
