"""Checks of ad-hoc sub-processes: activities that start a fragment instead of a start event,
and the settings that say which run, in which order, and when it is done."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webapp.process.adhoc import NOT_STARTABLE
from webapp.process.kinds import ADHOC_ORDERINGS
from webapp.process.validation.base import Checks, Site


class AdHocChecks(Checks):
    """Ad-hoc sub-processes: their members, settings and expressions."""

    if TYPE_CHECKING:
        parent: list[int | None]
        inside: dict[int, int]

    def in_adhoc(self, index: int) -> bool:
        """Whether the node at `index` sits directly inside an ad-hoc sub-process."""
        scope = self.parent[index]
        return scope is not None and self.is_kind("adHocSubProcess", scope)

    def adhoc_siblings(self, index: int) -> int:
        """The nodes inside the ad-hoc sub-processes around the node at `index` (as a mask):
        any of them may have run before it, or not (fragments run in any order)."""
        found = 0
        scope = self.parent[index]
        while scope is not None:
            if self.is_kind("adHocSubProcess", scope):
                found |= self.inside.get(scope, 0)
            scope = self.parent[scope]
        return found & ~(1 << index)

    def adhoc_fragments(self, members: list[int]) -> list[int]:
        """The members of an ad-hoc sub-process that start a fragment: no incoming flow."""
        return [
            i
            for i in members
            if not self.graph.in_flows[i]
            and self.kinds[i] is not None
            and not any(self.is_kind(kind, i) for kind in NOT_STARTABLE)
        ]

    def check_adhoc_members(self, scope: int, members: list[int]) -> list[int]:
        """No start event inside, and at least one activity to activate; the fragment starts."""
        scope_id = self.graph.ids[scope]
        for i in members:
            if self.is_kind("startEvent", i) and not self.config_of(i).get("event"):
                self.error(
                    "adhoc.start",
                    self.graph.ids[i],
                    f"{self.name(self.graph.ids[i])} is a start event inside "
                    f"{self.name(scope_id)}; an ad-hoc sub-process has none: its activities "
                    "without an incoming flow are started when activated.",
                )
        fragments = self.adhoc_fragments(members)
        if not fragments:
            self.error(
                "adhoc.empty",
                scope_id,
                f"{self.name(scope_id)} has no activity without an incoming flow, so nothing "
                "in it can be activated.",
            )
        return fragments

    def check_adhoc(self, index: int, node_id: str, name: str, config: dict) -> None:
        """Ordering, the activities to activate at the start and the completion condition."""
        ordering = config.get("ordering")
        if ordering is not None and ordering not in ADHOC_ORDERINGS:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: ordering is {' or '.join(ADHOC_ORDERINGS)}, not '{ordering}'.",
            )
        activate = config.get("activate")
        if activate:
            what = f"The activities to activate of {name}"
            self.sites.append(Site(node_id, what, activate, index))
        worker = config.get("worker")
        if worker:
            self.error(
                "adhoc.worker",
                node_id,
                f"{name} is driven by the Camunda job worker '{worker}', which decides what to "
                "activate and when it is done (an AI agent, say); Flowdesk has no such worker. "
                "Remove the worker to have people and the API activate its activities.",
            )
        completion = config.get("completion")
        if completion:
            what = f"The completion condition of {name}"
            self.sites.append(Site(node_id, what, completion, index, own=True))
