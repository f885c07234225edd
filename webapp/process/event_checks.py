"""Validation of the event elements: process-level starts, signals, message throws, links,
event-based gateways, inclusive gateways and script tasks.

A mixin of the validator in ``validation.py`` (as ``scope_checks.py`` is): it reads the
validator's nodes, graph and sites and reports through its ``error``/``warning``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeGuard

from webapp.process import schedules, scripts
from webapp.process.kinds import (
    EMPTY_SCRIPT,
    EVENT_GATEWAY_TARGETS,
    PROCESS_START_EVENTS,
    SCRIPT_LANGUAGES,
    NodeKind,
)
from webapp.process.scope_checks import Site

if TYPE_CHECKING:
    from webapp.process.graph import Graph

Checker = Callable[[int, str, str, dict], None]
_TARGET_WORDS = "a timer, message or signal catch event or a receive task"


class EventChecks:
    """Checks of process-level starts, throws, links, event-based and inclusive gateways and
    scripts."""

    if TYPE_CHECKING:
        nodes: dict[str, dict[str, Any]]
        flows: dict[str, dict[str, Any]]
        graph: Graph
        kinds: list[NodeKind | None]
        sites: list[Site]
        parent: list[int | None]
        members: dict[int | None, list[int]]
        ancestors: list[int]

        def error(self, code: str, element_id: str | None, message: str) -> None: ...
        def warning(self, code: str, element_id: str | None, message: str) -> None: ...
        def name(self, node_id: str) -> str: ...
        def flow_name(self, flow_id: str) -> str: ...
        def _is(self, kind_name: str, index: int) -> bool: ...
        def _config(self, index: int) -> dict[str, Any]: ...
        def host_index(self, index: int) -> int | None: ...
        def check_service_task(self, index: int, node_id: str, name: str, config: dict) -> None: ...
        def check_message(self, index: int, node_id: str, name: str, config: dict) -> None: ...

    #: Variables script tasks write (name → bitset of the script tasks writing it).
    script_writers: dict[str, int]

    def event_checker(self, kind: str) -> Checker | None:
        """The config check of one of these event kinds (None for kinds with nothing to check)."""
        return {
            "sendTask": self.check_service_task,
            "messageThrow": self.check_service_task,
            "receiveTask": self.check_message,
            "signalCatch": self.check_signal_name,
            "signalThrow": self.check_signal_throw,
            "linkThrow": self.check_link_name,
            "linkCatch": self.check_link_name,
            "scriptTask": self.check_script,
        }.get(kind)

    # --- process-level starts ----------------------------------------------------------------

    def check_process_starts(self) -> None:
        """At least one start event; at most one of them without an event."""
        top = [i for i in self.members[None] if self._is("startEvent", i)]
        if not top:
            self.error("start.count", None, "The process needs a start event.")
        plain = [i for i in top if not self._config(i).get("event")]
        for extra in plain[1:]:
            listed = ", ".join(self.name(self.graph.ids[i]) for i in plain)
            self.error(
                "start.count",
                self.graph.ids[extra],
                f"The process has {len(plain)} start events without an event ({listed}); keep "
                "one. Others may start on a timer, a message or a signal.",
            )

    def check_process_start(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A process-level start's event: a timer schedule, a message name or a signal name."""
        event = config.get("event")
        if not event:
            return
        if event not in PROCESS_START_EVENTS:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: a process starts on {', '.join(PROCESS_START_EVENTS)} (or by hand "
                f"without an event), not '{event}'.",
            )
            return
        if event != "timer":
            for key in ("duration", "date", "cycle", "timezone"):
                if config.get(key):
                    self.error("config.invalid", node_id, f"{name}: only timers take a '{key}'.")
        if event == "timer":
            self.check_timer_start(node_id, name, config)
        elif event == "message" and not _text(config.get("message")):
            self.error("config.missing", node_id, f"{name} does not name the message it starts on.")
        elif event == "signal":
            self.check_signal_name(index, node_id, name, config)

    def check_timer_start(self, node_id: str, name: str, config: dict) -> None:
        if not any(config.get(key) for key in ("duration", "date", "cycle")):
            self.error(
                "config.missing",
                node_id,
                f"{name} needs a date, a repeating interval (R/PT1H) or a cron expression "
                "(0 8 * * MON-FRI).",
            )
            return
        try:
            schedules.parse_schedule(config)
        except schedules.ScheduleError as exc:
            code = "cycle.invalid" if exc.field == "cycle" else "config.invalid"
            self.error(code, node_id, f"{name}: '{exc.field}' is not valid: {exc.message}.")

    # --- signals, throws and links -----------------------------------------------------------

    def check_signal_name(self, index: int, node_id: str, name: str, config: dict) -> None:
        if not _text(config.get("signal")):
            self.error("config.missing", node_id, f"{name} does not name its signal.")

    def check_signal_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        self.check_signal_name(index, node_id, name, config)
        for key, text in (config.get("payload") or {}).items():
            if not isinstance(text, str):
                self.error("config.invalid", node_id, f"{name}: payload '{key}' must be text.")
            elif text.strip():
                self.sites.append(Site(node_id, f"Payload '{key}' of {name}", text, index))

    def check_end_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A signal end broadcasts (its name and payload), a message end calls its tool."""
        event = config.get("event")
        if event == "signal":
            self.check_signal_throw(index, node_id, name, config)
        elif event == "message":
            self.check_service_task(index, node_id, name, config)

    def check_link_name(self, index: int, node_id: str, name: str, config: dict) -> None:
        if not _text(config.get("link")):
            self.error("config.missing", node_id, f"{name} needs the name of its link.")

    def link_edges(self) -> None:
        """Join each link throw to the catch of its name in its scope, as a flow would."""
        self.catches: dict[tuple[int | None, str], list[int]] = {}
        for index in range(len(self.graph)):
            link = self._config(index).get("link")
            if self._is("linkCatch", index) and _text(link):
                self.catches.setdefault((self.parent[index], link.strip()), []).append(index)
        for index in range(len(self.graph)):
            link = self._config(index).get("link")
            if not self._is("linkThrow", index) or not _text(link):
                continue
            for catch in self.catches.get((self.parent[index], link.strip()), [])[:1]:
                self.graph.succ[index].append(catch)
                self.graph.pred[catch].append(index)

    def check_links(self) -> None:
        """Exactly one catch per link name and scope, and a catch for every throw."""
        for (_, shared), catches in self.catches.items():
            for extra in catches[1:]:
                node_id = self.graph.ids[extra]
                self.error(
                    "link.duplicate",
                    node_id,
                    f"{self.name(node_id)} catches link '{shared}', as "
                    f"{self.name(self.graph.ids[catches[0]])} does; a link has one catch per "
                    "sub-process.",
                )
        for index in range(len(self.graph)):
            link = self._config(index).get("link")
            if not self._is("linkThrow", index) or not _text(link):
                continue
            if (self.parent[index], link.strip()) not in self.catches:
                node_id = self.graph.ids[index]
                self.error(
                    "link.unpaired",
                    node_id,
                    f"{self.name(node_id)} throws link '{link.strip()}', but no link catch of "
                    "that name is beside it (in the same sub-process).",
                )

    # --- event-based gateways ----------------------------------------------------------------

    def check_event_gateways(self) -> None:
        """What follows an event-based gateway waits only for it, and its flows carry nothing."""
        graph = self.graph
        boundaries: dict[int, list[int]] = {}
        for index in range(len(graph)):
            host = self.host_index(index)
            if host is not None:
                boundaries.setdefault(host, []).append(index)
        for gateway, node_id in enumerate(graph.ids):
            if not self._is("eventBasedGateway", gateway):
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

    # --- inclusive joins ---------------------------------------------------------------------

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
            if (self._is("inclusiveGateway", i) or self._is("parallelGateway", i))
            and len(graph.in_flows[i]) >= 2
        ]
        for join in joins:
            if not self._is("inclusiveGateway", join):
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

    # --- script tasks ------------------------------------------------------------------------

    def check_script(self, index: int, node_id: str, name: str, config: dict) -> None:
        text = config.get("script")
        language = config.get("language", "flowdesk")
        if config.get(EMPTY_SCRIPT) and not text:
            return  # imported empty (jBPM, SpiffWorkflow run it as a no-op): does nothing
        if not _text(text):
            self.error("config.missing", node_id, f"{name} has no script.")
            return
        if language not in SCRIPT_LANGUAGES:
            written = (
                "is in an unspecified language (the file gave no scriptFormat)"
                if language == "unspecified"
                else f"is written in '{language}', which Flowdesk does not run"
            )
            self.error(
                "script.language",
                node_id,
                f"{name} {written}; rewrite it in Flowdesk's language, one "
                "'name = expression' per line.",
            )
            return
        try:
            script = scripts.parse(text)
        except scripts.ScriptError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            self.error("script.syntax", node_id, f"The script of {name}: {where}{exc.message}.")
            return
        lines = text.split("\n")
        assigned: set[str] = set()
        for item in script.assignments:
            source = lines[item.line - 1].partition("=")[2].strip()
            what = f"Line {item.line} of the script of {name}"
            self.sites.append(Site(node_id, what, source, index, assigned=frozenset(assigned)))
            assigned.add(item.name)
        for variable in script.names:
            self.script_writers[variable] = self.script_writers.get(variable, 0) | 1 << index


def _text(value: Any) -> TypeGuard[str]:
    return isinstance(value, str) and bool(value.strip())
