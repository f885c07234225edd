"""Checks of receive tasks and event-based gateways that start the process when a message
arrives (`instantiate`): at the process level, with no incoming flow, waiting for messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webapp.process.instantiating import GATEWAY_TYPES, MESSAGE_TARGETS, is_instantiating
from webapp.process.validation.base import Checks, has_text


class InstantiatingChecks(Checks):
    """Instantiating receive tasks and event-based gateways."""

    if TYPE_CHECKING:

        def check_message(self, index: int, node_id: str, name: str, config: dict) -> None: ...

    def starts_process(self, index: int) -> bool:
        """Whether the node at `index` is a receive task or gateway whose message starts it."""
        return is_instantiating(self.nodes[self.graph.ids[index]])

    def check_receive(self, index: int, node_id: str, name: str, config: dict) -> None:
        """A receive task waits for a named message with a correlation key; one that starts
        the process needs only the name (its message creates the instance)."""
        if config.get("instantiate") is True:
            self.check_instantiating(index, node_id, name, config)
            if not has_text(config.get("message")):
                self.error(
                    "config.missing", node_id, f"{name} does not name the message that starts it."
                )
            return
        self.check_message(index, node_id, name, config)

    def check_instantiating(self, index: int, node_id: str, name: str, config: dict) -> None:
        """At the process level, no incoming flow; a gateway leads to message waits only."""
        gateway_type = config.get("gatewayType")
        if gateway_type is not None and gateway_type not in GATEWAY_TYPES:
            self.error(
                "config.invalid",
                node_id,
                f"{name}: gatewayType is {' or '.join(GATEWAY_TYPES)}, not '{gateway_type}'.",
            )
        if gateway_type == "parallel" and config.get("instantiate") is not True:
            self.error(
                "config.invalid",
                node_id,
                f"{name} is parallel, which only a gateway that starts the process can be.",
            )
        if config.get("instantiate") is not True:
            return
        if self.nodes[node_id].get("parent"):
            self.error(
                "instantiate.scope",
                node_id,
                f"{name} starts the process, so it belongs at the process level, not inside a "
                "sub-process.",
            )
        if self.graph.in_flows[index]:
            self.error(
                "instantiate.incoming",
                node_id,
                f"{name} starts the process when its message arrives, so no flow may lead to it.",
            )
        if self.is_kind("eventBasedGateway", index):
            for _flow_id, target in self.graph.out_flows[index]:
                kind = self.kinds[target]
                if kind is not None and kind.name not in MESSAGE_TARGETS:
                    self.error(
                        "gateway.event_target",
                        node_id,
                        f"{name} starts the process, so it leads only to message catches and "
                        f"receive tasks, not to {self.name(self.graph.ids[target])}.",
                    )
