"""Checks of events: process and event sub-process starts, timers, messages, signals,
conditions, links, end events and escalation throws."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from webapp.process import schedules
from webapp.process.durations import parse_cycle
from webapp.process.kinds import END_EVENTS, EVENT_START_EVENTS, PROCESS_START_EVENTS
from webapp.process.validation.base import Checks, Site, has_text

#: The settings that define a timer; an event of another kind takes none of them.
TIMER_KEYS = ("duration", "date", "cycle")
_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class EventChecks(Checks):
    """Checks of start, catch, throw and end events and of links."""

    if TYPE_CHECKING:

        def check_service_task(self, index: int, node_id: str, name: str, config: dict) -> None: ...

    def in_event_subprocess(self, index: int) -> bool:
        """Whether the node at `index` is directly inside an event sub-process."""
        parent = self.parent[index]
        return parent is not None and self.is_kind("eventSubProcess", parent)

    def check_event_start(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A start event's event: a process-level start's, none inside a sub-process, and the one an
        event sub-process starts on."""
        event = config.get("event")
        if self.parent[index] is None:
            self.check_process_start(index, node_id, name, config)
            return
        if not self.in_event_subprocess(index):
            if event:
                self.error(
                    "config.invalid",
                    node_id,
                    f"{name} has the event '{event}', but a sub-process starts on its token, "
                    "not on an event (use an event sub-process).",
                )
            return
        if not event:
            self.error(
                "config.missing",
                node_id,
                f"{name} starts an event sub-process: say which event starts it "
                f"({', '.join(EVENT_START_EVENTS)}).",
            )
            return
        if event not in EVENT_START_EVENTS:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: '{event}' cannot start an event sub-process (use "
                f"{', '.join(EVENT_START_EVENTS)}).",
            )
            return
        if event == "error" and config.get("interrupting") is False:
            self.error(
                "config.invalid", node_id, f"{name}: an error always interrupts; remove that."
            )
        self.check_event_settings(index, node_id, name, config, event, cycle_ok=True)

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
        elif event == "message" and not has_text(config.get("message")):
            self.error("config.missing", node_id, f"{name} does not name the message it starts on.")
        elif event == "signal":
            self.check_signal_name(index, node_id, name, config)
        elif event == "conditional":
            self.check_condition(index, node_id, name, config)

    def check_timer_start(self, node_id: str, name: str, config: dict) -> None:
        """A timer start's schedule: a date, a repeating interval or a cron expression."""
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

    def check_timer(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A timer catch waits for one of a duration, a date or a cycle (its first occurrence)."""
        duration, when, cycle = config.get("duration"), config.get("date"), config.get("cycle")
        given = [key for key in TIMER_KEYS if config.get(key)]
        if len(given) > 1:
            listed = " and a ".join(given)
            self.error("config.invalid", node_id, f"{name} has a {listed}; keep one.")
        elif not given:
            needs = "a duration, a date or a cycle"
            self.error("config.missing", node_id, f"{name} needs {needs} to wait for.")
        self.check_duration(node_id, name, "duration", duration)
        if when:
            self.sites.append(Site(node_id, f"The date of {name}", when, index))
        if cycle:
            try:
                parse_cycle(cycle)
            except ValueError as exc:
                self.error("cycle.invalid", node_id, f"{name}: 'cycle' is not valid: {exc}.")

    def check_message(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A message wait names its message and has a correlation key to find its instance."""
        if not (config.get("message") or "").strip():
            self.error("config.missing", node_id, f"{name} does not name the message it waits for.")
        key = config.get("correlationKey") or ""
        if not key.strip():
            self.error(
                "config.missing",
                node_id,
                f"{name} has no correlation key, so a message cannot find its instance.",
            )
        else:
            self.sites.append(Site(node_id, f"The correlation key of {name}", key, index))

    def check_event_settings(
        self, index: int, node_id: str, name: str, config: dict, event: str, cycle_ok: bool
    ) -> None:
        """The settings of a timer, message, error or escalation event (start or boundary)."""
        if event != "timer":
            for key in TIMER_KEYS:
                if config.get(key):
                    self.error("config.invalid", node_id, f"{name}: only timers take a '{key}'.")
        if event == "timer":
            given = [key for key in TIMER_KEYS if config.get(key)]
            if not given:
                self.error(
                    "config.missing", node_id, f"{name} needs a duration, a date or a cycle."
                )
            elif len(given) > 1:
                listed = " and ".join(given)
                self.error("config.invalid", node_id, f"{name} has a {listed}; keep one.")
            self.check_duration(node_id, name, "duration", config.get("duration"))
            if config.get("date"):
                self.sites.append(Site(node_id, f"The date of {name}", config["date"], index))
            cycle = config.get("cycle")
            if cycle:
                if not cycle_ok:
                    self.error(
                        "config.invalid",
                        node_id,
                        f"{name} repeats, which only a non-interrupting timer can; set "
                        "interrupting to false or use a duration.",
                    )
                try:
                    parse_cycle(cycle)
                except ValueError as exc:
                    self.error("cycle.invalid", node_id, f"{name}: 'cycle' is not valid: {exc}.")
        elif event == "message":
            self.check_message(index, node_id, name, config)
        elif event == "signal":
            self.check_signal_name(index, node_id, name, config)
        if event == "conditional":
            self.check_condition(index, node_id, name, config)
        elif config.get("condition"):
            self.error("config.invalid", node_id, f"{name}: only conditional events take one.")

    def check_condition(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A conditional event has a condition (an expression); its `watch` names variables."""
        condition = config.get("condition")
        if not has_text(condition):
            self.error(
                "config.missing", node_id, f"{name} needs the condition it waits for to hold."
            )
        else:
            what = f"The condition of {name}"
            self.sites.append(Site(node_id, what, condition, index, awaits=True))
        for watched in str(config.get("watch") or "").split(","):
            if watched.strip() and not _VARIABLE.match(watched.strip()):
                self.error(
                    "config.invalid",
                    node_id,
                    f"{name}: '{watched.strip()}' in 'watch' is not a variable name.",
                )

    def check_signal_name(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A signal event or start names its signal."""
        if not has_text(config.get("signal")):
            self.error("config.missing", node_id, f"{name} does not name its signal.")

    def check_signal_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A signal throw names its signal; its payload values are expressions."""
        self.check_signal_name(index, node_id, name, config)
        for key, text in (config.get("payload") or {}).items():
            if not isinstance(text, str):
                self.error("config.invalid", node_id, f"{name}: payload '{key}' must be text.")
            elif text.strip():
                self.sites.append(Site(node_id, f"Payload '{key}' of {name}", text, index))

    def check_end_event(self, index: int, node_id: str, name: str, config: dict) -> None:
        """An end event's event, and the code an error or escalation end throws."""
        event = config.get("event") or ""
        if event not in END_EVENTS:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: an end event throws an error, an escalation, a signal or a message, "
                f"or terminates, not '{event}'.",
            )
        elif event in ("error", "escalation") and not (config.get("code") or "").strip():
            self.error("config.missing", node_id, f"{name} needs the {event} code it throws.")
        elif event not in ("error", "escalation") and config.get("code"):
            self.warning(
                "config.unknown_key",
                node_id,
                f"{name} has a code, which only error and escalation end events throw.",
            )
        if event in ("signal", "message"):
            self.check_end_throw(index, node_id, name, config)

    def check_end_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A signal end broadcasts (its name and payload), a message end calls its tool."""
        event = config.get("event")
        if event == "signal":
            self.check_signal_throw(index, node_id, name, config)
        elif event == "message":
            self.check_service_task(index, node_id, name, config)

    def check_escalation_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        """An escalation throw names the code it throws."""
        if not (config.get("code") or "").strip():
            self.error("config.missing", node_id, f"{name} needs the escalation code it throws.")

    def check_link_name(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A link event names its link."""
        if not has_text(config.get("link")):
            self.error("config.missing", node_id, f"{name} needs the name of its link.")

    def link_edges(self) -> None:
        """Join each link throw to the catch of its name in its scope, as a flow would."""
        self.catches: dict[tuple[int | None, str], list[int]] = {}
        for index in range(len(self.graph)):
            link = self.config_of(index).get("link")
            if self.is_kind("linkCatch", index) and has_text(link):
                self.catches.setdefault((self.parent[index], link.strip()), []).append(index)
        for index in range(len(self.graph)):
            link = self.config_of(index).get("link")
            if not self.is_kind("linkThrow", index) or not has_text(link):
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
            link = self.config_of(index).get("link")
            if not self.is_kind("linkThrow", index) or not has_text(link):
                continue
            if (self.parent[index], link.strip()) not in self.catches:
                node_id = self.graph.ids[index]
                self.error(
                    "link.unpaired",
                    node_id,
                    f"{self.name(node_id)} throws link '{link.strip()}', but no link catch of "
                    "that name is beside it (in the same sub-process).",
                )
