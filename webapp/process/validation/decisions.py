"""Checks of business rule tasks: the decision they evaluate and its version binding (whether
that decision is published is the publish service's check: the process library has no store)."""

from __future__ import annotations

from webapp.process.validation.base import Checks


class DecisionChecks(Checks):
    """Checks of business rule tasks."""

    def check_decision(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A business rule task names its decision, and a version when bound to one."""
        decision = config.get("decision")
        binding = config.get("binding", "latest")
        version = config.get("version")
        if not isinstance(decision, str) or not decision.strip():
            what = f"{name} does not say which decision to evaluate."
            self.error("config.missing", node_id, what)
        if binding not in ("latest", "version"):
            self.error(
                "config.invalid",
                node_id,
                f"{name}: binding must be 'latest' or 'version', not '{binding}'.",
            )
        elif binding == "version" and version is None:
            self.error("config.missing", node_id, f"{name} is bound to a version but names none.")
        if version is not None and (
            isinstance(version, bool) or not isinstance(version, int) or version < 1
        ):
            self.error("config.invalid", node_id, f"{name}: 'version' must be 1 or more.")
