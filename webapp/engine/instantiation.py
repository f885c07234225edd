"""A process started by the message of an instantiating receive task or of a target of an
instantiating event-based gateway (`process.instantiating`): the instance begins there, the
message's payload that element's output, and goes on from it.

At an exclusive gateway only the target whose message came runs; at a parallel one every other
target is entered too and waits for its own message in the new instance (BPMN 2.0.2 §10.5.6).
"""

from __future__ import annotations

from typing import Any

from webapp.engine.runtime import Step
from webapp.engine.store import TokenRow
from webapp.models.statuses import HistoryKind, TokenStatus


def begin(step: Step, node_id: str, payload: Any) -> None:
    """Start the step's new instance at trigger `node_id`, whose message carried `payload`."""
    definition = step.definition
    gateway = definition.triggers.get(node_id)
    name = definition.config(node_id).get("message")
    if gateway is None:
        token = step.new_token(node_id)
        if step.arrive(token, node_id, None):
            _received(step, token, name, payload)
        return
    token = step.new_token(gateway)
    if not step.arrive(token, gateway, None):
        return
    parallel = definition.config(gateway).get("gatewayType") == "parallel"
    for flow_id, flow in definition.outgoing.get(gateway, []):
        if flow["target"] == node_id:
            step.history.add(HistoryKind.LEFT, token, flow=flow_id)
            if step.arrive(token, node_id, flow_id):
                _received(step, token, name, payload)
        elif parallel:
            other = step.new_token(gateway)
            other.step = token.step
            step.leave(other, flow_id)


def _received(step: Step, token: TokenRow, name: Any, payload: Any) -> None:
    token.status = TokenStatus.ACTIVE
    step.history.add(HistoryKind.MESSAGE, token, name=name, instantiating=True)
    step.complete(token, payload)
