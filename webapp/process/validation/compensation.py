"""Checks of compensation and transactions: a compensation boundary names exactly one handler,
a handler has no sequence flows, a cancel end sits directly in a transaction, a cancel boundary
only on one, and a throw names an activity of its scope."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webapp.process.compensation import analyse, is_compensation_boundary
from webapp.process.kinds import BOUNDARY_HOSTS
from webapp.process.validation.base import Checks


class CompensationChecks(Checks):
    """Compensation boundaries and handlers, compensation throws, transactions and cancels."""

    if TYPE_CHECKING:
        parent: list[int | None]

        outer_loops: list[tuple[bool, frozenset[str]]]

        def in_event_subprocess(self, index: int) -> bool: ...
        def loop_context(self, index: int, include_self: bool) -> tuple[bool, frozenset[str]]: ...

    def compensation_only(self) -> set[int]:
        """Compensation boundaries and their handlers: outside the sequence flow, so the flow
        counts and reachability checks leave them alone."""
        found = getattr(self, "_compensation_only", None)
        if found is None:
            found = set()
            for node_id, node in self.nodes.items():
                if is_compensation_boundary(node):
                    found.add(self.graph.index[node_id])
                    handler = (node.get("config") or {}).get("handler")
                    if isinstance(handler, str) and handler in self.graph.index:
                        found.add(self.graph.index[handler])
            self._compensation_only = found
        return found

    def handler_data(self, visible: list[int]) -> list[int]:
        """What a handler (and each step inside it) may read: what its activity could, the
        activity's own result and what completed inside it, and one instance's `$item` and
        `$loop` (it runs with the data as the activity, or that instance of it, completed)."""
        inside: dict[int, int] = getattr(self, "inside", {})
        for node in self.nodes.values():
            if not is_compensation_boundary(node):
                continue
            config = node.get("config") or {}
            host = self.graph.index.get(str(config.get("attachedTo") or ""))
            handler = self.graph.index.get(str(config.get("handler") or ""))
            if host is None or handler is None:
                continue
            extra = visible[host] | (1 << host) | inside.get(host, 0)
            looped, elements = self.loop_context(host, include_self=True)
            members = inside.get(handler, 0)
            for index in [handler, *(i for i in range(len(visible)) if members >> i & 1)]:
                visible[index] |= extra
                was_looped, was_elements = self.outer_loops[index]
                self.outer_loops[index] = (looped or was_looped, was_elements | elements)
        return visible

    def check_compensation_boundary(
        self, index: int, node_id: str, name: str, config: dict
    ) -> None:
        """A compensation boundary names one handler beside it, with no flows of its own."""
        if config.get("event") == "cancel":
            host = self.graph.index.get(str(config.get("attachedTo") or ""))
            if host is not None and not self.is_kind("transaction", host):
                self.error(
                    "boundary.cancel_host",
                    node_id,
                    f"{name} is a cancel boundary event on {self.name(self.graph.ids[host])}; "
                    "only a transaction is cancelled, attach it to one.",
                )
            return
        if config.get("event") != "compensate":
            return
        if self.graph.out_flows[index]:
            self.error(
                "compensation.flows",
                node_id,
                f"{name} has outgoing sequence flows; a compensation boundary event leads to its "
                "handler by an association only.",
            )
        handler = config.get("handler")
        if not isinstance(handler, str) or not handler:
            self.error(
                "compensation.handler_missing",
                node_id,
                f"{name} names no compensation handler; connect it to exactly one activity "
                "(marked for compensation) by an association.",
            )
            return
        target = self.graph.index.get(handler)
        kind = self.kinds[target] if target is not None else None
        if target is None or kind is None or kind.name not in BOUNDARY_HOSTS:
            self.error(
                "compensation.handler_invalid",
                node_id,
                f"{name}: its handler '{handler}' is not an activity.",
            )
            return
        if self.parent[target] != self.parent[index]:
            self.error(
                "compensation.handler_invalid",
                node_id,
                f"{name}: its handler {self.name(handler)} must be in the same scope.",
            )
        if self.graph.in_flows[target] or self.graph.out_flows[target]:
            self.error(
                "compensation.handler_flows",
                handler,
                f"{self.name(handler)} is a compensation handler and has sequence flows; a "
                "handler runs only when its activity is compensated, remove them.",
            )
        users = [
            other
            for other, node in self.nodes.items()
            if is_compensation_boundary(node)
            and (node.get("config") or {}).get("handler") == handler
        ]
        if len(users) > 1 and users[0] != node_id:
            self.error(
                "compensation.handler_shared",
                node_id,
                f"{name}: {self.name(handler)} is already the handler of "
                f"{self.name(users[0])}; each compensation boundary needs its own handler.",
            )

    def check_compensation_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A compensation throw (or end) names, if anything, a compensable activity of its
        scope; a cancel end sits directly in a transaction that has a cancel boundary event."""
        event = config.get(
            "event", "compensate" if self.is_kind("compensationThrow", index) else ""
        )
        if event == "cancel":
            self._check_cancel_end(index, node_id, name)
            return
        if event != "compensate":
            return
        activity = config.get("activity")
        scope = self.parent[index]
        if scope is not None and self.in_event_subprocess(index):
            scope = self.parent[scope]
        if not activity:
            compensable = analyse(self.nodes).compensable
            if not any(self.parent[self.graph.index[other]] == scope for other in compensable):
                self.warning(
                    "compensation.nothing",
                    node_id,
                    f"{name} has nothing to undo: no activity of its scope has a compensation "
                    "handler.",
                )
            return
        target = self.graph.index.get(str(activity))
        if target is None or self.parent[target] != scope:
            self.error(
                "compensation.activity",
                node_id,
                f"{name} compensates '{activity}', which is not an activity of its own scope.",
            )
        elif str(activity) not in analyse(self.nodes).compensable:
            self.warning(
                "compensation.nothing",
                node_id,
                f"{name} compensates {self.name(str(activity))}, which has no compensation "
                "handler: nothing would be undone.",
            )

    def check_compensation_reached(self) -> None:
        """A handler runs only when a compensation throw, compensation end or cancel end in its
        activity's scope or one around it can reach it (a warning otherwise)."""
        throwers = set()
        for index in range(len(self.graph)):
            event = self.config_of(index).get("event")
            if self.is_kind("compensationThrow", index) or (
                self.is_kind("endEvent", index) and event in ("compensate", "cancel")
            ):
                scope = self.parent[index]
                if scope is not None and self.in_event_subprocess(index):
                    scope = self.parent[scope]
                throwers.add(scope)
        for node_id, node in self.nodes.items():
            if not is_compensation_boundary(node):
                continue
            host = self.graph.index.get(str((node.get("config") or {}).get("attachedTo") or ""))
            scope = self.parent[host] if host is not None else None
            while scope is not None and scope not in throwers:
                scope = self.parent[scope]
            if scope is None and None not in throwers:
                self.warning(
                    "compensation.never_thrown",
                    node_id,
                    f"{self.name(node_id)}: no compensation throw, compensation end or cancel "
                    "end in its scope or around it, so its handler never runs.",
                )

    def _check_cancel_end(self, index: int, node_id: str, name: str) -> None:
        scope = self.parent[index]
        if scope is None or not self.is_kind("transaction", scope):
            self.error(
                "cancel.outside_transaction",
                node_id,
                f"{name} is a cancel end event outside a transaction; put it directly inside "
                "the transaction it cancels.",
            )
            return
        transaction = self.graph.ids[scope]
        if not any(
            node["kind"] == "boundaryEvent"
            and (node.get("config") or {}).get("event") == "cancel"
            and (node.get("config") or {}).get("attachedTo") == transaction
            for node in self.nodes.values()
        ):
            self.error(
                "cancel.no_boundary",
                node_id,
                f"{name} cancels {self.name(transaction)}, which has no cancel boundary event to "
                "leave by; add one.",
            )

    def check_compensation_start(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A compensation start begins an event sub-process of a sub-process or transaction."""
        if config.get("event") != "compensate":
            return
        holder = self.parent[index]
        scope = self.parent[holder] if holder is not None else None
        if scope is None or not (
            self.is_kind("subProcess", scope) or self.is_kind("transaction", scope)
        ):
            self.error(
                "compensation.start_scope",
                node_id,
                f"{name}: a compensation event sub-process belongs in a sub-process or "
                "transaction, whose compensation it runs.",
            )
