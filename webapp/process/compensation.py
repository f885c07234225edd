"""Which activities of a document compensation can undo, and what undoes each.

Read from the nodes alone (no flows): a compensation boundary event names its handler (the
activity its association points at); a sub-process or transaction may hold a compensation event
sub-process; a sub-process is compensable when something inside it is. The engine and validation
both read this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The kinds whose completion may be compensated through what they hold.
COMPENSABLE_SCOPES = ("subProcess", "transaction")


@dataclass(frozen=True)
class Compensation:
    """`handlers`: activity -> its handler; `event_subprocesses`: scope -> its compensation event
    sub-process; `compensable`: the activities whose completion is remembered."""

    handlers: Mapping[str, str]
    event_subprocesses: Mapping[str, str]
    compensable: frozenset[str]

    @property
    def handler_nodes(self) -> frozenset[str]:
        return frozenset(self.handlers.values())


def is_compensation_boundary(node: Mapping[str, Any]) -> bool:
    return node.get("kind") == "boundaryEvent" and _config(node).get("event") == "compensate"


def _config(node: Mapping[str, Any]) -> Mapping[str, Any]:
    config = node.get("config")
    return config if isinstance(config, Mapping) else {}


def analyse(nodes: Mapping[str, Mapping[str, Any]]) -> Compensation:
    """The compensation structure of a document's `nodes`."""
    handlers: dict[str, str] = {}
    for node in nodes.values():
        if is_compensation_boundary(node):
            config = _config(node)
            host, handler = config.get("attachedTo"), config.get("handler")
            if isinstance(host, str) and isinstance(handler, str) and handler in nodes:
                handlers.setdefault(host, handler)
    starts: dict[str, str] = {}
    for node_id, node in nodes.items():
        parent = node.get("parent")
        if node.get("kind") == "startEvent" and isinstance(parent, str):
            starts.setdefault(parent, node_id)
    event_subprocesses: dict[str, str] = {}
    for node_id, node in nodes.items():
        start = starts.get(node_id)
        scope = node.get("parent")
        if (
            node.get("kind") == "eventSubProcess"
            and isinstance(scope, str)
            and start is not None
            and _config(nodes[start]).get("event") == "compensate"
        ):
            event_subprocesses.setdefault(scope, node_id)
    compensable = set(handlers) | set(event_subprocesses)
    changed = True
    while changed:
        changed = False
        for node_id, node in nodes.items():
            parent = node.get("parent")
            if (
                node_id in compensable
                and isinstance(parent, str)
                and parent not in compensable
                and nodes.get(parent, {}).get("kind") in COMPENSABLE_SCOPES
            ):
                compensable.add(parent)
                changed = True
    return Compensation(handlers, event_subprocesses, frozenset(compensable))
