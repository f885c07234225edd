"""Compare two process documents: which nodes and flows were added, removed or changed, and how.

Pure: the designer's version comparison renders the result as a list and as diagram colours.
A node or flow whose only difference is its position or route counts as ``moved``, not changed;
a flow counts as moved only when its own route changed, not when it just followed a moved node.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from webapp.process.document import normalize
from webapp.process.kinds import KINDS

Status = Literal["added", "removed", "changed", "moved"]

_LAYOUT = {"position", "waypoints"}
_MISSING = object()


@dataclass(frozen=True)
class Change:
    """One value that differs; ``path`` is dotted (``config.assignee.value``, ``fields[1]``)."""

    path: str
    old: Any
    new: Any

    @property
    def label(self) -> str:
        """The path as a person reads it: ``config.dueIn`` is "Due in"."""
        return path_label(self.path)

    @property
    def added(self) -> bool:
        return self.old is None and self.new is not None

    @property
    def removed(self) -> bool:
        return self.new is None and self.old is not None


@dataclass(frozen=True)
class ElementDiff:
    """How one node or flow differs between the two documents."""

    id: str
    element: str  # "node" or "flow"
    status: Status
    label: str
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class DocumentDiff:
    """Every difference, nodes and flows each in document order (old order, then new additions)."""

    nodes: tuple[ElementDiff, ...]
    flows: tuple[ElementDiff, ...]

    @property
    def elements(self) -> tuple[ElementDiff, ...]:
        return self.nodes + self.flows

    @property
    def empty(self) -> bool:
        return not self.nodes and not self.flows

    def count(self, status: Status) -> int:
        return sum(1 for item in self.elements if item.status == status)

    def statuses(self) -> dict[str, Status]:
        """Element id -> status, for colouring a diagram."""
        return {item.id: item.status for item in self.elements}


def diff_documents(old: Mapping[str, Any], new: Mapping[str, Any]) -> DocumentDiff:
    """Return how ``new`` differs from ``old`` (both normalized first)."""
    old_doc, new_doc = normalize(old, deep=False), normalize(new, deep=False)
    nodes = tuple(_element_diffs(old_doc["nodes"], new_doc["nodes"], "node", _node_label)) + tuple(
        _flow_order_changes(old_doc, new_doc)
    )
    titles = {
        node_id: node.get("title") or node_id
        for doc in (old_doc, new_doc)
        for node_id, node in doc["nodes"].items()
    }

    def flow_label(flow_id: str, flow: Mapping[str, Any]) -> str:
        return _flow_label(flow_id, flow, titles)

    shifted = {
        node_id
        for node_id, node in new_doc["nodes"].items()
        if node_id in old_doc["nodes"] and old_doc["nodes"][node_id]["position"] != node["position"]
    }
    flows = tuple(
        item
        for item in _element_diffs(old_doc["flows"], new_doc["flows"], "flow", flow_label)
        if item.status != "moved"
        or _rerouted(old_doc["flows"][item.id], new_doc["flows"][item.id], shifted)
    )
    return DocumentDiff(_merge(nodes), flows)


def _rerouted(before: Mapping[str, Any], after: Mapping[str, Any], shifted: set[str]) -> bool:
    """A flow moved by itself: its own route changed, not just followed a moved end node (or
    was drawn for the first time)."""
    if not before["waypoints"] or not after["waypoints"]:
        return False
    return before["source"] not in shifted and before["target"] not in shifted


def value_changes(old: Any, new: Any, path: str = "") -> Iterator[Change]:
    """Yield leaf differences of two JSON values (dicts by key, same-size lists by index)."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            sub = f"{path}.{key}" if path else str(key)
            before, after = old.get(key, _MISSING), new.get(key, _MISSING)
            if before is _MISSING:
                yield Change(sub, None, after)
            elif after is _MISSING:
                yield Change(sub, before, None)
            else:
                yield from value_changes(before, after, sub)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (before, after) in enumerate(zip(old, new)):
            yield from value_changes(before, after, f"{path}[{index + 1}]")
    elif old != new or type(old) is not type(new):
        yield Change(path, old, new)


