"""Checks of scopes: the sub-process each node is in, flows that stay inside it, its start
and end events, what each node may read, and multi-instance settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webapp.process.document import depths, is_identifier
from webapp.process.graph import ancestor_masks, cyclic_nodes, strongly_connected
from webapp.process.kinds import (
    IMPLICIT_END_KINDS,
    LOOP_KEYS,
    MULTI_INSTANCE_KEYS,
    MULTI_INSTANCE_KINDS,
    SCOPE_KINDS,
)
from webapp.process.validation.base import Checks, Site, has_text

#: Activities that finish without a result of their own: `$nodes.<id>` of an instance is null.
RESULTLESS_KINDS = ("subProcess", "manualTask", "transaction")


class ScopeChecks(Checks):
    """Checks of sub-processes and multi-instance; what each node may read."""

    if TYPE_CHECKING:

        def check_adhoc_members(self, scope: int, members: list[int]) -> list[int]: ...
        def starts_process(self, index: int) -> bool: ...

    def index_scopes(self) -> None:
        """Each node's scope (index of its sub-process, None at the process level) and depth."""
        index = self.graph.index
        self.parent: list[int | None] = [
            index.get(node["parent"]) if isinstance(node.get("parent"), str) else None
            for node in self.nodes.values()
        ]
        known = depths({"nodes": self.nodes})
        self.depth = [known.get(node_id, 0) for node_id in self.graph.ids]
        self.by_depth = sorted(range(len(self.parent)), key=self.depth.__getitem__)
        self.members: dict[int | None, list[int]] = {None: []}
        for i, kind in enumerate(self.kinds):
            if kind is not None and kind.name in SCOPE_KINDS:
                self.members.setdefault(i, [])
        for i, p in enumerate(self.parent):
            self.members.setdefault(p, []).append(i)
        self.outer_loops: list[tuple[bool, frozenset[str]]] = [(False, frozenset())] * len(
            self.parent
        )
        for i in self.by_depth:  # what the multi-instance activities around each node give it
            p = self.parent[i]
            if p is not None:
                self.outer_loops[i] = self._with_own_loop(p, self.outer_loops[p])

    def check_flow_scopes(self) -> None:
        """Flows stay inside one scope; cross-scope flows are reported and left out of the graph."""
        graph = self.graph
        for flow_id, flow in self.flows.items():
            source, target = graph.index.get(flow["source"]), graph.index.get(flow["target"])
            if source is None or target is None or self.parent[source] == self.parent[target]:
                continue
            self.error(
                "flow.scope",
                flow_id,
                f"{self.flow_name(flow_id)} connects {self.name(flow['source'])} and "
                f"{self.name(flow['target'])}, which are in different sub-processes; a flow "
                "stays inside its sub-process.",
            )
            graph.succ[source].remove(target)
            graph.pred[target].remove(source)
        for index in range(len(graph)):
            host = self.host_index(index)
            if host is not None:
                graph.succ[host].append(index)
                graph.pred[index].append(host)

    def host_index(self, index: int) -> int | None:
        """The node a boundary event is attached to, when it is a node in the same scope."""
        kind = self.kinds[index]
        if kind is None or kind.name != "boundaryEvent":
            return None
        host = self.nodes[self.graph.ids[index]]["config"].get("attachedTo")
        target = self.graph.index.get(host) if isinstance(host, str) else None
        if target is None or self.parent[target] != self.parent[index]:
            return None
        return target

    def check_scope_counts(self) -> tuple[list[int], list[int], set[int | None]]:
        """Start and end events of every scope: (all starts, all ends, scopes without a start)."""
        starts: list[int] = []
        ends: list[int] = []
        startless: set[int | None] = set()
        for scope, members in self.members.items():
            kind = self.kinds[scope] if scope is not None else None
            own_starts = [
                i
                for i in members
                if self.is_kind("startEvent", i) or (scope is None and self.starts_process(i))
            ]
            own_ends = [
                i for i in members if self.is_kind("endEvent", i) or self.ends_implicitly(i)
            ]
            starts += own_starts
            ends += own_ends
            if scope is None or kind is None:
                if not own_starts:
                    startless.add(scope)
                continue
            if kind.name == "adHocSubProcess":
                starts += self.check_adhoc_members(scope, members)
                continue
            scope_id = self.graph.ids[scope]
            name = self.name(scope_id)
            plain = [i for i in own_starts if not self.config_of(i).get("event")]
            counted = plain if kind.name in ("subProcess", "transaction") else own_starts
            if not counted:
                startless.add(scope)
                what = (
                    "a start event inside"
                    if kind.name in ("subProcess", "transaction")
                    else "a start event that says what starts it"
                )
                self.error("start.count", scope_id, f"{name} needs {what}.")
            for extra in counted[1:]:
                listed = ", ".join(self.name(self.graph.ids[i]) for i in counted)
                self.error(
                    "start.count",
                    self.graph.ids[extra],
                    f"{name} has {len(counted)} start events ({listed}); keep exactly one.",
                )
            if not own_ends:
                self.error("end.missing", scope_id, f"{name} needs an end event inside.")
        return starts, ends, startless

    def ends_implicitly(self, index: int) -> bool:
        """Whether the node is an activity or event without outgoing flows (an implicit end)."""
        kind = self.kinds[index]
        return (
            kind is not None and kind.name in IMPLICIT_END_KINDS and not self.graph.out_flows[index]
        )

    def data_masks(self, ancestors: list[int]) -> list[int]:
        """What each node may read: the nodes before it in its scope, everything inside a
        sub-process that finished before it, and what its enclosing sub-processes may read."""
        size = len(ancestors)
        inside: dict[int, int] = {}
        for i in reversed(self.by_depth):  # innermost first: a scope's mask is complete in time
            p = self.parent[i]
            if p is not None:
                inside[p] = inside.get(p, 0) | (1 << i) | inside.get(i, 0)
        self.inside = inside
        scopes = 0
        for scope in inside:
            scopes |= 1 << scope
        after = list(ancestors)
        for i in range(size):
            hits = ancestors[i] & scopes
            while hits:
                low = hits & -hits
                after[i] |= inside[low.bit_length() - 1]
                hits ^= low
        full = [0] * size
        for i in self.by_depth:
            p = self.parent[i]
            full[i] = after[i] | (full[p] if p is not None else 0)
        return full

    def boundary_data(self, ancestors: list[int]) -> list[int]:
        """What each node may read (see ``data_masks``) when a path leaving a boundary event
        has not seen its activity complete. Sets ``maybe`` (steps inside the activity, or a
        non-interrupting boundary's activity, that may have saved by then) and ``never`` (the
        activity of an interrupting boundary event before the node)."""
        graph = self.graph
        size = len(graph)
        hosts = {i: h for i in range(size) if (h := self.host_index(i)) is not None}
        self.maybe: list[int] = [0] * size
        self.never: list[int] = [0] * size
        if not hosts:
            return self.data_masks(ancestors)
        succ = [list(targets) for targets in graph.succ]
        for boundary, host in hosts.items():
            succ[host].remove(boundary)
            for before in graph.pred[host]:
                if before != boundary:
                    succ[before].append(boundary)
        comp = strongly_connected(succ)
        visible = self.data_masks(ancestor_masks(succ, comp, cyclic_nodes(succ, comp)))
        cuts = {
            boundary: self.config_of(boundary).get("interrupting", True) is not False
            or self.config_of(boundary).get("event") in ("error", "escalation")
            for boundary in hosts
        }
        boundaries = sum(1 << boundary for boundary in hosts)
        for i in range(size):
            hits = visible[i] & boundaries
            while hits:
                low = hits & -hits
                hits ^= low
                boundary = low.bit_length() - 1
                host = hosts[boundary]
                if visible[i] >> host & 1:
                    continue
                if cuts[boundary]:
                    self.never[i] |= 1 << host
                else:
                    self.maybe[i] |= 1 << host
                self.maybe[i] |= self.inside.get(host, 0) & ~visible[i]
        return visible

    def loop_context(self, index: int, include_self: bool) -> tuple[bool, frozenset[str]]:
        """Whether ``$item``/``$loop`` exist at a node, and the element names ``$vars`` gains."""
        context = self.outer_loops[index]
        return self._with_own_loop(index, context) if include_self else context

    def _with_own_loop(
        self, index: int, context: tuple[bool, frozenset[str]]
    ) -> tuple[bool, frozenset[str]]:
        kind = self.kinds[index]
        config = self.config_of(index)
        settings = config.get("multiInstance")
        if kind is None or kind.name not in MULTI_INSTANCE_KINDS:
            return context
        if isinstance(config.get("loop"), dict) and config["loop"]:
            return True, context[1]  # a standard loop's `$loop.index`
        if not isinstance(settings, dict):
            return context
        element = settings.get("element")
        extra = frozenset([element]) if is_identifier(element) else frozenset()
        return True, context[1] | extra

    def has_result(self, index: int) -> bool:
        """Whether an instance of the activity at `index` finishes with a result of its own."""
        kind = self.kinds[index]
        return kind is not None and kind.name not in RESULTLESS_KINDS

    def check_standard_loop(self, index: int, node_id: str, name: str, settings: Any) -> None:
        """A standard loop: on a kind that repeats, not beside multi-instance, a condition (an
        expression) or a maximum, `testBefore` true or false."""
        kind = self.kinds[index]
        if kind is None or kind.name not in MULTI_INSTANCE_KINDS:
            self.error("loop.invalid", node_id, f"{name} cannot loop.")
            return
        if not isinstance(settings, dict):
            return
        if self.config_of(index).get("multiInstance"):
            self.error(
                "loop.invalid",
                node_id,
                f"{name} has both a standard loop and multi-instance; keep one.",
            )
        for key in settings:
            if key not in LOOP_KEYS:
                self.error(
                    "loop.invalid",
                    node_id,
                    f"{name}: the loop has no setting '{key}' (it takes {', '.join(LOOP_KEYS)}).",
                )
        maximum = settings.get("maximum")
        if maximum is not None and (
            not isinstance(maximum, int) or isinstance(maximum, bool) or maximum < 1
        ):
            self.error(
                "loop.invalid", node_id, f"{name}: the loop maximum must be a whole number ≥ 1."
            )
        if "testBefore" in settings and not isinstance(settings["testBefore"], bool):
            self.error("loop.invalid", node_id, f"{name}: 'testBefore' must be true or false.")
        condition = settings.get("condition")
        if has_text(condition):
            after = not settings.get("testBefore")
            what = f"The loop condition of {name}"
            self.sites.append(Site(node_id, what, condition, index, after_run=after))
        elif condition not in (None, "") and not isinstance(condition, str):
            self.error(
                "loop.invalid", node_id, f"{name}: the loop condition must be an expression."
            )
        elif maximum is None:
            self.error(
                "loop.invalid",
                node_id,
                f"{name} loops without a condition or a maximum, so it would never stop.",
            )

    def check_multi_instance(self, index: int, node_id: str, name: str, settings: Any) -> None:
        """Multi-instance settings: on a kind that repeats, one of collection or cardinality,
        expressions."""
        kind = self.kinds[index]
        if kind is None or kind.name not in MULTI_INSTANCE_KINDS:
            self.error(
                "multiInstance.invalid",
                node_id,
                f"{name} cannot repeat; multi-instance is for user tasks, service tasks, "
                "sub-processes and call activities.",
            )
            return
        if not isinstance(settings, dict):
            return
        for key in settings:
            if key not in MULTI_INSTANCE_KEYS:
                self.error(
                    "multiInstance.invalid",
                    node_id,
                    f"{name}: multi-instance has no setting '{key}' (it takes "
                    f"{', '.join(MULTI_INSTANCE_KEYS)}).",
                )
        given = [k for k in ("collection", "cardinality") if has_text(settings.get(k))]
        if len(given) != 1:
            self.error(
                "multiInstance.invalid",
                node_id,
                f"{name}: give multi-instance a collection or a cardinality"
                + (", not both." if given else "."),
            )
        if "sequential" in settings and not isinstance(settings["sequential"], bool):
            self.error(
                "multiInstance.invalid", node_id, f"{name}: 'sequential' must be true or false."
            )
        element = settings.get("element")
        if element not in (None, "") and not is_identifier(element):
            self.error(
                "multiInstance.invalid",
                node_id,
                f"{name}: the element variable must be a plain name like 'reviewer'.",
            )
        for key, label in (
            ("collection", "collection"),
            ("cardinality", "cardinality"),
            ("completion", "completion condition"),
            ("output", "output"),
        ):
            value = settings.get(key)
            if value is None or value == "":
                continue
            if not isinstance(value, str):
                self.error(
                    "multiInstance.invalid", node_id, f"{name}: the {label} must be an expression."
                )
                continue
            outer = key in ("collection", "cardinality")
            self.sites.append(
                Site(
                    node_id,
                    f"The multi-instance {label} of {name}",
                    value,
                    index,
                    outer=outer,
                    own=not outer,
                    output=key == "output",
                )
            )
