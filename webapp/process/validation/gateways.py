"""Checks of gateways: conditions and defaults of exclusive and inclusive splits, joins
that can wait forever, and what may follow an event-based gateway."""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING

from webapp.process.graph import FlowAnalysis, reachable
from webapp.process.kinds import CONDITION_GATEWAYS, EVENT_GATEWAY_TARGETS, INCLUSIVE_SPLITS
from webapp.process.validation.base import Checks, Site

# Conditional flows of one inclusive split up to which the deadlock check lists every set taken.
INCLUSIVE_CHOICES = 8

# Joins besides the parallel one where parallel branches meet.
_BRANCH_JOINS = ("inclusiveGateway", "complexGateway")

_TARGET_WORDS = "a timer, message, signal or conditional catch event or a receive task"


class GatewayChecks(Checks):
    """Checks of exclusive, inclusive, parallel and event-based gateways."""

    if TYPE_CHECKING:

        def host_index(self, index: int) -> int | None: ...

    def check_complex_gateway(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A complex gateway's activation condition reads `$gateway` and the data before it."""
        activation = config.get("activation")
        if activation:
            what = f"The activation condition of {name}"
            self.sites.append(Site(node_id, what, activation, index, gateway=True))

    def check_exclusive_gateways(self) -> None:
        """Conditions and default marks: where they are ignored, and an exclusive or inclusive
        split's."""
        for flow_id, flow in self.flows.items():
            source = self.nodes.get(flow["source"])
            source_kind = source["kind"] if source is not None else None
            exclusive = source_kind in CONDITION_GATEWAYS
            if source_kind == "eventBasedGateway":
                pass  # reported by check_event_gateways
            elif flow["condition"] is not None and (not exclusive or flow["default"]):
                why = "it is the default flow" if exclusive else "only flows leaving an exclusive "
                why += "" if exclusive else "gateway are conditional"
                self.warning(
                    "flow.condition_ignored",
                    flow_id,
                    f"{self.flow_name(flow_id)} has a condition that is ignored: {why}.",
                )
            if flow["default"] and not exclusive and source_kind != "eventBasedGateway":
                self.warning(
                    "flow.default_ignored",
                    flow_id,
                    f"{self.flow_name(flow_id)} is marked as default, which only means something "
                    "on a flow leaving an exclusive gateway.",
                )
            if flow["condition"] is not None and source is not None:
                self.sites.append(
                    Site(
                        flow_id,
                        f"The condition of {self.flow_name(flow_id)}",
                        flow["condition"],
                        self.graph.index[flow["source"]],
                    )
                )
        for index, node_id in enumerate(self.graph.ids):
            outs = self.graph.out_flows[index]
            kind = self.nodes[node_id]["kind"]
            if kind not in CONDITION_GATEWAYS or len(outs) < 2:
                continue
            flows = [self.flows[flow_id] for flow_id, _ in outs]
            defaults = sum(1 for f in flows if f["default"])
            bare = sum(1 for f in flows if f["condition"] is None and not f["default"])
            name = self.name(node_id)
            if defaults > 1:
                self.error(
                    "gateway.default_multiple",
                    node_id,
                    f"{name} has {defaults} default flows; mark at most one as default.",
                )
            if kind in INCLUSIVE_SPLITS:  # a flow without a condition is always taken
                if defaults and bare:
                    self.warning(
                        "gateway.default_unused",
                        node_id,
                        f"{name} always takes its flows without a condition, so its default "
                        "flow is never taken; give those flows conditions or remove the default.",
                    )
                continue
            if bare:
                several = f"{bare} outgoing flows" if bare > 1 else "an outgoing flow"
                self.error(
                    "gateway.condition_missing",
                    node_id,
                    f"{name} has {several} without a condition; give each one a condition "
                    "or mark one as default.",
                )
            elif not defaults:
                self.warning(
                    "gateway.default_missing",
                    node_id,
                    f"{name} has no default flow; when no condition is true the instance fails. "
                    "Mark one flow as default to be safe.",
                )

    def check_parallel(self) -> None:
        """Parallel joins that can wait forever, and parallel branches that never meet."""
        graph = self.graph
        parallel = [i for i, k in enumerate(self.kinds) if k and k.name == "parallelGateway"]
        joins = [i for i in parallel if len(graph.in_flows[i]) >= 2]
        splits: dict[int, list[frozenset[str]] | None] = {
            i: None
            for i, k in enumerate(self.kinds)
            if k
            and k.name in ("exclusiveGateway", "eventBasedGateway")
            and len(graph.out_flows[i]) >= 2
            and self.config_of(i).get("gatewayType") != "parallel"  # all its events run
        }
        for i, k in enumerate(self.kinds):
            if k and k.name in INCLUSIVE_SPLITS and len(graph.out_flows[i]) >= 2:
                splits[i] = self._inclusive_choices(i)
        flow = FlowAnalysis(graph, self.cyclic, self.ancestors, self.starts, self.ends)
        for join in joins:
            message = self._join_deadlock(flow, splits, join)
            if message:
                self.error("parallel.deadlock", graph.ids[join], message)
        inclusive = [
            i
            for i, k in enumerate(self.kinds)
            if k and k.name in _BRANCH_JOINS and len(graph.in_flows[i]) >= 2
        ]
        joined = reachable(graph.pred, joins + inclusive)
        for split in parallel:
            outs = graph.out_flows[split]
            loose = [flow_id for flow_id, target in outs if not joined[target]]
            if len(outs) >= 2 and loose:
                listed = ", ".join(self.flow_name(f) for f in loose)
                self.warning(
                    "parallel.unjoined",
                    graph.ids[split],
                    f"{self.name(graph.ids[split])} starts branches that never meet at a parallel "
                    f"or inclusive gateway ({listed}); each finishes on its own.",
                )

    def _inclusive_choices(self, split: int) -> list[frozenset[str]] | None:
        """The sets of outgoing flows inclusive `split` may take together: every unconditional
        flow plus any of the conditional ones, the default only when that is none. None (judge
        each flow alone, as for an exclusive split) when there are too many to list."""
        outs = [flow_id for flow_id, _ in self.graph.out_flows[split]]
        default = [f for f in outs if self.flows[f]["default"]]
        optional = [f for f in outs if self.flows[f]["condition"] is not None and f not in default]
        always = [f for f in outs if f not in default and f not in optional]
        if len(optional) > INCLUSIVE_CHOICES:
            return None
        choices = {
            frozenset(always).union(taken) or frozenset(default[:1])
            for size in range(len(optional) + 1)
            for taken in combinations(optional, size)
        }
        return sorted((choice for choice in choices if choice), key=sorted)

    def _join_deadlock(
        self, flow: FlowAnalysis, splits: dict[int, list[frozenset[str]] | None], join: int
    ) -> str | None:
        """Why parallel join `join` can wait forever, or None."""
        name = self.name(self.graph.ids[join])
        own = flow.self_fed_inputs(join)
        if own:
            listed = ", ".join(self.flow_name(f) for f in own)
            return (
                f"{name} waits for {listed}, which only gets a token after the gateway itself "
                "has fired, so the instance would wait forever. Merge a loop back with an "
                "exclusive gateway."
            )
        culprit = next(
            (x for x, choices in splits.items() if flow.separates(x, join, choices)), None
        )
        if culprit is not None:
            return (
                f"{name} waits for all {len(self.graph.in_flows[join])} incoming flows, but "
                f"{self.name(self.graph.ids[culprit])} may send the token down only some of the "
                "paths, so the instance would wait forever. Merge those paths with an exclusive "
                "or inclusive gateway."
            )
        again = flow.refilled_inputs(join)
        if again:
            listed = ", ".join(self.flow_name(f) for f in again)
            return (
                f"{name} can get a token again on {listed} after it has fired, but its other "
                "incoming flows cannot, so the instance would wait there forever. Let the loop "
                "go back before the branches split, or merge it with an exclusive gateway."
            )
        return None

    def check_inclusive(self) -> None:
        """An inclusive join and another join in a cycle that wait for each other.

        Each holds a token on an input the other cannot feed and waits for an input only the
        other feeds, so neither fires. Joins inside a loop back to their common split are
        fine: the split feeds every input, so the first condition fails.
        """
        graph = self.graph
        joins = [
            i
            for i in range(len(graph))
            if (self.is_kind("inclusiveGateway", i) or self.is_kind("parallelGateway", i))
            and len(graph.in_flows[i]) >= 2
        ]
        for join in joins:
            if not self.is_kind("inclusiveGateway", join):
                continue
            for other in joins:
                if other == join or self.parent[other] != self.parent[join]:
                    continue
                if self._waits_for(join, other) and self._waits_for(other, join):
                    node_id = graph.ids[join]
                    self.error(
                        "inclusive.deadlock",
                        node_id,
                        f"{self.name(node_id)} and {self.name(graph.ids[other])} each wait for "
                        "a token the other holds, so the instance can wait forever. Join the "
                        "branches in the order they split.",
                    )
                    break

    def _waits_for(self, join: int, other: int) -> bool:
        """Whether ``join`` has an input ``other`` cannot feed and one only ``other`` feeds."""
        if not self.ancestors[join] >> other & 1:
            return False
        fed = [
            (self.ancestors[source] | 1 << source) >> other & 1
            for _, source in self.graph.in_flows[join]
        ]
        return any(fed) and not all(fed)

    def check_event_gateways(self) -> None:
        """What follows an event-based gateway waits only for it, and its flows carry nothing."""
        graph = self.graph
        boundaries: dict[int, list[int]] = {}
        for index in range(len(graph)):
            host = self.host_index(index)
            if host is not None:
                boundaries.setdefault(host, []).append(index)
        for gateway, node_id in enumerate(graph.ids):
            if not self.is_kind("eventBasedGateway", gateway):
                continue
            gateway_name = self.name(node_id)
            for flow_id, target in graph.out_flows[gateway]:
                flow = self.flows[flow_id]
                if flow["condition"] is not None or flow["default"]:
                    self.error(
                        "gateway.event_condition",
                        flow_id,
                        f"{self.flow_name(flow_id)} leaves {gateway_name} with a condition or a "
                        "default mark; the event that happens first decides, so remove it.",
                    )
                kind = self.kinds[target]
                target_id = graph.ids[target]
                if kind is None:
                    continue
                if kind.name not in EVENT_GATEWAY_TARGETS:
                    self.error(
                        "gateway.event_target",
                        node_id,
                        f"{gateway_name} leads to {self.name(target_id)}; after an event-based "
                        f"gateway comes {_TARGET_WORDS}.",
                    )
                elif len(graph.in_flows[target]) > 1:
                    self.error(
                        "gateway.event_target",
                        target_id,
                        f"{self.name(target_id)} follows {gateway_name} and has other incoming "
                        "flows; it may wait only for that gateway.",
                    )
                elif kind.name == "receiveTask" and boundaries.get(target):
                    self.error(
                        "gateway.event_boundary",
                        target_id,
                        f"{self.name(target_id)} follows {gateway_name} and carries boundary "
                        "events, which never get the chance to wait; remove them.",
                    )
