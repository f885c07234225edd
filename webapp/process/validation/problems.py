"""What validation reports: problems with a stable code, a severity, the element to
highlight and a message; and every code it can emit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]

# Every code validate() can emit, with what it means; codes are stable for the UI and API.
CODES: dict[str, str] = {
    "document.invalid": "the document is not structurally a process document",
    "id.invalid": "a node or flow id is not a valid id",
    "id.duplicate": "a flow uses the id of a node",
    "kind.unknown": "a node has a kind Flowdesk does not know",
    "flow.dangling": "a flow connects to a node that does not exist",
    "start.count": "there is no start event, or more than one",
    "end.missing": "there is no end event",
    "adhoc.start": "an ad-hoc sub-process holds a start event (activation starts its activities)",
    "adhoc.empty": "an ad-hoc sub-process has no activity without an incoming flow",
    "instantiate.incoming": "a receive task or event-based gateway that starts the process has "
    "incoming flows",
    "instantiate.scope": "a receive task or event-based gateway that starts the process is inside "
    "a sub-process",
    "adhoc.worker": "an ad-hoc sub-process is driven by another engine's job worker (an AI agent)",
    "start.incoming": "a start event has incoming flows",
    "end.outgoing": "an end event has outgoing flows",
    "node.incoming_missing": "a node other than the start has no incoming flow",
    "node.outgoing_count": "a node has too few or too many outgoing flows for its kind",
    "node.unreachable": "a node cannot be reached from the start event",
    "node.dead_end": "a node cannot reach an end event",
    "node.implicit_end": "(warning) an activity or event has no outgoing flow, so its path ends "
    "there",
    "gateway.condition_missing": "an exclusive gateway has unconditional non-default flows",
    "gateway.default_multiple": "an exclusive gateway has several default flows",
    "gateway.default_missing": "(warning) an exclusive gateway has no default flow",
    "gateway.default_unused": "(warning) an inclusive gateway's default flow is never taken",
    "flow.condition_ignored": "(warning) a condition that is never evaluated",
    "flow.default_ignored": "(warning) a default mark on a flow not leaving an exclusive gateway",
    "expression.syntax": "an expression does not parse",
    "expression.foreign": "an expression is in another engine's language (JUEL `${...}`, FEEL "
    "`= ...`), kept as an imported file had it",
    "expression.reference": "an expression reads data that is missing (warning: may be missing)",
    "parallel.deadlock": "a parallel join can wait forever",
    "parallel.unjoined": "(warning) a parallel branch never reaches a parallel join",
    "task.role_unknown": "a user task is offered to a group that is not a Flowdesk role",
    "task.user_unknown": "(warning) a user task is assigned to a user who does not exist",
    "form.invalid": "a form spec is invalid",
    "tool.unknown": "a service task calls a tool that is not registered",
    "tool.missing": "a service task (or send task, message throw) names no tool",
    "tool.input_missing": "a service task does not provide a required tool input",
    "tool.input_unknown": "(warning) a service task provides an input the tool does not take",
    "duration.invalid": "a duration is not a valid ISO-8601 duration",
    "saveTo.invalid": "saveTo is not a plain identifier",
    "config.invalid": "a config value has the wrong type or value",
    "config.missing": "a required config value is missing",
    "config.unknown_key": "(warning) a config key the node kind does not use",
    "flow.scope": "a flow connects nodes in different sub-processes",
    "node.incoming_forbidden": "a boundary event or event sub-process has incoming flows",
    "boundary.host": "a boundary event is not on an activity that takes one, or not beside it",
    "boundary.never_fires": "an error or escalation boundary on an activity that never throws one",
    "boundary.timer_duplicate": "(warning) two interrupting timers of the same definition on "
    "one activity",
    "cycle.invalid": "a timer cycle is not an ISO-8601 repeating interval",
    "error.uncaught": "(warning) an error end event throws a code nothing around it catches",
    "error.never_thrown": "(info) a catcher waits for an error code no end event throws",
    "call.process_unknown": "a call activity names no process, or one that is not published",
    "call.version_unknown": "a call activity is bound to a version that does not exist",
    "call.cycle": "(warning) a call activity leads back to its own process",
    "multiInstance.invalid": "multi-instance settings that cannot run",
    "loop.invalid": "standard loop settings that cannot run",
    "gateway.event_target": "an event-based gateway leads to something other than a timer, "
    "message or signal catch or a receive task, or to one with other incoming flows",
    "gateway.event_condition": "a flow leaving an event-based gateway has a condition or default",
    "gateway.event_boundary": "a receive task after an event-based gateway has boundary events",
    "inclusive.deadlock": "an inclusive join and another join wait for each other's token",
    "link.duplicate": "two link catch events of one name in one sub-process",
    "link.unpaired": "a link throw has no link catch of its name beside it",
    "script.language": "a script task's language is not one Flowdesk runs",
    "script.syntax": "a script line is not 'name = expression' or its expression does not parse",
    # Compensation and transactions.
    "compensation.handler_missing": "a compensation boundary event names no handler",
    "compensation.handler_invalid": "a compensation handler is not an activity beside its event",
    "compensation.handler_shared": "two compensation boundary events share one handler",
    "compensation.handler_flows": "a compensation handler has sequence flows",
    "compensation.flows": "a compensation boundary event has outgoing sequence flows",
    "compensation.activity": "a compensation throw names no activity of its scope",
    "compensation.nothing": "(warning) a compensation throw has nothing it could undo",
    "compensation.never_thrown": "(warning) no compensation throw can reach a handler",
    "compensation.start_scope": "a compensation event sub-process outside a sub-process",
    "cancel.outside_transaction": "a cancel end event not directly inside a transaction",
    "cancel.no_boundary": "a cancel end event's transaction has no cancel boundary event",
    "boundary.cancel_host": "a cancel boundary event not on a transaction",
}


@dataclass(frozen=True)
class Problem:
    """One finding: stable ``code``, ``severity``, the element to highlight and a message."""

    code: str
    severity: Severity
    element_id: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        """Return the problem as a JSON-ready dict."""
        return asdict(self)


def has_errors(problems: Iterable[Problem]) -> bool:
    """Tell whether any problem is an error (warnings and infos do not block deployment)."""
    return any(problem.severity == "error" for problem in problems)
