"""What an ad-hoc sub-process may start: its inner activities without an incoming flow (each
begins a fragment), read the same way by validation, the engine and the pages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Inner nodes that never start a fragment: they wait for an event or hang on a border.
NOT_STARTABLE = ("boundaryEvent", "eventSubProcess", "startEvent", "linkCatch")


def startable(
    nodes: Mapping[str, Mapping[str, Any]], targets: set[str] | frozenset[str], scope: str
) -> list[str]:
    """The ids of the nodes directly inside `scope` that no flow enters (`targets`: the nodes
    some flow enters), in document order, without those NOT_STARTABLE."""
    return [
        node_id
        for node_id, node in nodes.items()
        if node.get("parent") == scope
        and node_id not in targets
        and node.get("kind") not in NOT_STARTABLE
    ]
