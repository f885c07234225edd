"""Checks of the data expressions read: each expression parses, and the variables,
results and form fields it reads exist where it runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from webapp.process import expressions
from webapp.process.document import UNPOOLED_KINDS, is_identifier
from webapp.process.forms import iter_fields
from webapp.process.validation.base import Checks, Site


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


class DataChecks(Checks):
    """Checks of every collected expression and of the data it reads."""

    if TYPE_CHECKING:

        def loop_context(self, index: int, include_self: bool) -> tuple[bool, frozenset[str]]: ...
        def has_result(self, index: int) -> bool: ...
        def adhoc_siblings(self, index: int) -> int: ...

    def check_expressions(self) -> None:
        """Parse every collected expression and check each data path it reads."""
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
            if site.after_run and site.node is not None:
                allowed |= 1 << site.node | self.inside.get(site.node, 0)
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
        """One data path an expression reads: it exists and is written before it is read."""
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
        elif root == "$gateway" and not site.gateway:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {root}, which exists only in a complex gateway's "
                "activation condition.",
            )
        elif root == "$gateway" and name not in expressions.GATEWAY_FIELDS:
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to {shown}; $gateway has "
                f"{', '.join(expressions.GATEWAY_FIELDS)}.",
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
        elif root == "$cell":
            self.error(
                "expression.reference",
                site.element_id,
                f"{site.what} refers to $cell, which exists only in a decision table's input "
                "entries.",
            )
        elif root == "$vars" and site.own and self.own_script_sets(site, name):
            return
        elif root == "$vars" and name is not None and self.reads_own_result(site, writers, name):
            self.own_result(site, shown)
        elif (
            root == "$nodes"
            and site.node is not None
            and name == self.graph.ids[site.node]
            and not site.after_run
        ):
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
            and site.node is not None
            and not writers.get(name, 0) & allowed
            and writers.get(name, 0) & self.adhoc_siblings(site.node)
        ):
            self.warning(
                "expression.reference",
                site.element_id,
                f"{site.what} reads {shown}, which another activity of its ad-hoc sub-process "
                "saves; they run in any order, so the value may be missing.",
            )
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
            if site.awaits:  # a condition waits for the data: an operator or a later step
                self.warning(
                    "expression.reference",
                    site.element_id,
                    f"{site.what} refers to {shown}, which no step {where} saves; it holds "
                    "only once something sets it (an operator's edit, say).",
                )
                return
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
        if node is None or self.graph.ids[node] != site.element_id or site.after_run:
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
