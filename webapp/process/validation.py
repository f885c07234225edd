"""Check a process document before it can be deployed: structure, graph, config and expressions.

``validate`` returns every problem at once, each with a stable ``code`` the UI can key on, the id
of the element to highlight and a message for the modeller. Errors block deployment; warnings
do not. Graph rules run in linear time (see ``graph.py``), so large documents validate quickly.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Container, Iterable, Mapping
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any, Literal

from webapp.process import expressions
from webapp.process.catalog import ProcessCatalog, as_catalog
from webapp.process.document import (
    UNPOOLED_KINDS,
    DocumentError,
    is_identifier,
    is_valid_id,
    normalize,
    uses_pool,
)
from webapp.process.durations import parse_duration
from webapp.process.event_checks import EventChecks
from webapp.process.forms import field_expressions, iter_fields, validate_form_spec
from webapp.process.graph import (
    FlowAnalysis,
    Graph,
    ancestor_masks,
    build_graph,
    cyclic_nodes,
    reachable,
    sink_components,
    source_components,
    strongly_connected,
)
from webapp.process.kinds import (
    ASSIGNEE_TYPES,
    KINDS,
    REFERENCE_KEYS,
    NodeKind,
    config_type_ok,
)
from webapp.process.naming import Namer, capitalized
from webapp.process.scope_checks import ScopeChecks, Site
from webapp.process.tools import ToolSpec

Severity = Literal["error", "warning", "info"]

#: Where a person reads how to add a tool (named by `tool.unknown` and a Java implementation).
TOOL_DOCS = "docs/engine.md#writing-a-tool"
# Conditional flows of one inclusive split up to which the deadlock check lists every set taken.
INCLUSIVE_CHOICES = 8
_TYPE_WORDS = {
    (dict,): "an object",
    (str,): "text",
    (int,): "a whole number",
    (int, float): "a number",
}

# Every code validate() can emit, with what it means; codes are stable for the UI and API.
CODES: dict[str, str] = {
    "document.invalid": "the document is not structurally a process document",
    "id.invalid": "a node or flow id is not a valid id",
    "id.duplicate": "a flow uses the id of a node",
    "kind.unknown": "a node has a kind Flowdesk does not know",
    "flow.dangling": "a flow connects to a node that does not exist",
    "start.count": "there is no start event, or more than one",
    "end.missing": "there is no end event",
    "start.incoming": "a start event has incoming flows",
    "end.outgoing": "an end event has outgoing flows",
    "node.incoming_missing": "a node other than the start has no incoming flow",
    "node.outgoing_count": "a node has too few or too many outgoing flows for its kind",
    "node.unreachable": "a node cannot be reached from the start event",
    "node.dead_end": "a node cannot reach an end event",
    "node.implicit_end": "(warning) an activity or event has no outgoing flow, so its path ends "
    "there",
    "gateway.condition_missing": "an exclusive gateway has unconditional non-default flows",
    "gateway.default_multiple": "an exclusive gateway has several default flows",
    "gateway.default_missing": "(warning) an exclusive gateway has no default flow",
    "gateway.default_unused": "(warning) an inclusive gateway's default flow is never taken",
    "flow.condition_ignored": "(warning) a condition that is never evaluated",
    "flow.default_ignored": "(warning) a default mark on a flow not leaving an exclusive gateway",
    "expression.syntax": "an expression does not parse",
    "expression.foreign": "an expression is in another engine's language (JUEL `${...}`, FEEL "
    "`= ...`), kept as an imported file had it",
    "expression.reference": "an expression reads data that is missing (warning: may be missing)",
    "parallel.deadlock": "a parallel join can wait forever",
    "parallel.unjoined": "(warning) a parallel branch never reaches a parallel join",
    "task.role_unknown": "a user task is offered to a group that is not a Flowdesk role",
    "task.user_unknown": "(warning) a user task is assigned to a user who does not exist",
    "form.invalid": "a form spec is invalid",
    "tool.unknown": "a service task calls a tool that is not registered",
    "tool.missing": "a service task (or send task, message throw) names no tool",
    "tool.input_missing": "a service task does not provide a required tool input",
    "tool.input_unknown": "(warning) a service task provides an input the tool does not take",
    "duration.invalid": "a duration is not a valid ISO-8601 duration",
    "saveTo.invalid": "saveTo is not a plain identifier",
    "config.invalid": "a config value has the wrong type or value",
    "config.missing": "a required config value is missing",
    "config.unknown_key": "(warning) a config key the node kind does not use",
    "flow.scope": "a flow connects nodes in different sub-processes",
    "node.incoming_forbidden": "a boundary event or event sub-process has incoming flows",
    "boundary.host": "a boundary event is not on an activity that takes one, or not beside it",
    "boundary.never_fires": "an error or escalation boundary on an activity that never throws one",
    "boundary.timer_duplicate": "(warning) two interrupting timers of the same definition on "
    "one activity",
    "cycle.invalid": "a timer cycle is not an ISO-8601 repeating interval",
    "error.uncaught": "(warning) an error end event throws a code nothing around it catches",
    "error.never_thrown": "(info) a catcher waits for an error code no end event throws",
    "call.process_unknown": "a call activity names no process, or one that is not published",
    "call.version_unknown": "a call activity is bound to a version that does not exist",
    "call.cycle": "(warning) a call activity leads back to its own process",
    "multiInstance.invalid": "multi-instance settings that cannot run",
    "gateway.event_target": "an event-based gateway leads to something other than a timer, "
    "message or signal catch or a receive task, or to one with other incoming flows",
    "gateway.event_condition": "a flow leaving an event-based gateway has a condition or default",
    "gateway.event_boundary": "a receive task after an event-based gateway has boundary events",
    "inclusive.deadlock": "an inclusive join and another join wait for each other's token",
    "link.duplicate": "two link catch events of one name in one sub-process",
    "link.unpaired": "a link throw has no link catch of its name beside it",
    "script.language": "a script task's language is not one Flowdesk runs",
    "script.syntax": "a script line is not 'name = expression' or its expression does not parse",
}


def foreign_dialect(text: str) -> str | None:
    """The other engine's expression language `text` is written in (JUEL or FEEL), if any."""
    stripped = text.strip()
    if stripped.startswith(("${", "#{")) and stripped.endswith("}"):
        return "JUEL"
    if stripped.startswith("=") and not stripped.startswith("=="):
        return "FEEL"
    return None


