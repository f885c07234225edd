"""Compensation in BPMN files: a compensation boundary event's handler is the activity an
association from it points at (`isForCompensation="true"`); a compensation throw's definition
names the activity it undoes (`activityRef`) and whether it waits (`waitForCompletion`).

The reader keeps the association as it is (it is modelling data too); the writer adds one for a
handler that has none, with its diagram edge, and marks each handler `isForCompensation`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from webapp.process.compensation import is_compensation_boundary

from .namespaces import BPMN, q


def _ref(value: str | None) -> str:
    return (value or "").strip().rpartition(":")[2]


def compensation_handlers(
    root: etree._Element,
    nodes: dict[str, Any],
    renamed: Mapping[str, str],
    warn: Callable[[str, str | None, str], None],
) -> None:
    """Set each compensation boundary's `handler` from the association leaving it (what the
    diagram draws wins over a handler our extension data named); a second one is a warning."""
    done: dict[str, str] = {}
    for association in root.iter(q(BPMN, "association")):
        source = _ref(association.get("sourceRef"))
        target = _ref(association.get("targetRef"))
        source, target = renamed.get(source, source), renamed.get(target, target)
        node = nodes.get(source)
        if node is None or target not in nodes or not is_compensation_boundary(node):
            continue
        if source in done:
            warn(
                "import.compensation_handlers",
                source,
                f"Associations to '{done[source]}' and '{target}': the first is its handler",
            )
            continue
        node["config"]["handler"] = target
        done[source] = target


def definition_settings(definition: etree._Element | None) -> dict[str, Any]:
    """What a `compensateEventDefinition` says: the activity it undoes, and whether it waits."""
    if definition is None:
        return {}
    config: dict[str, Any] = {}
    activity = _ref(definition.get("activityRef"))
    if activity:
        config["activity"] = activity
    if definition.get("waitForCompletion") in ("true", "false"):
        config["waitForCompletion"] = definition.get("waitForCompletion") == "true"
    return config


def write_definition(definition: etree._Element, config: dict[str, Any]) -> None:
    """Write the throw's `activityRef` and `waitForCompletion` (removed from `config`)."""
    activity = config.get("activity")
    if isinstance(activity, str) and activity:
        definition.set("activityRef", config.pop("activity"))
    if isinstance(config.get("waitForCompletion"), bool):
        definition.set("waitForCompletion", "true" if config.pop("waitForCompletion") else "false")


def handlers_of(nodes: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each compensation boundary with the handler it names (that is a node)."""
    found = {}
    for node_id, node in nodes.items():
        handler = (node.get("config") or {}).get("handler")
        if is_compensation_boundary(node) and isinstance(handler, str) and handler in nodes:
            found[node_id] = handler
    return found


def kept_associations(items: list[Any]) -> set[tuple[str, str]]:
    """The (source, target) pairs of the associations kept among `items`."""
    return {
        (str(data["attrs"].get("sourceRef")), str(data["attrs"].get("targetRef")))
        for data in items
        if isinstance(data, dict)
        and data.get("tag") == "association"
        and isinstance(data.get("attrs"), dict)
    }
