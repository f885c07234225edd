"""Checks of boundary events and of error and escalation codes: what a boundary is
attached to, whether its activity can throw to it, and errors nothing catches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webapp.process.kinds import BOUNDARY_EVENTS, BOUNDARY_HOSTS
from webapp.process.validation.base import Checks
from webapp.process.validation.events import TIMER_KEYS

# What can throw an error or escalation at a boundary's host: a tool's business error (service
# task), an end or throw event inside (sub-process), the called child (call activity).
_THROWN_BY = {
    "error": (
        "serviceTask",
        "sendTask",
        "userTask",
        "subProcess",
        "callActivity",
        "transaction",
        "adHocSubProcess",
    ),
    "escalation": ("userTask", "subProcess", "callActivity", "transaction", "adHocSubProcess"),
}

_HOST_WORDS = {
    "userTask": "user task",
    "serviceTask": "service task",
    "sendTask": "send task",
    "subProcess": "sub-process",
    "callActivity": "call activity",
    "transaction": "transaction",
    "adHocSubProcess": "ad-hoc sub-process",
}


class BoundaryChecks(Checks):
    """Checks of boundary events and of the error and escalation codes thrown and caught."""

    if TYPE_CHECKING:

        def host_index(self, index: int) -> int | None: ...
        def in_event_subprocess(self, index: int) -> bool: ...
        def check_event_settings(
            self, index: int, node_id: str, name: str, config: dict, event: str, cycle_ok: bool
        ) -> None: ...

    def check_boundary(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A boundary event's activity, its event and that event's settings."""
        host = config.get("attachedTo")
        if not host:
            self.error("config.missing", node_id, f"{name} is not attached to an activity.")
        else:
            target = self.graph.index.get(host)
            host_kind = self.kinds[target] if target is not None else None
            if host_kind is None or host_kind.name not in BOUNDARY_HOSTS:
                what = f"'{host}', which is not a node" if target is None else self.name(host)
                self.error(
                    "boundary.host",
                    node_id,
                    f"{name} is attached to {what}; attach it to a user task, service task, "
                    "sub-process or call activity.",
                )
            elif target is not None and self.parent[target] != self.parent[index]:
                self.error(
                    "boundary.host",
                    node_id,
                    f"{name} is attached to {self.name(host)} but sits in another sub-process; "
                    "it must be where its activity is.",
                )
        event = config.get("event")
        if not event:
            self.error(
                "config.missing",
                node_id,
                f"{name} does not say what it reacts to ({', '.join(BOUNDARY_EVENTS)}).",
            )
            return
        if event not in BOUNDARY_EVENTS:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: a boundary event reacts to {', '.join(BOUNDARY_EVENTS)}, not '{event}'.",
            )
            return
        self.check_thrower(node_id, name, host, event)
        interrupting = config.get("interrupting", True)
        if event == "error" and interrupting is False:
            self.error(
                "config.invalid", node_id, f"{name}: an error always interrupts; remove that."
            )
        self.check_event_settings(
            index, node_id, name, config, event, cycle_ok=interrupting is False
        )

    def check_thrower(self, node_id: str, name: str, host: Any, event: str) -> None:
        """An error or escalation boundary only on a host that can throw one to it."""
        target = self.graph.index.get(host) if isinstance(host, str) else None
        kind = self.kinds[target] if target is not None else None
        throwers = _THROWN_BY.get(event)
        if kind is None or throwers is None or kind.name not in BOUNDARY_HOSTS:
            return
        if kind.name not in throwers:
            hosts = " or ".join(_HOST_WORDS[k] for k in throwers)
            self.error(
                "boundary.never_fires",
                node_id,
                f"{name} waits for an {event} from {self.name(str(host))}, but a "
                f"{kind.label.lower()} never throws one; attach it to a {hosts}.",
            )

    def check_duplicate_timers(self) -> None:
        """At most one interrupting timer with the same definition per activity (warning)."""
        seen: dict[tuple[Any, ...], str] = {}
        for node_id, node in self.nodes.items():
            config = node["config"]
            if node["kind"] != "boundaryEvent" or config.get("event") != "timer":
                continue
            if config.get("interrupting", True) is not True:
                continue
            host = config.get("attachedTo")
            if not isinstance(host, str):
                continue
            definition = (host, *(_hashable(config.get(key)) for key in TIMER_KEYS))
            if definition in seen:
                self.warning(
                    "boundary.timer_duplicate",
                    node_id,
                    f"{self.name(node_id)} is the same interrupting timer as "
                    f"{self.name(seen[definition])} on {self.name(host)}; only one of them can "
                    "ever fire.",
                )
            else:
                seen[definition] = node_id

    def check_codes(self) -> None:
        """Errors thrown that nothing catches (warning), codes caught that nothing here throws
        (info: a tool or a called process may still raise them)."""
        thrown: dict[str, list[int]] = {}
        for index in range(len(self.graph)):
            config = self.config_of(index)
            code = config.get("code")
            throws = self.is_kind("endEvent", index) and config.get("event") == "error"
            if throws and isinstance(code, str) and code.strip():
                thrown.setdefault(code, []).append(index)
        for code, throwers in thrown.items():
            for index in throwers:
                if not self._caught(index, code):
                    node_id = self.graph.ids[index]
                    self.warning(
                        "error.uncaught",
                        node_id,
                        f"{self.name(node_id)} throws error '{code}', which no boundary event or "
                        "event sub-process around it catches; the instance would stop with an "
                        "incident.",
                    )
        for index, node_id in enumerate(self.graph.ids):
            event, code = self._catch(index)
            if event == "error" and code and code not in thrown:
                self.info(
                    "error.never_thrown",
                    node_id,
                    f"{self.name(node_id)} catches error '{code}', which no error end event "
                    "throws; only a tool's business error or a called process can raise it.",
                )

    def _catch(self, index: int) -> tuple[str | None, str]:
        """(event, code) of a catching event: an error/escalation boundary or event start."""
        config = self.config_of(index)
        catching = self.is_kind("boundaryEvent", index) or (
            self.is_kind("startEvent", index) and self.in_event_subprocess(index)
        )
        event = config.get("event")
        if not catching or event not in ("error", "escalation"):
            return None, ""
        code = config.get("code")
        return event, code.strip() if isinstance(code, str) else ""

    def _caught(self, index: int, code: str) -> bool:
        """Whether an error thrown at ``index`` meets a catcher on its way out of its scopes."""
        scope = self.parent[index]
        hops = 0
        while hops <= len(self.parent):
            for member in self.members.get(scope, []):
                if self.is_kind("eventSubProcess", member):
                    for start in self.members.get(member, []):
                        event, caught = self._catch(start)
                        if event == "error" and caught in ("", code):
                            return True
            if scope is None:
                return False
            for member in self.members.get(self.parent[scope], []):
                if self.host_index(member) == scope:
                    event, caught = self._catch(member)
                    if event == "error" and caught in ("", code):
                        return True
            scope, hops = self.parent[scope], hops + 1
        return False


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)