def _clip(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return f"'{flat}'" if len(flat) <= limit else f"'{flat[: limit - 1]}…'"


#: Expressions that give a user task's further candidates when it is created, with their names.
CANDIDATE_EXPRESSIONS = {
    "rolesFrom": "candidate roles expression",
    "usersFrom": "candidate users expression",
}


@dataclass(frozen=True)
class Problem:
    """One finding: stable ``code``, ``severity``, the element to highlight and a message."""

    code: str
    severity: Severity
    element_id: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        """Return the problem as a JSON-ready dict."""
        return asdict(self)


def has_errors(problems: Iterable[Problem]) -> bool:
    """Tell whether any problem is an error (warnings and infos do not block deployment)."""
    return any(problem.severity == "error" for problem in problems)


def validate(
    doc: Any,
    tools: Mapping[str, ToolSpec] | None = None,
    processes: ProcessCatalog | Collection[str] | None = None,
    roles: Collection[str] | None = None,
    users: Container[str] | None = None,
) -> list[Problem]:
    """Check ``doc`` (normalized first); ``tools`` enables the service-task tool checks,
    ``processes`` (a catalog or the callable keys) the call-activity checks and ``roles`` (the
    role names that exist) the check that user tasks are offered to real roles; ``users`` (holding
    at least the lower-cased user names the document assigns that exist) the same for users."""
    try:
        normalized = normalize(doc, deep=False)
    except DocumentError as exc:
        return [Problem("document.invalid", "error", exc.element_id, exc.message)]
    return _Validator(normalized, tools, as_catalog(processes), roles, users).run()


def expression_problems(
    doc: Mapping[str, Any],
    element_id: str,
    path: tuple[str, ...],
    text: str,
    tools: Mapping[str, ToolSpec] | None = None,
    changes: Mapping[tuple[str, ...], Any] | None = None,
) -> list[Problem]:
    """What validation says about one expression as the modeller types it: `text` set at
    `path` in the element (a node's config, or a flow itself), with `changes` (other settings
    not applied yet) set likewise; the expression's problems are those it adds."""
    nodes, flows = doc.get("nodes"), doc.get("flows")
    if not isinstance(nodes, Mapping) or not isinstance(flows, Mapping):
        return []
    if element_id in flows:
        home, key, base = "flows", "", dict(flows[element_id])
    elif element_id in nodes:
        home, key, base = "nodes", "config", dict(nodes[element_id])
        base["config"] = dict(base.get("config") or {})
    else:
        return []
    target = base["config"] if key else base
    for where, value in (changes or {}).items():
        _set_path(target, where, value)
    with_text, without = copy.deepcopy(target), copy.deepcopy(target)
    _set_path(with_text, path, text)
    _set_path(without, path, "")

    def problems(settings: dict[str, Any]) -> list[Problem]:
        element = {**base, key: settings} if key else settings
        changed = {**doc, home: {**doc[home], element_id: element}}
        return [
            p
            for p in validate(changed, tools)
            if p.element_id == element_id and p.code.startswith("expression.")
        ]

    before = problems(without)
    return [p for p in problems(with_text) if p not in before]


def _set_path(settings: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set `value` at `path` in nested dicts, copying each level; "" or None removes it."""
    *parents, last = path
    level = settings
    for part in parents:
        inner = level.get(part)
        level[part] = dict(inner) if isinstance(inner, Mapping) else {}
        level = level[part]
    if value in ("", None):
        level.pop(last, None)
    else:
        level[last] = value


class _Validator(EventChecks, ScopeChecks):
    """One validation run; collects problems in a fixed, deterministic order."""

    def __init__(
        self,
        doc: dict[str, Any],
        tools: Mapping[str, ToolSpec] | None,
        catalog: ProcessCatalog | None = None,
        roles: Collection[str] | None = None,
        users: Container[str] | None = None,
    ) -> None:
        self.roles = roles
        self.users = users
        self.nodes: dict[str, dict[str, Any]] = doc["nodes"]
        self.flows: dict[str, dict[str, Any]] = doc["flows"]
        self.key = doc.get("key")
        self.tools = tools
        self.catalog = catalog
        self.problems: list[Problem] = []
        self.sites: list[Site] = []
        self.graph: Graph = build_graph(self.nodes, self.flows)
        self.namer = Namer(self.nodes, self.flows)
        self.kinds: list[NodeKind | None] = [KINDS.get(n["kind"]) for n in self.nodes.values()]
        self.script_writers: dict[str, int] = {}
        self.pool = uses_pool(doc)
        # In a pooled process: the steps whose outputs land in `$vars` with keys nobody declared,
        # and the process-level starts, whose input is in `$vars` before anything runs.
        self.pool_unknown = 0
        self.pool_starts = 0

    def run(self) -> list[Problem]:
        self.check_ids()
        self.check_flows()
        self.index_scopes()
        self.check_flow_scopes()
        self.link_edges()
        self.check_counts()
        comp = strongly_connected(self.graph.succ)
        self.cyclic = cyclic_nodes(self.graph.succ, comp)
        self.ancestors = ancestor_masks(self.graph.succ, comp, self.cyclic)
        self.visible = self.boundary_data(self.ancestors)
        self.check_reachability(comp)
        self.check_exclusive_gateways()
        for index, node_id in enumerate(self.graph.ids):
            self.check_config(index, node_id)
        self.check_duplicate_timers()
        self.check_codes()
        self.check_call_cycles()
        self.check_expressions()
        self.check_parallel()
        self.check_inclusive()
        self.check_event_gateways()
        self.check_links()
        return self.problems

    # --- reporting helpers -------------------------------------------------------------------

    def role_exists(self, name: str) -> bool:
        """Without a list of roles (a check outside the database) every role counts as real."""
        return self.roles is None or name in self.roles

    def error(self, code: str, element_id: str | None, message: str) -> None:
        self.problems.append(Problem(code, "error", element_id, capitalized(message)))

    def warning(self, code: str, element_id: str | None, message: str) -> None:
        self.problems.append(Problem(code, "warning", element_id, capitalized(message)))

    def info(self, code: str, element_id: str | None, message: str) -> None:
        self.problems.append(Problem(code, "info", element_id, capitalized(message)))

    def name(self, node_id: str) -> str:
        return self.namer.node(node_id)

    def flow_name(self, flow_id: str) -> str:
        return self.namer.flow(flow_id)

    # --- structure ---------------------------------------------------------------------------

    def check_ids(self) -> None:
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
        for flow_id, flow in self.flows.items():
            missing = [end for end in ("source", "target") if flow[end] not in self.nodes]
            if missing:
                ends = " and ".join(f"{end} '{flow[end]}'" for end in missing)
                self.error(
                    "flow.dangling",
                    flow_id,
                    f"{self.flow_name(flow_id)} connects to a node that does not exist ({ends}).",
                )

    def check_counts(self) -> None:
        graph = self.graph
        starts, ends, self.startless = self.check_scope_counts()
        top = self.members[None]
        self.starts, self.ends = starts, ends
        self.check_process_starts()
        if not set(top) & set(ends):
            self.error("end.missing", None, "The process needs at least one end event.")
        self.no_incoming: set[int] = set()
        self.no_outgoing: set[int] = set()
        for index, kind in enumerate(self.kinds):
            if kind is None:
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
            elif ins < kind.min_in:
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
                self.warning(
                    "node.implicit_end",
                    node_id,
                    f"{self.name(node_id)} has no outgoing flow: its path ends there, as at an "
                    "end event. Add an end event to make that explicit.",
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
        event_scopes = [i for i in range(len(graph)) if self._is("eventSubProcess", i)]
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

    def check_exclusive_gateways(self) -> None:
        for flow_id, flow in self.flows.items():
            source = self.nodes.get(flow["source"])
            source_kind = source["kind"] if source is not None else None
            exclusive = source_kind in ("exclusiveGateway", "inclusiveGateway")
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
            if kind not in ("exclusiveGateway", "inclusiveGateway") or len(outs) < 2:
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
            if kind == "inclusiveGateway":  # a flow without a condition is always taken
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

    # --- config ------------------------------------------------------------------------------

    def check_config(self, index: int, node_id: str) -> None:
        kind = self.kinds[index]
        if kind is None:
            return
        config = self.nodes[node_id]["config"]
        name = self.name(node_id)
        bad_types = set()
        for key, value in config.items():
            if key not in kind.config_keys and key not in REFERENCE_KEYS:
                self.warning(
                    "config.unknown_key",
                    node_id,
                    f"{name} has a setting '{key}' that a {kind.label.lower()} does not use.",
                )
            elif not config_type_ok(kind, key, value):
                bad_types.add(key)
                wanted = _TYPE_WORDS.get(tuple(kind.config_types[key]), "another type")
                self.error("config.invalid", node_id, f"{name}: '{key}' must be {wanted}.")
        config = {k: v for k, v in config.items() if k not in bad_types}
        save_to = config.get("saveTo")
        if save_to not in (None, "") and not is_identifier(save_to):
            self.error(
                "saveTo.invalid",
                node_id,
                f"{name}: save the result to a plain name like 'approval', not '{save_to}'.",
            )
        if "multiInstance" in config:
            self.check_multi_instance(index, node_id, name, config["multiInstance"])
        checker = {
            "startEvent": self.check_start_event,
            "endEvent": self.check_end_event,
            "userTask": self.check_user_task,
            "serviceTask": self.check_service_task,
            "timerCatch": self.check_timer,
            "messageCatch": self.check_message,
            "callActivity": self.check_call,
            "boundaryEvent": self.check_boundary,
            "escalationThrow": self.check_escalation_throw,
        }.get(kind.name) or self.event_checker(kind.name)
        if checker is not None:
            checker(index, node_id, name, config)

    def check_start_event(self, index: int, node_id: str, name: str, config: dict) -> None:
        self.check_form(index, node_id, name, config.get("form"))
        self.check_event_start(index, node_id, name, config)

    def check_user_task(self, index: int, node_id: str, name: str, config: dict) -> None:
        assignee = config.get("assignee")
        if assignee is None or (isinstance(assignee, dict) and not assignee.get("value")):
            pass  # no assignee: open to everyone who may work tasks in the partition
        elif assignee.get("type") not in ASSIGNEE_TYPES or not isinstance(assignee["value"], str):
            self.error(
                "config.invalid",
                node_id,
                f"{name}: 'assignee' must have a type (user, role or expression) and a value.",
            )
        elif assignee["type"] == "expression":
            self.sites.append(Site(node_id, f"The assignee of {name}", assignee["value"], index))
        elif assignee["type"] == "user" and self.users is not None:
            if assignee["value"].strip().lower() not in self.users:
                self.warning(
                    "task.user_unknown",
                    node_id,
                    f"{name} is assigned to '{assignee['value']}', who is not a Flowdesk user: "
                    "the task will wait for an operator to reassign it.",
                )
        elif assignee["type"] == "role" and not self.role_exists(assignee["value"]):
            self.error(
                "task.role_unknown",
                node_id,
                f"{name} is offered to '{assignee['value']}', which is not a Flowdesk role: "
                "map it to a role or create the role.",
            )
        self.check_candidates(index, node_id, name, config.get("candidates"))
        self.check_form(index, node_id, name, config.get("form"))
        self.check_duration(node_id, name, "dueIn", config.get("dueIn"))

    def check_candidates(self, index: int, node_id: str, name: str, candidates: Any) -> None:
        """Further roles and users a user task is offered to: lists of names that exist, and
        expressions (`rolesFrom`, `usersFrom`) that give more names when the task is created."""
        if candidates is None:
            return
        lists = [candidates.get(key) for key in ("roles", "users")]
        computed = [candidates.get(key) for key in CANDIDATE_EXPRESSIONS]
        shaped = (
            isinstance(candidates, dict)
            and set(candidates) <= {"roles", "users", *CANDIDATE_EXPRESSIONS}
            and all(
                value is None
                or (isinstance(value, list) and all(isinstance(v, str) for v in value))
                for value in lists
            )
            and all(value is None or isinstance(value, str) for value in computed)
        )
        if not shaped:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: 'candidates' must hold lists of names under 'roles' and 'users', and "
                "expressions under 'rolesFrom' and 'usersFrom'.",
            )
            return
        for key, what in CANDIDATE_EXPRESSIONS.items():
            text = candidates.get(key)
            if text and text.strip():
                self.sites.append(Site(node_id, f"The {what} of {name}", text, index))
        for role in candidates.get("roles") or []:
            if not self.role_exists(role):
                self.error(
                    "task.role_unknown",
                    node_id,
                    f"{name} is also offered to '{role}', which is not a Flowdesk role: "
                    "map it to a role or create the role.",
                )
        for user in candidates.get("users") or []:
            if self.users is not None and user.strip().lower() not in self.users:
                self.warning(
                    "task.user_unknown",
                    node_id,
                    f"{name} is also offered to '{user}', who is not a Flowdesk user.",
                )

    def check_service_task(self, index: int, node_id: str, name: str, config: dict) -> None:
        tool_name = config.get("tool")
        inputs = config.get("inputs") or {}
        for input_name, text in inputs.items():
            if not isinstance(text, str):
                self.error("config.invalid", node_id, f"{name}: input '{input_name}' must be text.")
            elif text.strip():
                what = f"Input '{input_name}' of {name}"
                self.sites.append(Site(node_id, what, text, index))
        for key, low, wanted in (
            ("retries", 0, "a whole number of at least 0"),
            ("backoff", None, "a number of seconds above 0"),
            ("timeout", None, "a number of seconds above 0"),
        ):
            value = config.get(key)
            if value is not None and (value < low if low is not None else value <= 0):
                self.error("config.invalid", node_id, f"{name}: '{key}' must be {wanted}.")
        if not tool_name:
            java = config.get("implementation")
            code = [v for k, v in java.items() if k != "vendor"] if isinstance(java, dict) else []
            hint = (
                f" Its Java implementation '{code[0]}' cannot run in Flowdesk: choose a tool "
                f"(see {TOOL_DOCS})."
                if code and isinstance(code[0], str)
                else ""
            )
            self.error("tool.missing", node_id, f"{name} does not say which tool to call.{hint}")
            return
        if self.tools is None:
            return
        tool = self.tools.get(tool_name)
        if tool is None:
            self.error(
                "tool.unknown",
                node_id,
                f"{name} calls unknown tool '{tool_name}': install it on the web and worker "
                f"processes ({TOOL_DOCS}) or choose another.",
            )
            return
        given = {k for k, v in inputs.items() if isinstance(v, str) and v.strip()}
        for required in tool.required_inputs:
            if required not in given:
                self.error(
                    "tool.input_missing",
                    node_id,
                    f"{name} does not provide input '{required}' that tool '{tool_name}' needs.",
                )
        for input_name in inputs:
            if not tool.any_inputs and tool.input_named(input_name) is None:
                self.warning(
                    "tool.input_unknown",
                    node_id,
                    f"{name} provides input '{input_name}' that tool '{tool_name}' does not take.",
                )

    def check_timer(self, index: int, node_id: str, name: str, config: dict) -> None:
        duration, when = config.get("duration"), config.get("date")
        if duration and when:
            self.error(
                "config.invalid", node_id, f"{name} has both a duration and a date; keep one."
            )
        elif not duration and not when:
            self.error("config.missing", node_id, f"{name} needs a duration or a date to wait for.")
        self.check_duration(node_id, name, "duration", duration)
        if when:
            self.sites.append(Site(node_id, f"The date of {name}", when, index))

    def check_duration(self, node_id: str, name: str, key: str, value: str | None) -> None:
        if not value:
            return
        try:
            parse_duration(value)
        except ValueError as exc:
            self.error("duration.invalid", node_id, f"{name}: '{key}' is not valid: {exc}.")

    def check_form(self, index: int, node_id: str, name: str, form: Any) -> None:
        if form is None:
            return
        for problem in validate_form_spec(form):
            self.error(problem.code, node_id, f"Form of {name}: {problem.message}")
        keys = frozenset(f["key"] for f in iter_fields(form) if is_identifier(f.get("key")))
        for field in iter_fields(form):
            for attribute, text in field_expressions(field):
                self.sites.append(
                    Site(
                        node_id,
                        f"Form field '{field.get('key')}' {attribute} of {name}",
                        text,
                        index,
                        form_keys=keys,
                        syntax_reported=True,
                    )
                )

    # --- expressions -------------------------------------------------------------------------

    def check_expressions(self) -> None:
        writers: dict[str, int] = dict(self.script_writers)
        for index, node in enumerate(self.nodes.values()):
            save_to = node["config"].get("saveTo")
            if self.kinds[index] is not None and is_identifier(save_to):
                writers[save_to] = writers.get(save_to, 0) | (1 << index)
        if self.pool:
            self.pool_sources(writers)
        for site in self.sites:
            try:
                parsed = expressions.parse(site.text)
            except expressions.ExpressionSyntaxError as exc:
                dialect = foreign_dialect(site.text)
                if site.syntax_reported:
                    pass
                elif dialect:
                    self.error(
                        "expression.foreign",
                        site.element_id,
                        f"{site.what} is {dialect} ({_clip(site.text)}), kept as the imported "
                        "file has it; Flowdesk runs only its own expressions, so rewrite it.",
                    )
                else:
                    self.error(
                        "expression.syntax",
                        site.element_id,
                        f"{site.what} is not a valid expression: {exc.message}.",
                    )
                continue
            allowed = self.visible[site.node] if site.node is not None else 0
            if site.own and site.node is not None:
                # An instance's result reaches `$vars` (saveTo) only when all are done.
                allowed = allowed & ~(1 << site.node) | self.inside.get(site.node, 0)
            loop, elements = (
                self.loop_context(site.node, include_self=not site.outer)
                if site.node is not None
                else (False, frozenset[str]())
            )
            elements |= site.assigned
            for path in sorted(parsed.paths):
                self.check_path(site, path, allowed, writers, loop, elements)

    def pool_sources(self, writers: dict[str, int]) -> None:
        """Add what a pooled process's steps put into `$vars` to `writers`: start and user task
        form fields; steps whose output keys are not known (a start or user task without a
        form, a tool's result, a message or signal payload) go to `pool_unknown`."""
        for index, node in enumerate(self.nodes.values()):
            kind, config = node["kind"], node["config"]
            if self.kinds[index] is None or kind in UNPOOLED_KINDS or config.get("saveTo"):
                continue
            bit = 1 << index
            event = config.get("event")
            if kind in ("startEvent", "userTask") and not event:
                if kind == "startEvent" and node.get("parent"):
                    continue
                if kind == "startEvent":
                    self.pool_starts |= bit
                keys = [f["key"] for f in iter_fields(config.get("form")) if f.get("key")]
                for key in keys:
                    if is_identifier(key):
                        writers[key] = writers.get(key, 0) | bit
                if not keys:
                    self.pool_unknown |= bit
            elif config.get("tool") or kind == "receiveTask" or event in ("message", "signal"):
                self.pool_unknown |= bit
                if kind == "startEvent" and not node.get("parent"):
                    self.pool_starts |= bit

    def check_path(
        self,
        site: Site,
        path: tuple[str, ...],
        allowed: int,
        writers: dict,
        loop: bool = False,
        elements: frozenset[str] = frozenset(),
    ) -> None:
        root, name = path[0], (path[1] if len(path) > 1 else None)
        shown = f"{root}.{name}" if name else root
        if root == "$vars":
            allowed |= self.pool_starts
        if root in ("$item", "$loop") and not loop:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {root}, which exists only inside a multi-instance "
                "activity.",
            )
        elif root == "$loop" and name is not None and name not in expressions.LOOP_FIELDS:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {shown}; $loop has {', '.join(expressions.LOOP_FIELDS)}.",
            )
        elif root == "$instance" and name not in expressions.INSTANCE_FIELDS:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {shown}; $instance has "
                f"{', '.join(expressions.INSTANCE_FIELDS)}.",
            )
        elif root == "$vars" and name in elements:
            return
        elif root == "$form" and site.form_keys is not None:
            if name is not None and name not in site.form_keys:
                self.error(
                    "expression.reference",
                    site.element_id,
                    f"{site.what} refers to {shown}, but the form has no field '{name}'.",
                )
        elif root == "$form":
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {shown}; $form can only be used inside a form.",
            )
        elif root == "$vars" and site.own and self.own_script_sets(site, name):
            return
        elif root == "$vars" and name is not None and self.reads_own_result(site, writers, name):
            self.own_result(site, shown)
        elif root == "$nodes" and site.node is not None and name == self.graph.ids[site.node]:
            if site.own and not (site.output and self.has_result(site.node)):
                self.own_result(site, shown)
            elif not site.own and not allowed >> site.node & 1:
                self.warning(
                    "expression.reference",
                    site.element_id,
                    f"{site.what} reads {shown}, the result of {self.name(name)} itself, which "
                    "is there only once it has completed, so the value may be missing.",
                )
        elif (
            root == "$vars"
            and name is not None
            and site.node is not None
            and not writers.get(name, 0) & allowed
            and writers.get(name, 0) & (self.maybe[site.node] | self.never[site.node])
        ):
            self.after_boundary(site, shown, writers.get(name, 0))
        elif (
            root == "$vars"
            and name is not None
            and not writers.get(name, 0) & allowed
            and self.pool_unknown
            & (allowed | (self.maybe[site.node] if site.node is not None else 0))
        ):
            self.warning(
                "expression.reference",
                site.element_id,
                f"{site.what} reads the process variable '{name}', which no form, script or "
                "saveTo before it provides; it is read from what arrives (the start input, "
                "a form without fields, a tool's result or a message), so it may be missing.",
            )
        elif root == "$vars" and name is not None and not writers.get(name, 0) & allowed:
            where = "before it" if name in writers else "in the process"
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {shown}, but no step {where} saves its result to '{name}'.",
            )
        elif root == "$nodes" and name is not None:
            target = self.graph.index.get(name)
            if target is None:
                self.error(
                    "expression.reference",
                    site.element_id,
                    f"{site.what} refers to {shown}, but there is no node '{name}'.",
                )
            elif not allowed >> target & 1:
                self.warning(
                    "expression.reference",
                    site.element_id,
                    f"{site.what} refers to {shown}, but {self.name(name)} does not come before "
                    "it, so the value may be missing.",
                )
        elif root not in expressions.ROOTS:
            self.error(
                "expression.reference", site.element_id, f"{site.what} refers to unknown {root}."
            )

    def reads_own_result(self, site: Site, writers: Mapping[str, int], name: str) -> bool:
        """Whether `site` reads `$vars.<name>` that only its own activity saves, when it
        completes, which is after the expression is evaluated (a script's lines assign at once).
        """
        node = site.node
        if node is None or self.graph.ids[node] != site.element_id:
            return False
        if not site.own and self.visible[node] >> node & 1:
            return False
        by_self = writers.get(name, 0) & ~self.script_writers.get(name, 0)
        if not by_self >> node & 1:
            return False
        others = writers.get(name, 0) & ~(1 << node)
        if site.own:
            return not others & (self.visible[node] | self.inside.get(node, 0))
        return not others & self.visible[node]

    def after_boundary(self, site: Site, shown: str, writers: int) -> None:
        """Report `$vars` that only steps a boundary event before `site` cuts short save."""
        assert site.node is not None
        maybe = writers & self.maybe[site.node]
        found = maybe or writers & self.never[site.node]
        listed = ", ".join(
            self.name(self.graph.ids[i]) for i in range(len(self.graph)) if found >> i & 1
        )
        if maybe:
            self.warning(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which only {listed} saves; after a boundary event "
                "on the way there it may not have done so, so the value may be missing.",
            )
        else:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which only {listed} saves when it completes; on "
                "the path from its interrupting boundary event it never has.",
            )

    def own_script_sets(self, site: Site, name: str | None) -> bool:
        """Whether the script task `site` belongs to assigns `$vars.<name>` as it runs."""
        node = site.node
        return (
            node is not None
            and name is not None
            and bool(self.script_writers.get(name, 0) >> node & 1)
        )

    def own_result(self, site: Site, shown: str) -> None:
        """Report an expression that reads its own activity's result before it exists."""
        assert site.node is not None
        node_id = self.graph.ids[site.node]
        name = self.name(node_id)
        if not site.own:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which {name} itself saves only when it has "
                "completed, so it is missing here.",
            )
        elif site.output and self.has_result(site.node):
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which is saved only after all instances have "
                "finished (as the list of their outputs), so every output would be empty. The "
                f"result of the instance that just finished is $nodes.{node_id} (a form's "
                f"field as $nodes.{node_id}.<key>).",
            )
        elif site.output:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, but {name} has no result of its own; "
                + (
                    "read what the steps inside it saved ($nodes.<their id> or $vars.<name>), "
                    "or use $item or $loop."
                    if self.inside.get(site.node)
                    else "use $item or $loop."
                ),
            )
        else:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which is there only after all instances have "
                "finished. Count finished instances with $loop (such as $loop.completed >= 2), "
                "or turn each instance's result into the output first.",
            )

    # --- parallel gateways -------------------------------------------------------------------

    def check_parallel(self) -> None:
        graph = self.graph
        parallel = [i for i, k in enumerate(self.kinds) if k and k.name == "parallelGateway"]
        joins = [i for i in parallel if len(graph.in_flows[i]) >= 2]
        splits: dict[int, list[frozenset[str]] | None] = {
            i: None
            for i, k in enumerate(self.kinds)
            if k
            and k.name in ("exclusiveGateway", "eventBasedGateway")
            and len(graph.out_flows[i]) >= 2
        }
        for i, k in enumerate(self.kinds):
            if k and k.name == "inclusiveGateway" and len(graph.out_flows[i]) >= 2:
                splits[i] = self._inclusive_choices(i)
        flow = FlowAnalysis(graph, self.cyclic, self.ancestors, self.starts, self.ends)
        for join in joins:
            message = self._join_deadlock(flow, splits, join)
            if message:
                self.error("parallel.deadlock", graph.ids[join], message)
        inclusive = [
            i
            for i, k in enumerate(self.kinds)
            if k and k.name == "inclusiveGateway" and len(graph.in_flows[i]) >= 2
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
