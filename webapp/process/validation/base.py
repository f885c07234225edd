"""What every group of checks shares: the state of one validation run, the expressions
it collects to check last, and how a check reports a problem."""

from __future__ import annotations

from collections.abc import Collection, Container, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

from webapp.process.catalog import ProcessCatalog
from webapp.process.durations import parse_duration
from webapp.process.graph import Graph
from webapp.process.kinds import NodeKind
from webapp.process.naming import Namer, capitalized
from webapp.process.tools import ToolSpec
from webapp.process.validation.problems import Problem


@dataclass(frozen=True)
class Site:
    """An expression to check: where it lives and which data it may read.

    ``outer`` marks expressions a multi-instance activity evaluates before its instances exist
    (collection, cardinality), ``own`` those evaluated after one (completion, output): they read
    what the steps inside saved, not what the activity saves once all instances are done;
    ``output`` marks the one that also reads the finished instance's result, ``$nodes.<id>``.
    ``assigned`` names the ``$vars`` a script's earlier lines set; ``gateway`` marks a complex
    gateway's activation condition, the one place ``$gateway`` exists.
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
    #: Evaluated after its own activity ran (a standard loop's condition tested after each
    #: run): the activity's result is there.
    after_run: bool = False
    #: A conditional event's condition: it waits for the data it reads, which any later change
    #: (an operator's edit among them) may bring.
    awaits: bool = False
    gateway: bool = False


class Checks:
    """The state one validation run shares between its groups of checks, and reporting."""

    nodes: dict[str, dict[str, Any]]
    flows: dict[str, dict[str, Any]]
    key: Any
    tools: Mapping[str, ToolSpec] | None
    catalog: ProcessCatalog | None
    roles: Collection[str] | None
    users: Container[str] | None
    problems: list[Problem]
    sites: list[Site]
    graph: Graph
    namer: Namer
    kinds: list[NodeKind | None]
    #: Variables script tasks write (name → bitset of the script tasks writing it).
    script_writers: dict[str, int]
    pool: bool
    pool_unknown: int
    pool_starts: int
    starts: list[int]
    ends: list[int]
    cyclic: list[bool]
    ancestors: list[int]
    visible: list[int]
    parent: list[int | None]
    members: dict[int | None, list[int]]
    inside: dict[int, int]
    maybe: list[int]
    never: list[int]

    def role_exists(self, name: str) -> bool:
        """Without a list of roles (a check outside the database) every role counts as real."""
        return self.roles is None or name in self.roles

    def error(self, code: str, element_id: str | None, message: str) -> None:
        """Report a problem that blocks deployment."""
        self.problems.append(Problem(code, "error", element_id, capitalized(message)))

    def warning(self, code: str, element_id: str | None, message: str) -> None:
        """Report a problem that does not block deployment."""
        self.problems.append(Problem(code, "warning", element_id, capitalized(message)))

    def info(self, code: str, element_id: str | None, message: str) -> None:
        """Report something the modeller may want to know."""
        self.problems.append(Problem(code, "info", element_id, capitalized(message)))

    def name(self, node_id: str) -> str:
        """How messages name a node (its name or kind, and id)."""
        return self.namer.node(node_id)

    def flow_name(self, flow_id: str) -> str:
        """How messages name a flow."""
        return self.namer.flow(flow_id)

    def is_kind(self, kind_name: str, index: int) -> bool:
        """Whether the node at `index` is of a known kind named `kind_name`."""
        kind = self.kinds[index]
        return kind is not None and kind.name == kind_name

    def config_of(self, index: int) -> dict[str, Any]:
        """The settings of the node at `index`."""
        return self.nodes[self.graph.ids[index]]["config"]

    def check_duration(self, node_id: str, name: str, key: str, value: str | None) -> None:
        """An ISO-8601 duration setting (a timer's wait, a user task's due time) parses."""
        if not value:
            return
        try:
            parse_duration(value)
        except ValueError as exc:
            self.error("duration.invalid", node_id, f"{name}: '{key}' is not valid: {exc}.")


def has_text(value: Any) -> TypeGuard[str]:
    """Whether `value` is text with more than white space."""
    return isinstance(value, str) and bool(value.strip())
