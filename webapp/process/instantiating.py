"""Elements that start a process when their message arrives, as a message start event does:
receive tasks and event-based gateways marked `instantiate` (BPMN 2.0.2 §10.3.3, §10.5.6).

A receive task's own message starts it. An event-based gateway's targets each listen for their
message; the one that arrives starts the process at that target. Read alike by validation,
publish (the event starts kept per process) and the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

#: What an instantiating event-based gateway may lead to: the catches that wait for a message.
MESSAGE_TARGETS = ("messageCatch", "receiveTask")
#: How the targets of an instantiating event-based gateway relate: the first event wins, or
#: every one of them runs in the instance the first one started.
GATEWAY_TYPES = ("exclusive", "parallel")


class Trigger(NamedTuple):
    """A node whose message starts the process; `gateway`: the instantiating event-based
    gateway before it (None for a receive task that starts the process itself)."""

    node_id: str
    message: str
    gateway: str | None


def is_instantiating(node: Mapping[str, Any]) -> bool:
    """Whether the node is a receive task or event-based gateway that starts the process."""
    config = node.get("config") or {}
    return (
        node.get("kind") in ("receiveTask", "eventBasedGateway")
        and config.get("instantiate") is True
        and not node.get("parent")
    )


def triggers(doc: Mapping[str, Any]) -> list[Trigger]:
    """The process's instantiating receive tasks and the message targets of its instantiating
    event-based gateways, in document order, each with its message name."""
    nodes = doc.get("nodes") or {}
    found: list[Trigger] = []
    for node_id, node in nodes.items():
        if not is_instantiating(node):
            continue
        if node.get("kind") == "receiveTask":
            found.append(Trigger(node_id, _message(node), None))
            continue
        for flow in (doc.get("flows") or {}).values():
            target = nodes.get(flow.get("target")) or {}
            if flow.get("source") == node_id and target.get("kind") in MESSAGE_TARGETS:
                found.append(Trigger(str(flow["target"]), _message(target), node_id))
    return [trigger for trigger in found if trigger.message]


def _message(node: Mapping[str, Any]) -> str:
    return str((node.get("config") or {}).get("message") or "").strip()[:200]
