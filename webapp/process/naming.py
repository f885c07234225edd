"""How messages and labels name a process element for a person: by its title, else by its kind
and where it is ("the start event of 'Review offers'"), never by its generated id alone.

One ``Namer`` per document indexes flows and scopes once, so naming many elements stays linear.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webapp.process.kinds import KINDS

#: What a boundary event or an event start reacts to, named by its word before the kind.
_EVENT_WORDS = frozenset(("timer", "message", "signal", "error", "escalation", "terminate"))
#: Event definitions whose word differs from their name ("compensation boundary event").
_EVENT_NAMES = {"compensate": "compensation", "cancel": "cancel"}


def kind_words(kind: str) -> str:
    """The kind's label in lower case ("user task"), or "element" for a kind Flowdesk lacks."""
    known = KINDS.get(kind)
    return known.label.lower() if known else "element"


def plural(count: int, one: str, many: str | None = None) -> str:
    """`1 message`, `2 messages`: the count with the word that fits it."""
    return f"{count} {one if count == 1 else (many or one + 's')}"


def capitalized(text: str) -> str:
    """`text` with its first letter upper case, for a sentence that begins with a name."""
    return text[:1].upper() + text[1:]


class Namer:
    """Names the nodes and flows of one document (a mapping with ``nodes`` and ``flows``)."""

    def __init__(self, nodes: Mapping[str, Any], flows: Mapping[str, Any] | None = None) -> None:
        self.nodes = nodes
        self.flows = flows or {}
        self._before: dict[str, list[str]] | None = None
        self._after: dict[str, list[str]] = {}
        self._kinds_in: dict[tuple[Any, str], int] = {}
        self._placed: dict[tuple[str, str, str], int] = {}

    def _node(self, node_id: str) -> Mapping[str, Any] | None:
        node = self.nodes.get(node_id)
        return node if isinstance(node, Mapping) else None

    def _title(self, node_id: str) -> str:
        node = self._node(node_id)
        title = node.get("title") if node is not None else None
        return " ".join(title.split()) if isinstance(title, str) else ""

    def _index(self) -> None:
        if self._before is not None:
            return
        self._before = {}
        for flow in self.flows.values():
            if not isinstance(flow, Mapping):
                continue
            source, target = flow.get("source"), flow.get("target")
            if isinstance(source, str) and isinstance(target, str):
                self._before.setdefault(target, []).append(source)
                self._after.setdefault(source, []).append(target)
        for node_id, node in self.nodes.items():  # titled nodes go by their titles
            if isinstance(node, Mapping) and not self._title(node_id):
                key = (node.get("parent"), str(node.get("kind")))
                self._kinds_in[key] = self._kinds_in.get(key, 0) + 1
                for place in self._places(node_id, str(node.get("kind"))):
                    self._placed[place] = self._placed.get(place, 0) + 1

    def _places(self, node_id: str, kind: str) -> list[tuple[str, str, str]]:
        """(kind, "after"/"before", title) for each side with exactly one titled neighbour."""
        assert self._before is not None
        places = []
        for neighbours, word in ((self._before, "after"), (self._after, "before")):
            titled = {self._title(other) for other in neighbours.get(node_id, [])} - {""}
            if len(titled) == 1:
                places.append((kind, word, titled.pop()))
        return places

    def node(self, node_id: str) -> str:
        """ "User task 'Review'" when titled, else the kind and position, such as "the start
        event of 'Review offers'" or "the end event after 'Approve'"."""
        node = self._node(node_id)
        if node is None:
            return f"'{node_id}'"
        title = self._title(node_id)
        kind = str(node.get("kind"))
        if title:
            label = KINDS[kind].label if kind in KINDS else "Element"
            return f"{label} '{title}'"
        return self._untitled(node_id, node, kind, depth=0)

    def _untitled(self, node_id: str, node: Mapping[str, Any], kind: str, depth: int) -> str:
        given = node.get("config")
        config: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        event = str(config.get("event") or "")
        word = event if event in _EVENT_WORDS else _EVENT_NAMES.get(event)
        words = f"{word} {kind_words(kind)}" if word else kind_words(kind)
        host = config.get("attachedTo")
        if kind == "boundaryEvent" and isinstance(host, str) and self._node(host) is not None:
            return f"the {words} on {self.short(host, depth)}"
        self._index()
        parent = node.get("parent")
        scope = parent if isinstance(parent, str) and self._node(parent) is not None else None
        alone = self._kinds_in.get((parent, kind), 0) == 1
        if scope is not None and alone:
            return f"the {words} of {self.short(scope, depth)}"
        for place in self._places(node_id, kind):
            if self._placed.get(place) == 1:
                return f"the {words} {place[1]} '{place[2]}'"
        if scope is None and alone:
            return f"the untitled {words}"
        where = f" in {self.short(scope, depth)}" if scope is not None else ""
        return f"an untitled {words}{where} (id {node_id})"

    def short(self, node_id: str, depth: int = 0) -> str:
        """A node inside a sentence that says what it is: "'Review'", else its description
        ("the exclusive gateway after 'Review'"); `depth` bounds descriptions of neighbours."""
        title = self._title(node_id)
        if title:
            return f"'{title}'"
        node = self._node(node_id)
        if node is None or depth >= 2:
            return f"'{node_id}'"
        return self._untitled(node_id, node, str(node.get("kind")), depth + 1)

    def label(self, node_id: str) -> str:
        """A node in a list or table: its title as it is ("Review"), else its description."""
        return self._title(node_id) or self.short(node_id)

    def labels(self) -> dict[str, str]:
        """Every node's ``label`` by id."""
        return {node_id: self.label(node_id) for node_id in self.nodes}

    def flow(self, flow_id: str) -> str:
        """ "Flow 'Approved'" when titled, else by the nodes it connects."""
        flow = self.flows.get(flow_id)
        if not isinstance(flow, Mapping):
            return f"Flow '{flow_id}'"
        title = flow.get("title")
        if isinstance(title, str) and title.strip():
            return f"Flow '{' '.join(title.split())}'"
        source, target = flow.get("source"), flow.get("target")
        known = [end for end in (source, target) if isinstance(end, str) and self._node(end)]
        if len(known) == 2:
            return f"the flow from {self.short(known[0], 1)} to {self.short(known[1], 1)}"
        return f"Flow '{flow_id}'"

    def element(self, element_id: str) -> str:
        """A node's or a flow's name, whichever `element_id` is."""
        if element_id in self.nodes:
            return self.node(element_id)
        return self.flow(element_id)


def describe(doc: Mapping[str, Any] | None, element_id: str) -> str:
    """One element's name in `doc` (see ``Namer``); for many, make one ``Namer``."""
    doc = doc or {}
    nodes = doc.get("nodes") if isinstance(doc.get("nodes"), Mapping) else {}
    flows = doc.get("flows") if isinstance(doc.get("flows"), Mapping) else {}
    return Namer(nodes or {}, flows or {}).element(element_id)
