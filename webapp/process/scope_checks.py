"""Validation of structured processes: scopes, boundary events, error and escalation codes, call
activities and multi-instance settings.

A mixin of the validator in ``validation.py``: it reads the validator's nodes, graph and sites and
reports through its ``error``/``warning``/``info``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from webapp.process.catalog import ProcessCatalog
from webapp.process.document import depths, is_identifier
from webapp.process.durations import parse_cycle
from webapp.process.graph import Graph, ancestor_masks, cyclic_nodes, strongly_connected
from webapp.process.kinds import (
    BOUNDARY_EVENTS,
    BOUNDARY_HOSTS,
    END_EVENTS,
    EVENT_START_EVENTS,
    IMPLICIT_END_KINDS,
    MULTI_INSTANCE_KEYS,
    MULTI_INSTANCE_KINDS,
    SCOPE_KINDS,
    NodeKind,
)

#: Activities that finish without a result of their own: `$nodes.<id>` of an instance is null.
RESULTLESS_KINDS = ("subProcess", "manualTask")
#: How many called documents the call-cycle search reads at most.
MAX_CALLED_DOCUMENTS = 200
_TIMER_KEYS = ("duration", "date", "cycle")


@dataclass(frozen=True)
class Site:
    """An expression to check: where it lives and which data it may read.

    ``outer`` marks expressions a multi-instance activity evaluates before its instances exist
    (collection, cardinality), ``own`` those evaluated after one (completion, output): they read
    what the steps inside saved, not what the activity saves once all instances are done;
    ``output`` marks the one that also reads the finished instance's result, ``$nodes.<id>``.
    ``assigned`` names the ``$vars`` a script's earlier lines set.
    """

    element_id: str
    what: str
    text: str
    node: int | None
    form_keys: frozenset[str] | None = None
    syntax_reported: bool = False
    outer: bool = False
    own: bool = False
    output: bool = False
    assigned: frozenset[str] = frozenset()


# What can throw an error or escalation at a boundary's host: a tool's business error (service
# task), an end or throw event inside (sub-process), the called child (call activity).
_THROWN_BY = {
    "error": ("serviceTask", "sendTask", "userTask", "subProcess", "callActivity"),
    "escalation": ("userTask", "subProcess", "callActivity"),
}
_HOST_WORDS = {
    "userTask": "user task",
    "serviceTask": "service task",
    "sendTask": "send task",
    "subProcess": "sub-process",
    "callActivity": "call activity",
}


class ScopeChecks:
    """Checks of sub-processes, boundary events, codes, call activities and multi-instance."""

    if TYPE_CHECKING:
        nodes: dict[str, dict[str, Any]]
        flows: dict[str, dict[str, Any]]
        graph: Graph
        kinds: list[NodeKind | None]
        sites: list[Site]
        catalog: ProcessCatalog | None
        key: Any

        def error(self, code: str, element_id: str | None, message: str) -> None: ...
        def warning(self, code: str, element_id: str | None, message: str) -> None: ...
        def info(self, code: str, element_id: str | None, message: str) -> None: ...
        def name(self, node_id: str) -> str: ...
        def flow_name(self, flow_id: str) -> str: ...
        def check_duration(self, node_id: str, name: str, key: str, value: Any) -> None: ...
        def check_process_start(
            self, index: int, node_id: str, name: str, config: dict
        ) -> None: ...
        def check_signal_name(self, index: int, node_id: str, name: str, config: dict) -> None: ...
        def check_end_throw(self, index: int, node_id: str, name: str, config: dict) -> None: ...

    # --- scopes ------------------------------------------------------------------------------

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
            own_starts = [i for i in members if self._is("startEvent", i)]
            own_ends = [i for i in members if self._is("endEvent", i) or self.ends_implicitly(i)]
            starts += own_starts
            ends += own_ends
            if scope is None or kind is None:
                if not own_starts:
                    startless.add(scope)
                continue
            scope_id = self.graph.ids[scope]
            name = self.name(scope_id)
            plain = [i for i in own_starts if not self._config(i).get("event")]
            counted = plain if kind.name == "subProcess" else own_starts
            if not counted:
                startless.add(scope)
                what = (
                    "a start event inside"
                    if kind.name == "subProcess"
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

    def _is(self, kind_name: str, index: int) -> bool:
        kind = self.kinds[index]
        return kind is not None and kind.name == kind_name

    def _config(self, index: int) -> dict[str, Any]:
        return self.nodes[self.graph.ids[index]]["config"]

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
            boundary: self._config(boundary).get("interrupting", True) is not False
            or self._config(boundary).get("event") in ("error", "escalation")
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

    # --- multi-instance ----------------------------------------------------------------------

    def loop_context(self, index: int, include_self: bool) -> tuple[bool, frozenset[str]]:
        """Whether ``$item``/``$loop`` exist at a node, and the element names ``$vars`` gains."""
        context = self.outer_loops[index]
        return self._with_own_loop(index, context) if include_self else context

    def _with_own_loop(
        self, index: int, context: tuple[bool, frozenset[str]]
    ) -> tuple[bool, frozenset[str]]:
        kind = self.kinds[index]
        settings = self._config(index).get("multiInstance")
        if kind is None or kind.name not in MULTI_INSTANCE_KINDS or not isinstance(settings, dict):
            return context
        element = settings.get("element")
        extra = frozenset([element]) if is_identifier(element) else frozenset()
        return True, context[1] | extra

    def has_result(self, index: int) -> bool:
        """Whether an instance of the activity at `index` finishes with a result of its own."""
        kind = self.kinds[index]
        return kind is not None and kind.name not in RESULTLESS_KINDS

    def check_multi_instance(self, index: int, node_id: str, name: str, settings: Any) -> None:
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
        given = [k for k in ("collection", "cardinality") if _text(settings.get(k))]
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

    # --- events ------------------------------------------------------------------------------

    def in_event_subprocess(self, index: int) -> bool:
        parent = self.parent[index]
        return parent is not None and self._is("eventSubProcess", parent)

    def check_event_start(self, index: int, node_id: str, name: str, config: dict) -> None:
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

    def check_message(self, index: int, node_id: str, name: str, config: dict) -> None:
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
            for key in _TIMER_KEYS:
                if config.get(key):
                    self.error("config.invalid", node_id, f"{name}: only timers take a '{key}'.")
        if event == "timer":
            given = [key for key in _TIMER_KEYS if config.get(key)]
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

    def check_boundary(self, index: int, node_id: str, name: str, config: dict) -> None:
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

    def check_end_event(self, index: int, node_id: str, name: str, config: dict) -> None:
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

    def check_escalation_throw(self, index: int, node_id: str, name: str, config: dict) -> None:
        if not (config.get("code") or "").strip():
            self.error("config.missing", node_id, f"{name} needs the escalation code it throws.")

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
            definition = (host, *(_hashable(config.get(key)) for key in _TIMER_KEYS))
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

    # --- error and escalation codes ----------------------------------------------------------

    def check_codes(self) -> None:
        """Errors thrown that nothing catches (warning), codes caught that nothing here throws
        (info: a tool or a called process may still raise them)."""
        thrown: dict[str, list[int]] = {}
        for index in range(len(self.graph)):
            config = self._config(index)
            code = config.get("code")
            throws = self._is("endEvent", index) and config.get("event") == "error"
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
        config = self._config(index)
        catching = self._is("boundaryEvent", index) or (
            self._is("startEvent", index) and self.in_event_subprocess(index)
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
                if self._is("eventSubProcess", member):
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

    # --- call activities ---------------------------------------------------------------------

    def check_call(self, index: int, node_id: str, name: str, config: dict) -> None:
        process = config.get("process")
        binding = config.get("binding", "latest")
        version = config.get("version")
        for input_name, text in (config.get("inputs") or {}).items():
            if not isinstance(text, str):
                self.error("config.invalid", node_id, f"{name}: input '{input_name}' must be text.")
            elif text.strip():
                self.sites.append(Site(node_id, f"Input '{input_name}' of {name}", text, index))
        if binding not in ("latest", "version"):
            self.error(
                "config.invalid",
                node_id,
                f"{name}: binding must be 'latest' or 'version', not '{binding}'.",
            )
        elif binding == "version" and version is None:
            self.error("config.missing", node_id, f"{name} is bound to a version but names none.")
        if version is not None and (not isinstance(version, int) or version < 1):
            self.error("config.invalid", node_id, f"{name}: 'version' must be 1 or more.")
            version = None
        if not isinstance(process, str) or not process.strip():
            what = f"{name} does not say which process to call."
            self.error("call.process_unknown", node_id, what)
            return
        if self.catalog is None:
            return
        if not self.catalog.exists(process):
            self.error(
                "call.process_unknown",
                node_id,
                f"{name} calls process '{process}', which is not published or not available "
                "to this process.",
            )
        elif (
            binding == "version"
            and version is not None
            and not self.catalog.has_version(process, version)
        ):
            self.error(
                "call.version_unknown",
                node_id,
                f"{name} calls version {version} of '{process}', which has no such version.",
            )

    def check_call_cycles(self) -> None:
        """A call activity that leads back to this process (warning: recursion is bounded)."""
        if self.catalog is None or not isinstance(self.key, str) or not self.key:
            return
        read = 0
        for node_id, node in self.nodes.items():
            if node["kind"] != "callActivity":
                continue
            first = _target(node["config"])
            if first is None:
                continue
            chain = self._cycle_from(first, MAX_CALLED_DOCUMENTS - read)
            read += 1 if chain is None else len(chain)
            if chain is not None:
                path = " → ".join([self.key, *chain])
                self.warning(
                    "call.cycle",
                    node_id,
                    f"{self.name(node_id)} starts a chain of calls that comes back to this "
                    f"process ({path}); it stops with an incident at the depth limit.",
                )

    def _cycle_from(self, first: tuple[str, int | None], budget: int) -> list[str] | None:
        assert self.catalog is not None
        stack: list[tuple[tuple[str, int | None], list[str]]] = [(first, [first[0]])]
        seen: set[tuple[str, int | None]] = set()
        while stack and budget > 0:
            (key, version), path = stack.pop()
            if key == self.key:
                return path
            if (key, version) in seen:
                continue
            seen.add((key, version))
            budget -= 1
            called = self.catalog.document(key, version)
            nodes = called.get("nodes") if isinstance(called, Mapping) else None
            for node in (nodes or {}).values():
                if isinstance(node, Mapping) and node.get("kind") == "callActivity":
                    target = _target(node.get("config"))
                    if target is not None:
                        stack.append((target, [*path, target[0]]))
        return None


def _target(config: Any) -> tuple[str, int | None] | None:
    """(process key, pinned version or None) that a call activity's config calls."""
    if not isinstance(config, Mapping):
        return None
    process = config.get("process")
    if not isinstance(process, str) or not process:
        return None
    version = config.get("version") if config.get("binding") == "version" else None
    return process, version if isinstance(version, int) and not isinstance(version, bool) else None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool) or value is None else repr(value)
