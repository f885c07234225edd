"""Moving running instances from one version of a process to another: the element mapping and
the verdict for one instance's positions (tokens, jobs, subscriptions, tasks).

Pure: the engine reads the positions (webapp/engine/migration.py) and applies a plan this module
accepted. Same node ids map to themselves when the kind is the same; anything else needs a
mapping the operator chose. What would need new scopes is refused with its reason, never guessed.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.process.kinds import KINDS

# The multi-instance settings an instance already running depends on.
MI_FIXED = ("collection", "cardinality", "sequential", "elementVariable")
# What a message or signal wait is made of: a subscription made by the old version's settings
# is made again by the new version's when one of these changed.
WAIT_SETTINGS = ("message", "correlationKey", "signal")
# Joins remember the flow each waiting token came by.
JOINS = frozenset({"parallelGateway", "inclusiveGateway", "complexGateway"})

AS_IS = "as_is"
MAPPED = "mapped"
CANNOT = "cannot"


def kind_label(kind: str) -> str:
    """'user task', 'timer event': a kind as it reads inside a sentence."""
    found = KINDS.get(kind)
    return (found.label if found and found.label else kind or "element").lower()


def node_label(nodes: Mapping[str, Any], node_id: str) -> str:
    """'user task 'Review'': the kind and the title (or the id) of a node."""
    node = nodes.get(node_id) or {}
    return f"{kind_label(node.get('kind') or '')} '{node.get('title') or node_id}'"


def _config(nodes: Mapping[str, Any], node_id: str) -> dict[str, Any]:
    return (nodes.get(node_id) or {}).get("config") or {}


def _kind(nodes: Mapping[str, Any], node_id: str) -> str:
    return (nodes.get(node_id) or {}).get("kind") or ""


def _parent(nodes: Mapping[str, Any], node_id: str) -> str | None:
    return (nodes.get(node_id) or {}).get("parent") or None


def check_mapping(
    old: Mapping[str, Any], new: Mapping[str, Any], mapping: Mapping[str, Any], to: int, was: int
) -> dict[str, str]:
    """Problems of an operator's mapping, by source node id: a node neither version has, or a
    target of another kind (named with both kinds). Empty when every pair may be used."""
    problems: dict[str, str] = {}
    for source, target in mapping.items():
        if not isinstance(source, str) or source not in old:
            problems[str(source)] = f"v{was} has no node '{source}'."
        elif not isinstance(target, str) or target not in new:
            problems[source] = f"v{to} has no node '{target}' to map '{source}' to."
        elif _kind(old, source) != _kind(new, target):
            problems[source] = (
                f"'{source}' is a {kind_label(_kind(old, source))} and '{target}' in v{to} is a "
                f"{kind_label(_kind(new, target))}: map it to a {kind_label(_kind(old, source))}."
            )
    return problems


def candidates(old: Mapping[str, Any], new: Mapping[str, Any], node_id: str) -> list[str]:
    """The nodes of the new version a node may map to (same kind), the likeliest first: the
    same id, then by how close the title is."""
    node = old.get(node_id) or {}
    title = str(node.get("title") or node_id).lower()

    def closeness(target: str) -> tuple[int, float, str]:
        other = str((new[target] or {}).get("title") or target).lower()
        return (target != node_id, -difflib.SequenceMatcher(None, title, other).ratio(), target)

    same = [target for target in new if _kind(new, target) == node.get("kind")]
    return sorted(same, key=closeness)


def needs_choice(old: Mapping[str, Any], new: Mapping[str, Any], node_id: str) -> bool:
    """A node with no counterpart of the same id and kind in the new version."""
    return node_id not in new or _kind(new, node_id) != _kind(old, node_id)


@dataclass(frozen=True)
class TokenAt:
    """An open token as the verdict needs it: where it is, its scope, and whether it is a
    multi-instance body, one instance of a body, or an event sub-process's listener."""

    id: int
    node_id: str
    parent_id: int | None
    arrived_via: str | None = None
    failed: bool = False
    body: bool = False
    instance: bool = False
    listener: bool = False


