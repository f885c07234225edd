"""Checks of call activities: the process and version they call, their inputs, and chains
of calls that lead back to the calling process."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from webapp.process.validation.base import Checks, Site

#: How many called documents the call-cycle search reads at most.
MAX_CALLED_DOCUMENTS = 200


class CallChecks(Checks):
    """Checks of call activities and of the processes they call."""

    def check_call(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A call activity's inputs, binding and version, and the process it calls."""
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
