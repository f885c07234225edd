"""The behaviour table: each node kind's behaviour object, installed for the runtime once.

Every family's module lists the kinds it runs (`BEHAVIOURS`); a new kind adds its behaviour
there and, for a new family module, one line here.
"""

from __future__ import annotations

from webapp.engine import (
    activities,
    adhoc,
    children,
    compensation,
    complex_gateway,
    conditional_events,
    decisions,
    events,
    gateways,
    loops,
    multi,
    scopes,
    signal_events,
    tasks,
)
from webapp.engine.runtime import Behaviour, install

TABLE: dict[str, Behaviour] = {
    **activities.BEHAVIOURS,
    **adhoc.BEHAVIOURS,
    **children.BEHAVIOURS,
    **decisions.BEHAVIOURS,
    **compensation.BEHAVIOURS,
    **conditional_events.BEHAVIOURS,
    **complex_gateway.BEHAVIOURS,
    **events.BEHAVIOURS,
    **gateways.BEHAVIOURS,
    **loops.BEHAVIOURS,
    **multi.BEHAVIOURS,
    **scopes.BEHAVIOURS,
    **signal_events.BEHAVIOURS,
    **tasks.BEHAVIOURS,
}
install(TABLE)
