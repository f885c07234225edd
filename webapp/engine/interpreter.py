"""The interpreter loop: queued tokens enter their nodes' behaviours until each waits or ends.

After the queue drains, inclusive joins that nothing live can still reach fire, conditional
events whose condition the step's data changes made true fire, and scopes emptied in the step
complete; each can queue tokens again.
"""

from __future__ import annotations

from webapp.engine import complex_gateway, conditional_events, gateways, scopes, tree
from webapp.engine.behaviours import TABLE
from webapp.engine.runtime import Step, behaviour_of, multi_instance, standard_loop
from webapp.models.statuses import TokenStatus


def run(step: Step) -> None:
    """Move queued tokens until each waits, ends or fails; then fire inclusive joins nothing
    can still reach and conditions that became true, and complete emptied scopes."""
    while True:
        _drain(step)
        if gateways.release_joins(step) or complex_gateway.release_resets(step):
            continue
        if conditional_events.reevaluate(step):
            continue
        if not _complete_a_scope(step):
            return


def _drain(step: Step) -> None:
    definition = step.definition
    while (entry := step.queued()) is not None:
        token, node_id, via, again = entry
        if not step.arrive(token, node_id, via):
            continue
        node = definition.nodes.get(node_id)
        behaviour = TABLE.get(node["kind"]) if node else None
        if node is None or behaviour is None:
            step.fail(token, "unknown_node", f"{definition.described(node_id)} cannot be run.")
            continue
        inner = step.is_inner(token)
        if not again and not inner and node_id in definition.boundaries:
            scopes.open_boundaries(step, token)
            if token.status != TokenStatus.ACTIVE:
                continue
        if not inner and definition.multi_instance(node_id):
            multi_instance().enter(step, token, node)
            continue
        first = not inner and not tree.is_looping(token.locals)
        if first and definition.standard_loop(node_id) and not standard_loop().begins(step, token):
            continue
        behaviour.enter(step, token, node)


def _complete_a_scope(step: Step) -> bool:
    """Complete one waiting scope that nothing live is left in; False when there is none."""
    while (scope := step.scope_to_check()) is not None:
        if behaviour_of(step.definition.kind(scope.node_id)).try_complete(step, scope):
            return True
    return False