@dataclass(frozen=True)
class Positions:
    """Everything of one instance that names a node: open tokens, pending jobs and
    subscriptions (node, token id), open tasks (node, the field keys it holds values for)."""

    tokens: tuple[TokenAt, ...] = ()
    jobs: tuple[tuple[str, int | None], ...] = ()
    subscriptions: tuple[tuple[str, int], ...] = ()
    tasks: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def signature(self) -> tuple:
        """What the verdict depends on, without ids: equal signatures get equal verdicts."""
        index = {token.id: n for n, token in enumerate(self.tokens)}
        return (
            tuple(
                (
                    t.node_id,
                    index.get(t.parent_id) if t.parent_id is not None else None,
                    t.arrived_via,
                    t.failed,
                    t.body,
                    t.instance,
                    t.listener,
                )
                for t in self.tokens
            ),
            tuple(
                (node, index.get(token) if token is not None else None) for node, token in self.jobs
            ),
            tuple((node, index.get(token)) for node, token in self.subscriptions),
            self.tasks,
        )


@dataclass(frozen=True)
class Verdict:
    """Whether an instance migrates (as is, or using some of the chosen pairs) or why not."""

    outcome: str
    reason: str = ""
    used: tuple[tuple[str, str], ...] = ()

    @property
    def migrates(self) -> bool:
        return self.outcome != CANNOT


class Refused(Exception):
    """An instance that cannot migrate; the message says why, naming the element."""


