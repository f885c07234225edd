"""Checks of a document's structure: ids, flows that connect, start and end events, flow
counts per kind, and nodes that cannot be reached or cannot finish."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webapp.process.document import is_valid_id
from webapp.process.graph import reachable, sink_components, source_components
from webapp.process.kinds import KINDS
from webapp.process.validation.base import Checks


class StructureChecks(Checks):
    """Checks of ids, flows, starts and ends, flow counts and reachability."""

    if TYPE_CHECKING:

        def check_scope_counts(self) -> tuple[list[int], list[int], set[int | None]]: ...
        def ends_implicitly(self, index: int) -> bool: ...
        def compensation_only(self) -> set[int]: ...
        def in_adhoc(self, index: int) -> bool: ...
        def starts_process(self, index: int) -> bool: ...

    def check_ids(self) -> None:
        """Ids are valid, a flow does not reuse a node's id, and every kind is known."""
        for element_id in [*self.nodes, *self.flows]:
            if not is_valid_id(element_id):
                self.error(
                    "id.invalid",
                    element_id,
                    f"Id '{element_id}' is not valid; use a letter or '_' first, then letters, "
                    "digits, '_', '-' or '.'.",
                )
        for flow_id in self.flows:
            if flow_id in self.nodes:
                self.error(
                    "id.duplicate",
                    flow_id,
                    f"Id '{flow_id}' is used by both a node and a flow; ids must be unique.",
                )
        for node_id, node in self.nodes.items():
            if node["kind"] not in KINDS:
                self.error(
                    "kind.unknown",
                    node_id,
                    f"{self.name(node_id)} has unknown kind '{node['kind']}'.",
                )

    def check_flows(self) -> None:
        """Every flow connects two nodes that exist."""
        for flow_id, flow in self.flows.items():
            missing = [end for end in ("source", "target") if flow[end] not in self.nodes]
            if missing:
                ends = " and ".join(f"{end} '{flow[end]}'" for end in missing)
                self.error(
                    "flow.dangling",
                    flow_id,
                    f"{self.flow_name(flow_id)} connects to a node that does not exist ({ends}).",
                )

    def check_process_starts(self) -> None:
        """At least one start event; at most one of them without an event."""
        top = [i for i in self.members[None] if self.is_kind("startEvent", i)]
        if not top and not any(self.starts_process(i) for i in self.members[None]):
            self.error("start.count", None, "The process needs a start event.")
        plain = [i for i in top if not self.config_of(i).get("event")]
        for extra in plain[1:]:
            listed = ", ".join(self.name(self.graph.ids[i]) for i in plain)
            self.error(
                "start.count",
                self.graph.ids[extra],
                f"The process has {len(plain)} start events without an event ({listed}); keep "
                "one. Others may start on a timer, a message or a signal.",
            )

    def check_counts(self) -> None:
        """Start and end events, and the incoming and outgoing flows each kind takes."""
        graph = self.graph
        starts, ends, self.startless = self.check_scope_counts()
        top = self.members[None]
        self.starts, self.ends = starts, ends
        self.check_process_starts()
        if not set(top) & set(ends):
            self.error("end.missing", None, "The process needs at least one end event.")
        self.no_incoming: set[int] = set()
        self.no_outgoing: set[int] = set()
        outside_flow = self.compensation_only()
        for index, kind in enumerate(self.kinds):
            if kind is None or index in outside_flow:
                continue
            node_id = graph.ids[index]
            ins, outs = len(graph.in_flows[index]), len(graph.out_flows[index])
            if kind.max_in == 0 and ins and kind.name == "startEvent":
                self.error(
                    "start.incoming",
                    node_id,
                    f"{self.name(node_id)} has incoming flows; a start event cannot have any.",
                )
            elif kind.max_in == 0 and ins:
                self.error(
                    "node.incoming_forbidden",
                    node_id,
                    f"{self.name(node_id)} has incoming flows; it starts on an event, not "
                    "from a flow.",
                )
            elif ins < kind.min_in and not self.in_adhoc(index) and not self.starts_process(index):
                self.no_incoming.add(index)
                self.error(
                    "node.incoming_missing",
                    node_id,
                    f"{self.name(node_id)} has no incoming flow, so it can never run.",
                )
            if kind.max_out == 0 and outs and kind.name == "endEvent":
                self.error(
                    "end.outgoing",
                    node_id,
                    f"{self.name(node_id)} has outgoing flows; an end event cannot have any.",
                )
            elif kind.max_out == 0 and outs:
                self.error(
                    "node.outgoing_count",
                    node_id,
                    f"{self.name(node_id)} has outgoing flows; it cannot have any.",
                )
            elif outs == 0 and self.ends_implicitly(index):
                if not self.in_adhoc(index):  # in an ad-hoc one, fragments end so by design
                    self.warning(
                        "node.implicit_end",
                        node_id,
                        f"{self.name(node_id)} has no outgoing flow: its path ends there, as at "
                        "an end event. Add an end event to make that explicit.",
                    )
            elif outs < kind.min_out or (kind.max_out is not None and outs > kind.max_out):
                if outs == 0:
                    self.no_outgoing.add(index)
                    detail = "has no outgoing flow"
                else:
                    detail = f"has {outs} outgoing flows"
                if kind.max_out == 1:
                    hint = "it needs exactly one; use a gateway to branch."
                else:
                    hint = f"it needs at least {kind.min_out}."
                self.error("node.outgoing_count", node_id, f"{self.name(node_id)} {detail}; {hint}")

    def check_reachability(self, comp: list[int]) -> None:
        """Report unreachable and dead-end nodes, only where the cause is (not everything after)."""
        graph = self.graph
        event_scopes = [i for i in range(len(graph)) if self.is_kind("eventSubProcess", i)]
        event_scopes += sorted(self.compensation_only())
        if self.starts:
            roots = [*self.starts, *event_scopes]
            roots += [i for i in range(len(graph)) if self.parent[i] in self.startless]
            from_start = reachable(graph.succ, roots)
            lost = [i for i in range(len(graph)) if not from_start[i] and i not in self.no_incoming]
            for index in source_components(lost, graph.pred, comp):
                node_id = graph.ids[index]
                where = " (it is in a loop nothing leads into)" if self.cyclic[index] else ""
                self.error(
                    "node.unreachable",
                    node_id,
                    f"{self.name(node_id)} cannot be reached from the start event{where}.",
                )
        else:
            from_start = [True] * len(graph)
        if not self.ends:
            return
        to_end = reachable(graph.pred, [*self.ends, *event_scopes])
        ended = {self.parent[i] for i in self.ends}
        stuck = [
            i
            for i in range(len(graph))
            if from_start[i]
            and not to_end[i]
            and i not in self.no_outgoing
            and self.parent[i] in ended
        ]
        for index in sink_components(stuck, graph.succ, comp):
            node_id = graph.ids[index]
            if self.cyclic[index]:
                detail = "is in a loop with no way out to an end event"
            else:
                detail = "cannot reach an end event"
            self.error("node.dead_end", node_id, f"{self.name(node_id)} {detail}.")