def _element_diffs(
    old: Mapping[str, Any], new: Mapping[str, Any], element: str, label: Any
) -> Iterator[ElementDiff]:
    for element_id, before in old.items():
        after = new.get(element_id)
        if after is None:
            yield ElementDiff(element_id, element, "removed", label(element_id, before))
            continue
        changes = tuple(value_changes(_content(before), _content(after)))
        if changes:
            yield ElementDiff(element_id, element, "changed", label(element_id, after), changes)
        elif _layout(before) != _layout(after):
            yield ElementDiff(element_id, element, "moved", label(element_id, after))
    for element_id, after in new.items():
        if element_id not in old:
            yield ElementDiff(element_id, element, "added", label(element_id, after))


def _content(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in _LAYOUT}


def _layout(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in _LAYOUT}


def _flow_order_changes(old: dict[str, Any], new: dict[str, Any]) -> Iterator[ElementDiff]:
    """A gateway tries its outgoing flows in document order, so a new order is a change."""
    for node_id, node in new["nodes"].items():
        if node_id not in old["nodes"]:
            continue
        before = [f for f, flow in old["flows"].items() if flow["source"] == node_id]
        after = [f for f, flow in new["flows"].items() if flow["source"] == node_id]
        shared = [f for f in after if f in before]
        if len(shared) > 1 and [f for f in before if f in shared] != shared:
            kept = [f for f in before if f in shared]
            change = Change("outgoing flow order", kept, shared)
            yield ElementDiff(node_id, "node", "changed", _node_label(node_id, node), (change,))


def _merge(items: tuple[ElementDiff, ...]) -> tuple[ElementDiff, ...]:
    """Fold several diffs of one element (content and flow order) into one entry."""
    merged: dict[str, ElementDiff] = {}
    for item in items:
        previous = merged.get(item.id)
        if previous is None or previous.status == "moved":
            merged[item.id] = (
                item
                if previous is None
                else ElementDiff(item.id, item.element, "changed", item.label, item.changes)
            )
        else:
            merged[item.id] = ElementDiff(
                item.id, item.element, previous.status, previous.label,
                previous.changes + item.changes,
            )  # fmt: skip
    return tuple(merged.values())


# Names the designer's panel gives these settings; any other key is spelled out from camelCase.
_SETTING_LABELS = {
    "config": "",
    "form": "Form field",
    "assignee": "Assignee",
    "type": "type",
    "value": "",
    "dueIn": "Due in",
    "saveTo": "Save result as",
    "inputs": "Input",
    "backoff": "Backoff (seconds)",
    "timeout": "Timeout (seconds)",
    "message": "Message name",
    "correlationKey": "Correlation key",
    "default": "Default flow",
    "source": "From",
    "target": "To",
}
_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def _spelled(key: str) -> str:
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ").split()
    return " ".join(words).lower() if words else key


def path_label(path: str) -> str:
    """A change's dotted path in words: ``config.dueIn`` -> "Due in", ``config.form[2].label``
    -> "Form field 2 label", ``config.inputs.amount`` -> "Input amount"."""
    parts: list[str] = []
    for segment in path.split("."):
        match = _INDEX.match(segment)
        key, index = (match.group(1), match.group(2)) if match else (segment, "")
        # An input's name is the tool's own key: kept as written.
        word = key if parts and parts[-1] == "Input" else _SETTING_LABELS.get(key, _spelled(key))
        if word:
            parts.append(word)
        if index:
            parts.append(index)
    text = " ".join(parts)
    return text[:1].upper() + text[1:] if text else path


def _node_label(node_id: str, node: Mapping[str, Any]) -> str:
    kind = KINDS.get(node.get("kind", ""))
    what = kind.label if kind else str(node.get("kind", "Node"))
    return f"{what} '{node.get('title') or node_id}'"


def _flow_label(flow_id: str, flow: Mapping[str, Any], titles: Mapping[str, str]) -> str:
    title = flow.get("title")
    source, target = str(flow.get("source")), str(flow.get("target"))
    ends = f"{titles.get(source, source)} → {titles.get(target, target)}"
    return f"Flow '{title}' ({ends})" if title else f"Flow {ends}"
