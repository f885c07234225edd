"""One validation run: the groups of checks in their fixed order, the table of which checks
each node kind's settings get, and the entry points `validate` and `expression_problems`."""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Container, Mapping
from typing import Any

from webapp.process.catalog import ProcessCatalog, as_catalog
from webapp.process.document import DocumentError, is_identifier, normalize, uses_pool
from webapp.process.graph import ancestor_masks, build_graph, cyclic_nodes, strongly_connected
from webapp.process.kinds import KINDS, REFERENCE_KEYS, config_type_ok
from webapp.process.naming import Namer
from webapp.process.tools import ToolSpec
from webapp.process.validation.adhoc import AdHocChecks
from webapp.process.validation.boundaries import BoundaryChecks
from webapp.process.validation.calls import CallChecks
from webapp.process.validation.compensation import CompensationChecks
from webapp.process.validation.data import DataChecks
from webapp.process.validation.decisions import DecisionChecks
from webapp.process.validation.events import EventChecks
from webapp.process.validation.gateways import GatewayChecks
from webapp.process.validation.instantiating import InstantiatingChecks
from webapp.process.validation.problems import Problem
from webapp.process.validation.scopes import ScopeChecks
from webapp.process.validation.structure import StructureChecks
from webapp.process.validation.tasks import TaskChecks

#: A check of one node's settings: (validator, index, node id, node name, config).
KindCheck = Callable[[Any, int, str, str, dict], None]

#: The checks each node kind's settings get, in the order they run; kinds not named get none.
KIND_CHECKS: dict[str, tuple[KindCheck, ...]] = {
    "startEvent": (
        TaskChecks.check_start_form,
        EventChecks.check_event_start,
        CompensationChecks.check_compensation_start,
    ),
    "endEvent": (EventChecks.check_end_event, CompensationChecks.check_compensation_throw),
    "userTask": (TaskChecks.check_user_task,),
    "serviceTask": (TaskChecks.check_service_task,),
    "sendTask": (TaskChecks.check_service_task,),
    "messageThrow": (TaskChecks.check_service_task,),
    "scriptTask": (TaskChecks.check_script,),
    "timerCatch": (EventChecks.check_timer,),
    "messageCatch": (EventChecks.check_message,),
    "receiveTask": (InstantiatingChecks.check_receive,),
    "signalCatch": (EventChecks.check_signal_name,),
    "conditionalCatch": (EventChecks.check_condition,),
    "signalThrow": (EventChecks.check_signal_throw,),
    "linkThrow": (EventChecks.check_link_name,),
    "linkCatch": (EventChecks.check_link_name,),
    "escalationThrow": (EventChecks.check_escalation_throw,),
    "boundaryEvent": (
        BoundaryChecks.check_boundary,
        CompensationChecks.check_compensation_boundary,
    ),
    "compensationThrow": (CompensationChecks.check_compensation_throw,),
    "callActivity": (CallChecks.check_call,),
    "businessRuleTask": (DecisionChecks.check_decision,),
    "complexGateway": (GatewayChecks.check_complex_gateway,),
    "adHocSubProcess": (AdHocChecks.check_adhoc,),
    "eventBasedGateway": (InstantiatingChecks.check_instantiating,),
}

_TYPE_WORDS = {
    (dict,): "an object",
    (str,): "text",
    (int,): "a whole number",
    (int, float): "a number",
}


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
    return Validator(normalized, tools, as_catalog(processes), roles, users).run()


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


class Validator(
    AdHocChecks,
    InstantiatingChecks,
    StructureChecks,
    ScopeChecks,
    GatewayChecks,
    EventChecks,
    BoundaryChecks,
    TaskChecks,
    CallChecks,
    DataChecks,
    DecisionChecks,
    CompensationChecks,
):
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
        self.nodes = doc["nodes"]
        self.flows = doc["flows"]
        self.key = doc.get("key")
        self.tools = tools
        self.catalog = catalog
        self.problems = []
        self.sites = []
        self.graph = build_graph(self.nodes, self.flows)
        self.namer = Namer(self.nodes, self.flows)
        self.kinds = [KINDS.get(n["kind"]) for n in self.nodes.values()]
        self.script_writers = {}
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
        self.visible = self.handler_data(self.boundary_data(self.ancestors))
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
        self.check_compensation_reached()
        return self.problems

    def check_config(self, index: int, node_id: str) -> None:
        """The settings every kind shares (keys, types, saveTo, multi-instance), then its own."""
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
        if config.get("loop"):
            self.check_standard_loop(index, node_id, name, config["loop"])
        for check in KIND_CHECKS.get(kind.name, ()):
            check(self, index, node_id, name, config)