@dataclass
class Plan:
    """Moving instances from version `was` (nodes `old`) to version `to` (nodes `new`) with the
    operator's `mapping` (already checked by `check_mapping`)."""

    old: Mapping[str, Any]
    new: Mapping[str, Any]
    mapping: Mapping[str, str]
    was: int
    to: int
    new_flows: Mapping[str, Any] = field(default_factory=dict)
    _verdicts: dict[tuple, Verdict] = field(default_factory=dict, repr=False)
    _added: dict[str | None, list[str]] | None = field(default=None, repr=False)

    def target(self, node_id: str) -> str:
        """The node `node_id` becomes in the new version; Refused when there is none."""
        if node_id in self.mapping:
            return self.mapping[node_id]
        if node_id in self.new and _kind(self.new, node_id) == _kind(self.old, node_id):
            return node_id
        label = node_label(self.old, node_id)
        if node_id not in self.new:
            raise Refused(f"It waits at {label}, which v{self.to} no longer has; choose a mapping.")
        raise Refused(
            f"It waits at {label}, which is a {kind_label(_kind(self.new, node_id))} in "
            f"v{self.to}; choose a mapping."
        )

    def wait_changed(self, node_id: str) -> bool:
        """Whether the message name, correlation expression or signal name of the wait at
        `node_id` differs at its target in the new version (then it is subscribed again)."""
        before, after = _config(self.old, node_id), _config(self.new, self.target(node_id))
        return any(before.get(key) != after.get(key) for key in WAIT_SETTINGS)

    def added_event_subprocesses(self) -> dict[str | None, list[str]]:
        """The event sub-processes the new version adds (no node of the old one is or maps to
        them), by the scope they belong to (None: the process): they start listening in every
        open scope of an instance that migrates (computed once per plan)."""
        if self._added is not None:
            return self._added
        kept = set(self.mapping.values())
        added: dict[str | None, list[str]] = {}
        for node_id in self.new:
            if _kind(self.new, node_id) != "eventSubProcess" or node_id in kept:
                continue
            if _kind(self.old, node_id) == "eventSubProcess":
                continue
            added.setdefault(_parent(self.new, node_id), []).append(node_id)
        self._added = added
        return added

    def verdict(self, positions: Positions) -> Verdict:
        """The verdict for one instance's positions (computed once per distinct shape)."""
        key = positions.signature()
        found = self._verdicts.get(key)
        if found is None:
            try:
                used = self._check(positions)
            except Refused as refusal:
                found = Verdict(CANNOT, str(refusal))
            else:
                moved = tuple(sorted((a, b) for a, b in used.items() if a != b))
                found = Verdict(MAPPED if moved else AS_IS, used=moved)
            self._verdicts[key] = found
        return found

    def _check(self, positions: Positions) -> dict[str, str]:
        used: dict[str, str] = {}

        def target(node_id: str) -> str:
            used[node_id] = self.target(node_id)
            return used[node_id]

        tokens = {token.id: token for token in positions.tokens}
        for token in positions.tokens:
            self._token(token, tokens.get(token.parent_id or 0), target)
        for node_id, token_id in (*positions.jobs, *positions.subscriptions):
            mapped = target(node_id)
            holder = tokens.get(token_id or 0)
            if holder is not None and holder.node_id != node_id:
                self._held(node_id, mapped, holder, target(holder.node_id))
        for node_id, held in positions.tasks:
            mapped = target(node_id)
            kept = {
                f.get("key")
                for f in (_config(self.new, mapped).get("form") or {}).get("fields") or []
            }
            lost = [key for key in held if key not in kept]
            if lost:
                raise Refused(
                    f"Its task at {node_label(self.old, node_id)} holds a value for field "
                    f"'{lost[0]}', which the form in v{self.to} no longer has."
                )
        return used

    def _token(self, token: TokenAt, scope: TokenAt | None, target) -> None:
        mapped = target(token.node_id)
        label = node_label(self.old, token.node_id)
        old_mi = _config(self.old, token.node_id).get("multiInstance") or None
        new_mi = _config(self.new, mapped).get("multiInstance") or None
        if token.body or token.instance:
            if not new_mi:
                raise Refused(
                    f"Its multi-instance {label} runs once in v{self.to}; "
                    "moving its instances out of the body is token modification."
                )
            if old_mi and any(old_mi.get(key) != new_mi.get(key) for key in MI_FIXED):
                raise Refused(f"The collection of multi-instance {label} changed in v{self.to}.")
        elif new_mi and not old_mi and not token.listener:
            raise Refused(
                f"{_capital(label)} is multi-instance in v{self.to}; moving a token into a new "
                "multi-instance body is token modification."
            )
        if not token.instance:
            expected = target(scope.node_id) if scope is not None else None
            actual = _parent(self.new, mapped)
            if actual != expected:
                here = (
                    f"inside {node_label(self.new, actual)}" if actual else "at the process level"
                )
                there = (
                    f"inside {node_label(self.old, scope.node_id)}"
                    if scope
                    else "at the process level"
                )
                raise Refused(
                    f"{_capital(node_label(self.new, mapped))} is {here} in v{self.to}, but the "
                    f"token is {there}; moving tokens between scopes is token modification."
                )
        if _kind(self.old, token.node_id) == "callActivity":
            self._call(token.node_id, mapped)
        if _kind(self.old, token.node_id) in JOINS and token.arrived_via:
            flow = self.new_flows.get(token.arrived_via) or {}
            if flow.get("target") != mapped:
                raise Refused(
                    f"A token waits at join {label} having come by flow '{token.arrived_via}', "
                    f"which does not lead there in v{self.to}."
                )
        if not (token.failed or token.instance or token.listener):
            self._boundaries(token.node_id, mapped)

    def _call(self, node_id: str, mapped: str) -> None:
        before, after = _config(self.old, node_id), _config(self.new, mapped)
        pinned = "version" in (before.get("binding"), after.get("binding"))
        same = all(before.get(k) == after.get(k) for k in ("process", "binding", "version"))
        if pinned and not same:
            raise Refused(
                f"Call activity {node_label(self.old, node_id)} is bound to a version "
                f"({after.get('process')} v{after.get('version') or '?'} in v{self.to}); its "
                "running child was started from another."
            )
        if before.get("process") != after.get("process"):
            raise Refused(
                f"Call activity {node_label(self.old, node_id)} calls another process "
                f"in v{self.to}."
            )

    def _boundaries(self, node_id: str, mapped: str) -> None:
        """A waiting activity keeps the boundary events it had; one added in the new version
        would never start for it, so that is refused."""
        had = {self.mapping.get(b, b) for b in _attached(self.old, node_id)}
        for boundary in _attached(self.new, mapped):
            if boundary not in had:
                raise Refused(
                    f"{_capital(node_label(self.new, mapped))}"
                    f" gains {node_label(self.new, boundary)} in v{self.to}, which would not "
                    "start for a token already waiting there."
                )

    def _held(self, node_id: str, mapped: str, holder: TokenAt, host: str) -> None:
        """A job or subscription a token holds for another node (a boundary event, an event
        after an event-based gateway, an event sub-process start) must still be its own."""
        kind = _kind(self.old, node_id)
        if kind == "boundaryEvent":
            fits = _config(self.new, mapped).get("attachedTo") == host
        elif _kind(self.old, holder.node_id) == "eventBasedGateway":
            fits = any(
                f.get("source") == host and f.get("target") == mapped
                for f in self.new_flows.values()
            )
        else:
            fits = _parent(self.new, mapped) == host
        if not fits:
            raise Refused(
                f"{_capital(node_label(self.new, mapped))} "
                f"does not belong to {node_label(self.new, host)} in v{self.to} as "
                f"{node_label(self.old, node_id)} belongs to "
                f"{node_label(self.old, holder.node_id)}."
            )


def _attached(nodes: Mapping[str, Any], host: str) -> Iterable[str]:
    return [
        node_id
        for node_id, node in nodes.items()
        if node.get("kind") == "boundaryEvent"
        and (node.get("config") or {}).get("attachedTo") == host
    ]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
