"""The node-kind registry: what each node kind may connect to, which config it takes and which
BPMN element (with which event definition) carries it.

Declared once here; validation, the designer (palette, panel, canvas), BPMN import/export and the
engine read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Role = Literal["event", "task", "gateway"]

NUMBER = (int, float)


@dataclass(frozen=True)
class PaletteEntry:
    """An entry of the designer's palette drawing the kind: `create.<action>` in `group`, placed
    by `order`, with bpmn-js's `icon` class and a tooltip. `event` is the definition a start,
    end or boundary event is drawn with; `start_inside` that of the start event a sub-process is
    drawn with ("" a plain one; None: drawn empty)."""

    action: str
    group: str
    order: int
    icon: str
    title: str
    event: str = ""
    start_inside: str | None = None


@dataclass(frozen=True)
class NodeKind:
    """One node kind: its role, allowed flow counts (``None`` = unbounded) and config keys."""

    name: str
    role: Role
    min_in: int
    max_in: int | None
    min_out: int
    max_out: int | None
    config_keys: tuple[str, ...]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    width: int = 100
    height: int = 80
    config_types: Mapping[str, tuple[type, ...]] = field(default_factory=dict)
    #: The BPMN element that carries the kind (`intermediateCatchEvent` for a timer catch).
    element: str = ""
    #: The one event definition the kind always has (`timer`, `link`...; "" for none, as a
    #: milestone); None when the definition comes from the `event` config (start, end, boundary).
    event: str | None = None
    #: Attributes that tell the kind from another one of the same element (an event
    #: sub-process is a `subProcess` with `triggeredByEvent="true"`).
    marks: Mapping[str, str] = field(default_factory=dict)
    #: Whether the element names its message in its own `messageRef` (send and receive tasks).
    message_ref: bool = False
    #: The designer's palette entries that draw the kind.
    palette: tuple[PaletteEntry, ...] = ()
    #: The entries of bpmn-js's replace menu (`replace-with-<name>`) that turn an element into
    #: this kind; `scoped_replace`: those that do so only inside an event sub-process.
    replace: tuple[str, ...] = ()
    scoped_replace: tuple[str, ...] = ()

    def with_defaults(self, config: Mapping[str, Any] | None) -> dict[str, Any]:
        """Return ``config`` with this kind's defaults filled in for absent keys (a new dict)."""
        merged = dict(self.defaults)
        merged.update(config or {})
        return merged


#: Config flag of a script task imported with an empty script, which its tool (jBPM,
#: SpiffWorkflow) runs as a no-op: it does the same here until a script is written.
EMPTY_SCRIPT = "emptyInFile"


def _kind(**kwargs: Any) -> NodeKind:
    if "multiInstance" in kwargs.get("config_keys", ()):  # what repeats may also loop
        kwargs["config_keys"] = (*kwargs["config_keys"], "loop")
        kwargs["config_types"] = {**kwargs.get("config_types", {}), "loop": (dict,)}
    kwargs["defaults"] = MappingProxyType(dict(kwargs.get("defaults", {})))
    kwargs["config_types"] = MappingProxyType(dict(kwargs.get("config_types", {})))
    kwargs["marks"] = MappingProxyType(dict(kwargs.get("marks", {})))
    kwargs.setdefault("element", kwargs["name"])
    return NodeKind(**kwargs)


#: A conditional event's settings: its `condition` expression and, optionally, the variables
#: (comma-separated) whose change alone re-evaluates it (Camunda 7's `camunda:variableName`).
CONDITION_KEYS = ("condition", "watch")
# Text settings of events that wait for or throw something.
EVENT_TEXT = (
    "event",
    "code",
    "duration",
    "date",
    "cycle",
    "message",
    "correlationKey",
    "signal",
    "timezone",
    *CONDITION_KEYS,
)
# What a tool call is configured by: service and send tasks, message throw and end events.
TOOL_KEYS = ("tool", "inputs", "saveTo", "retries", "backoff", "timeout")
TOOL_DEFAULTS = {"inputs": {}, "retries": 3, "backoff": 2.0, "timeout": 30}
TOOL_TYPES: dict[str, tuple[type, ...]] = {
    "tool": (str,),
    "inputs": (dict,),
    "saveTo": (str,),
    "retries": (int,),
    "backoff": NUMBER,
    "timeout": NUMBER,
}

#: What a business rule task is configured by: the decision id, its version binding, where the
#: result goes and whether no matching rule is an incident.
DECISION_KEYS = ("decision", "binding", "version", "saveTo", "required", "multiInstance")
DECISION_TYPES: dict[str, tuple[type, ...]] = {
    "decision": (str,),
    "binding": (str,),
    "version": (int,),
    "saveTo": (str,),
    "required": (bool,),
    "multiInstance": (dict,),
}

#: Settings of another engine kept from a BPMN import for display and export only (see
#: `process.bpmn.vendor`): the engine never reads them, validation does not flag them.
REFERENCE_KEYS = ("formRef", "implementation", "dueDate", "followUpDate", "origin")

# What each `event` value of start, end and boundary events may be.
BOUNDARY_EVENTS: tuple[str, ...] = (
    "timer",
    "message",
    "signal",
    "error",
    "escalation",
    "conditional",
)
END_EVENTS: tuple[str, ...] = ("", "error", "escalation", "terminate", "signal", "message")
# Start events of an event sub-process, and of the process itself (beside its one none start).
EVENT_START_EVENTS: tuple[str, ...] = (
    "timer",
    "message",
    "signal",
    "error",
    "escalation",
    "conditional",
)
PROCESS_START_EVENTS: tuple[str, ...] = ("timer", "message", "signal", "conditional")
# Compensation and transactions (docs/process-format.md#compensation-and-transactions): a
# compensation boundary names its handler, a cancel boundary sits on a transaction; compensation
# and cancel ends; a compensation start begins an event sub-process when its scope is compensated.
COMPENSATION_KEYS = ("activity", "waitForCompletion")
COMPENSATION_TYPES: dict[str, tuple[type, ...]] = {"activity": (str,), "waitForCompletion": (bool,)}
BOUNDARY_EVENTS += ("compensate", "cancel")
END_EVENTS += ("compensate", "cancel")
EVENT_START_EVENTS += ("compensate",)


# bpmn-js's names of definitions in its replace menu where they differ from ours.
_MENU_NAMES = {"compensate": "compensation"}
# Definitions with no non-interrupting form.
_ALWAYS_INTERRUPT = ("error", "compensate", "cancel")


def _event_targets(
    shape: str, events: tuple[str, ...], *, lenient: bool = False
) -> tuple[str, ...]:
    """bpmn-js's replace-menu names of `shape` events with these definitions (`timer-start`,
    `none-end`), with their non-interrupting forms when `lenient` (an error always interrupts)."""
    names = [f"{_MENU_NAMES.get(event, event or 'none')}-{shape}" for event in events]
    if lenient:
        names += [
            f"non-interrupting-{event}-{shape}"
            for event in events
            if event not in _ALWAYS_INTERRUPT
        ]
    return tuple(names)


_PROCESS_STARTS = _event_targets("start", ("", *PROCESS_START_EVENTS))
BOUNDARY_HINT = " (drop it on the border of a task, sub-process or call activity)"

EVENT_SIZE = {"width": 36, "height": 36}
TASK_SIZE = {"width": 100, "height": 80}
GATEWAY_SIZE = {"width": 50, "height": 50}

KINDS: Mapping[str, NodeKind] = MappingProxyType(
    {
        kind.name: kind
        for kind in (
            _kind(
                name="startEvent",
                label="Start event",
                palette=(
                    PaletteEntry(
                        "start-event",
                        "event",
                        10,
                        "bpmn-icon-start-event-none",
                        "Create start event",
                    ),
                    PaletteEntry(
                        "message-start",
                        "start",
                        60,
                        "bpmn-icon-start-event-message",
                        "Create message start event (a message starts the process)",
                        event="message",
                    ),
                    PaletteEntry(
                        "timer-start",
                        "start",
                        61,
                        "bpmn-icon-start-event-timer",
                        "Create timer start event (starts the process at a date or on a schedule)",
                        event="timer",
                    ),
                    PaletteEntry(
                        "signal-start",
                        "start",
                        62,
                        "bpmn-icon-start-event-signal",
                        "Create signal start event (a signal starts the process)",
                        event="signal",
                    ),
                    PaletteEntry(
                        "conditional-start",
                        "start",
                        63,
                        "bpmn-icon-start-event-condition",
                        "Create conditional start event (started through the conditions API "
                        "when its condition holds)",
                        event="conditional",
                    ),
                ),
                replace=_PROCESS_STARTS,
                scoped_replace=tuple(
                    name
                    for name in _event_targets("start", EVENT_START_EVENTS, lenient=True)
                    if name not in _PROCESS_STARTS
                ),
                role="event",
                min_in=0,
                max_in=0,
                min_out=1,
                max_out=1,
                config_keys=(
                    "form",
                    "event",
                    "interrupting",
                    "code",
                    "duration",
                    "date",
                    "cycle",
                    "message",
                    "correlationKey",
                    "signal",
                    "timezone",
                    *CONDITION_KEYS,
                ),
                config_types={
                    "form": (dict,),
                    "interrupting": (bool,),
                    **{key: (str,) for key in EVENT_TEXT},
                },
                **EVENT_SIZE,
            ),
            _kind(
                name="endEvent",
                label="End event",
                palette=(
                    PaletteEntry(
                        "end-event", "event", 11, "bpmn-icon-end-event-none", "Create end event"
                    ),
                    PaletteEntry(
                        "error-end",
                        "end",
                        70,
                        "bpmn-icon-end-event-error",
                        "Create error end event",
                        event="error",
                    ),
                    PaletteEntry(
                        "escalation-end",
                        "end",
                        71,
                        "bpmn-icon-end-event-escalation",
                        "Create escalation end event",
                        event="escalation",
                    ),
                    PaletteEntry(
                        "terminate-end",
                        "end",
                        72,
                        "bpmn-icon-end-event-terminate",
                        "Create terminate end event (ends everything in its scope)",
                        event="terminate",
                    ),
                    PaletteEntry(
                        "signal-end",
                        "end",
                        73,
                        "bpmn-icon-end-event-signal",
                        "Create signal end event (broadcasts a signal, then the path ends)",
                        event="signal",
                    ),
                    PaletteEntry(
                        "message-end",
                        "end",
                        74,
                        "bpmn-icon-end-event-message",
                        "Create message end event (a tool sends a message, then the path ends)",
                        event="message",
                    ),
                    PaletteEntry(
                        "compensation-end",
                        "end",
                        75,
                        "bpmn-icon-end-event-compensation",
                        "Create compensation end event (undoes completed activities)",
                        event="compensate",
                    ),
                ),
                replace=_event_targets("end", END_EVENTS),
                role="event",
                min_in=1,
                max_in=None,
                min_out=0,
                max_out=0,
                config_keys=(
                    "event",
                    "code",
                    "signal",
                    "payload",
                    "message",
                    *TOOL_KEYS,
                    *COMPENSATION_KEYS,
                ),
                config_types={
                    "event": (str,),
                    "code": (str,),
                    "signal": (str,),
                    "payload": (dict,),
                    "message": (str,),
                    **TOOL_TYPES,
                    **COMPENSATION_TYPES,
                },
                **EVENT_SIZE,
            ),
            _kind(
                name="userTask",
                label="User task",
                palette=(
                    PaletteEntry(
                        "user-task", "activity", 22, "bpmn-icon-user-task", "Create user task"
                    ),
                ),
                replace=("user-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("assignee", "candidates", "form", "dueIn", "saveTo", "multiInstance"),
                config_types={
                    "multiInstance": (dict,),
                    "assignee": (dict,),
                    "candidates": (dict,),
                    "form": (dict,),
                    "dueIn": (str,),
                    "saveTo": (str,),
                },
                **TASK_SIZE,
            ),
            _kind(
                name="serviceTask",
                label="Service task",
                palette=(
                    PaletteEntry(
                        "service-task",
                        "activity",
                        23,
                        "bpmn-icon-service-task",
                        "Create service task",
                    ),
                ),
                replace=("service-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=(*TOOL_KEYS, "multiInstance"),
                defaults=TOOL_DEFAULTS,
                config_types={"multiInstance": (dict,), **TOOL_TYPES},
                **TASK_SIZE,
            ),
            _kind(
                name="sendTask",
                label="Send task",
                palette=(
                    PaletteEntry(
                        "send-task",
                        "activity",
                        25,
                        "bpmn-icon-send-task",
                        "Create send task (a tool sends a message)",
                    ),
                ),
                replace=("send-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=(*TOOL_KEYS, "message", "multiInstance"),
                defaults=TOOL_DEFAULTS,
                config_types={"multiInstance": (dict,), "message": (str,), **TOOL_TYPES},
                **TASK_SIZE,
                message_ref=True,
            ),
            _kind(
                name="receiveTask",
                label="Receive task",
                palette=(
                    PaletteEntry(
                        "receive-task",
                        "activity",
                        26,
                        "bpmn-icon-receive-task",
                        "Create receive task (waits for a message)",
                    ),
                ),
                replace=("receive-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("message", "correlationKey", "saveTo", "multiInstance", "instantiate"),
                config_types={
                    "message": (str,),
                    "correlationKey": (str,),
                    "saveTo": (str,),
                    "multiInstance": (dict,),
                    "instantiate": (bool,),
                },
                **TASK_SIZE,
                message_ref=True,
            ),
            _kind(
                name="scriptTask",
                label="Script task",
                palette=(
                    PaletteEntry(
                        "script-task",
                        "activity",
                        27,
                        "bpmn-icon-script-task",
                        "Create script task (assignments in Flowdesk expressions)",
                    ),
                ),
                replace=("script-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("script", "language", "multiInstance", EMPTY_SCRIPT),
                defaults={"language": "flowdesk"},
                config_types={
                    "script": (str,),
                    "language": (str,),
                    "multiInstance": (dict,),
                    EMPTY_SCRIPT: (bool,),
                },
                **TASK_SIZE,
            ),
            _kind(
                name="manualTask",
                label="Manual task",
                palette=(
                    PaletteEntry(
                        "manual-task",
                        "activity",
                        28,
                        "bpmn-icon-manual-task",
                        "Create manual task (work outside Flowdesk; passes through)",
                    ),
                ),
                replace=("manual-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("multiInstance",),
                config_types={"multiInstance": (dict,)},
                **TASK_SIZE,
            ),
            _kind(
                name="exclusiveGateway",
                label="Exclusive gateway",
                palette=(
                    PaletteEntry(
                        "exclusive-gateway",
                        "gateway",
                        30,
                        "bpmn-icon-gateway-none",
                        "Create gateway",
                    ),
                ),
                replace=("exclusive-gateway",),
                role="gateway",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=None,
                config_keys=(),
                **GATEWAY_SIZE,
            ),
            _kind(
                name="parallelGateway",
                label="Parallel gateway",
                palette=(
                    PaletteEntry(
                        "parallel-gateway",
                        "gateway",
                        31,
                        "bpmn-icon-gateway-parallel",
                        "Create parallel gateway",
                    ),
                ),
                replace=("parallel-gateway",),
                role="gateway",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=None,
                config_keys=(),
                **GATEWAY_SIZE,
            ),
            _kind(
                name="inclusiveGateway",
                label="Inclusive gateway",
                palette=(
                    PaletteEntry(
                        "inclusive-gateway",
                        "gateway",
                        32,
                        "bpmn-icon-gateway-or",
                        "Create inclusive gateway (takes every flow whose condition holds)",
                    ),
                ),
                replace=("inclusive-gateway",),
                role="gateway",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=None,
                config_keys=(),
                **GATEWAY_SIZE,
            ),
            _kind(
                name="eventBasedGateway",
                label="Event-based gateway",
                palette=(
                    PaletteEntry(
                        "event-based-gateway",
                        "gateway",
                        33,
                        "bpmn-icon-gateway-eventbased",
                        "Create event-based gateway (the first event after it wins)",
                    ),
                ),
                replace=("event-based-gateway",),
                role="gateway",
                min_in=1,
                max_in=None,
                min_out=2,
                max_out=None,
                config_keys=("instantiate", "gatewayType"),
                config_types={"instantiate": (bool,), "gatewayType": (str,)},
                **GATEWAY_SIZE,
            ),
            _kind(
                name="complexGateway",
                label="Complex gateway",
                palette=(
                    PaletteEntry(
                        "complex-gateway",
                        "gateway",
                        34,
                        "bpmn-icon-gateway-complex",
                        "Create complex gateway (goes on once its activation condition holds)",
                    ),
                ),
                replace=("complex-gateway",),
                role="gateway",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=None,
                config_keys=("activation",),
                config_types={"activation": (str,)},
                **GATEWAY_SIZE,
            ),
            _kind(
                name="adHocSubProcess",
                label="Ad-hoc sub-process",
                palette=(
                    PaletteEntry(
                        "adhoc-subprocess",
                        "activity",
                        18,
                        "bpmn-icon-ad-hoc-subprocess",
                        "Create ad-hoc sub-process (its activities run when activated)",
                        start_inside=None,
                    ),
                ),
                replace=("ad-hoc-subprocess",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=(
                    "collapsed",
                    "activate",
                    "ordering",
                    "completion",
                    "cancelRemaining",
                    "worker",
                ),
                config_types={
                    "worker": (str,),
                    "collapsed": (bool,),
                    "activate": (str,),
                    "ordering": (str,),
                    "completion": (str,),
                    "cancelRemaining": (bool,),
                },
                width=350,
                height=200,
            ),
            _kind(
                name="timerCatch",
                label="Timer",
                palette=(
                    PaletteEntry(
                        "timer-catch",
                        "intermediate",
                        40,
                        "bpmn-icon-intermediate-event-catch-timer",
                        "Create timer (wait; on an activity's border: a timer boundary event)",
                    ),
                ),
                replace=("timer-intermediate-catch",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("duration", "date", "cycle"),
                config_types={"duration": (str,), "date": (str,), "cycle": (str,)},
                **EVENT_SIZE,
                element="intermediateCatchEvent",
                event="timer",
            ),
            _kind(
                name="messageCatch",
                label="Message",
                palette=(
                    PaletteEntry(
                        "message-catch",
                        "intermediate",
                        41,
                        "bpmn-icon-intermediate-event-catch-message",
                        "Create message catch (wait for a message; on an activity's border: a "
                        "message boundary event)",
                    ),
                ),
                replace=("message-intermediate-catch",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("message", "correlationKey", "saveTo"),
                config_types={"message": (str,), "correlationKey": (str,), "saveTo": (str,)},
                **EVENT_SIZE,
                element="intermediateCatchEvent",
                event="message",
            ),
            _kind(
                name="signalCatch",
                label="Signal",
                palette=(
                    PaletteEntry(
                        "signal-catch",
                        "intermediate",
                        43,
                        "bpmn-icon-intermediate-event-catch-signal",
                        "Create signal catch (wait for a signal; on an activity's border: a "
                        "signal boundary event)",
                    ),
                ),
                replace=("signal-intermediate-catch",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("signal", "saveTo"),
                config_types={"signal": (str,), "saveTo": (str,)},
                **EVENT_SIZE,
                element="intermediateCatchEvent",
                event="signal",
            ),
            _kind(
                name="conditionalCatch",
                label="Condition",
                palette=(
                    PaletteEntry(
                        "conditional-catch",
                        "intermediate",
                        39,
                        "bpmn-icon-intermediate-event-catch-condition",
                        "Create conditional catch (wait until a condition on the data holds; on "
                        "an activity's border: a conditional boundary event)",
                    ),
                ),
                replace=("conditional-intermediate-catch",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=CONDITION_KEYS,
                config_types={key: (str,) for key in CONDITION_KEYS},
                **EVENT_SIZE,
                element="intermediateCatchEvent",
                event="conditional",
            ),
            _kind(
                name="signalThrow",
                label="Signal throw",
                palette=(
                    PaletteEntry(
                        "signal-throw",
                        "intermediate",
                        44,
                        "bpmn-icon-intermediate-event-throw-signal",
                        "Create signal throw (broadcasts a signal; the flow goes on)",
                    ),
                ),
                replace=("signal-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("signal", "payload"),
                config_types={"signal": (str,), "payload": (dict,)},
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="signal",
            ),
            _kind(
                name="messageThrow",
                label="Message throw",
                palette=(
                    PaletteEntry(
                        "message-throw",
                        "intermediate",
                        45,
                        "bpmn-icon-intermediate-event-throw-message",
                        "Create message throw (a tool sends a message; the flow goes on)",
                    ),
                ),
                replace=("message-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=(*TOOL_KEYS, "message"),
                defaults=TOOL_DEFAULTS,
                config_types={"message": (str,), **TOOL_TYPES},
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="message",
            ),
            _kind(
                name="linkThrow",
                label="Link throw",
                palette=(
                    PaletteEntry(
                        "link-throw",
                        "intermediate",
                        46,
                        "bpmn-icon-intermediate-event-throw-link",
                        "Create link throw (jumps to the link catch of the same name)",
                    ),
                ),
                replace=("link-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=0,
                max_out=0,
                config_keys=("link",),
                config_types={"link": (str,)},
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="link",
            ),
            _kind(
                name="linkCatch",
                label="Link catch",
                palette=(
                    PaletteEntry(
                        "link-catch",
                        "intermediate",
                        47,
                        "bpmn-icon-intermediate-event-catch-link",
                        "Create link catch (where a link throw of the same name continues)",
                    ),
                ),
                replace=("link-intermediate-catch",),
                role="event",
                min_in=0,
                max_in=0,
                min_out=1,
                max_out=1,
                config_keys=("link",),
                config_types={"link": (str,)},
                **EVENT_SIZE,
                element="intermediateCatchEvent",
                event="link",
            ),
            _kind(
                name="milestone",
                label="Milestone",
                palette=(
                    PaletteEntry(
                        "milestone",
                        "intermediate",
                        48,
                        "bpmn-icon-intermediate-event-none",
                        "Create milestone (recorded in the history; the flow goes on)",
                    ),
                ),
                replace=("none-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=(),
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="",
            ),
            _kind(
                name="subProcess",
                label="Sub-process",
                palette=(
                    PaletteEntry(
                        "subprocess-expanded",
                        "activity",
                        20,
                        "bpmn-icon-subprocess-expanded",
                        "Create sub-process (expanded, with its start event)",
                        start_inside="",
                    ),
                ),
                replace=("collapsed-subprocess", "expanded-subprocess", "subprocess"),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("collapsed", "multiInstance"),
                config_types={"collapsed": (bool,), "multiInstance": (dict,)},
                width=350,
                height=200,
            ),
            _kind(
                name="eventSubProcess",
                label="Event sub-process",
                palette=(
                    PaletteEntry(
                        "event-subprocess",
                        "activity",
                        21,
                        "bpmn-icon-event-subprocess-expanded",
                        "Create event sub-process (started by a timer, message, error or "
                        "escalation)",
                        start_inside="timer",
                    ),
                ),
                replace=("event-subprocess",),
                role="task",
                min_in=0,
                max_in=0,
                min_out=0,
                max_out=0,
                config_keys=("collapsed",),
                config_types={"collapsed": (bool,)},
                width=350,
                height=200,
                element="subProcess",
                marks={"triggeredByEvent": "true"},
            ),
            _kind(
                name="callActivity",
                label="Call activity",
                palette=(
                    PaletteEntry(
                        "call-activity",
                        "activity",
                        24,
                        "bpmn-icon-call-activity",
                        "Create call activity (starts another process)",
                    ),
                ),
                replace=("call-activity",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("process", "binding", "version", "inputs", "saveTo", "multiInstance"),
                defaults={"binding": "latest", "inputs": {}},
                config_types={
                    "process": (str,),
                    "binding": (str,),
                    "version": (int,),
                    "inputs": (dict,),
                    "saveTo": (str,),
                    "multiInstance": (dict,),
                },
                **TASK_SIZE,
            ),
            _kind(
                name="boundaryEvent",
                label="Boundary event",
                palette=(
                    PaletteEntry(
                        "error-boundary",
                        "boundary",
                        50,
                        "bpmn-icon-intermediate-event-catch-error",
                        "Create error boundary event" + BOUNDARY_HINT,
                        event="error",
                    ),
                    PaletteEntry(
                        "escalation-boundary",
                        "boundary",
                        51,
                        "bpmn-icon-intermediate-event-catch-escalation",
                        "Create escalation boundary event" + BOUNDARY_HINT,
                        event="escalation",
                    ),
                    PaletteEntry(
                        "compensation-boundary",
                        "boundary",
                        55,
                        "bpmn-icon-intermediate-event-catch-compensation",
                        "Create compensation boundary event (connect it to its handler)"
                        + BOUNDARY_HINT,
                        event="compensate",
                    ),
                ),
                replace=_event_targets("boundary", BOUNDARY_EVENTS, lenient=True),
                role="event",
                min_in=0,
                max_in=0,
                min_out=1,
                max_out=1,
                config_keys=(
                    "attachedTo",
                    "event",
                    "interrupting",
                    "code",
                    "duration",
                    "date",
                    "cycle",
                    "message",
                    "correlationKey",
                    "signal",
                    "saveTo",
                    "handler",
                    *CONDITION_KEYS,
                ),
                defaults={"interrupting": True},
                config_types={
                    "handler": (str,),
                    "attachedTo": (str,),
                    "interrupting": (bool,),
                    "saveTo": (str,),
                    **{key: (str,) for key in EVENT_TEXT},
                },
                **EVENT_SIZE,
            ),
            _kind(
                name="escalationThrow",
                label="Escalation",
                palette=(
                    PaletteEntry(
                        "escalation-throw",
                        "intermediate",
                        42,
                        "bpmn-icon-intermediate-event-throw-escalation",
                        "Create escalation (throw; the flow goes on)",
                    ),
                ),
                replace=("escalation-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("code",),
                config_types={"code": (str,)},
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="escalation",
            ),
            _kind(
                name="businessRuleTask",
                label="Business rule task",
                palette=(
                    PaletteEntry(
                        "business-rule-task",
                        "activity",
                        29,
                        "bpmn-icon-business-rule-task",
                        "Create business rule task (evaluates a published DMN decision)",
                    ),
                ),
                replace=("rule-task",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=DECISION_KEYS,
                defaults={"binding": "latest"},
                config_types=DECISION_TYPES,
                **TASK_SIZE,
            ),
            # Compensation and transactions: see docs/process-format.md.
            _kind(
                name="compensationThrow",
                label="Compensation throw",
                palette=(
                    PaletteEntry(
                        "compensation-throw",
                        "intermediate",
                        49,
                        "bpmn-icon-intermediate-event-throw-compensation",
                        "Create compensation throw (undoes completed activities, then goes on)",
                    ),
                ),
                replace=("compensation-intermediate-throw",),
                role="event",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=COMPENSATION_KEYS,
                config_types=COMPENSATION_TYPES,
                **EVENT_SIZE,
                element="intermediateThrowEvent",
                event="compensate",
            ),
            _kind(
                name="transaction",
                label="Transaction",
                palette=(
                    PaletteEntry(
                        "transaction",
                        "activity",
                        19,
                        "bpmn-icon-transaction",
                        "Create transaction (a sub-process a cancel end undoes)",
                        start_inside="",
                    ),
                ),
                replace=("transaction",),
                role="task",
                min_in=1,
                max_in=None,
                min_out=1,
                max_out=1,
                config_keys=("collapsed", "multiInstance"),
                config_types={"collapsed": (bool,), "multiInstance": (dict,)},
                width=350,
                height=200,
            ),
        )
    }
)

#: The event definitions Flowdesk reads and writes, by short name (`timer` is a
#: `timerEventDefinition`): a kind's `event`, or the `event` config of start, end and
#: boundary events.
EVENT_DEFINITIONS: tuple[str, ...] = (
    "timer",
    "message",
    "error",
    "escalation",
    "terminate",
    "signal",
    "link",
    "conditional",
)
EVENT_DEFINITIONS += ("compensate", "cancel")
#: The kinds whose one definition the kind itself fixes, by (element, definitions): the
#: intermediate events (a throw with none is a milestone).
EVENT_KINDS: Mapping[tuple[str, tuple[str, ...]], str] = MappingProxyType(
    {
        (kind.element, (kind.event,) if kind.event else ()): kind.name
        for kind in KINDS.values()
        if kind.event is not None
    }
)
#: The definition each of those kinds carries without an `event` config (not a milestone's none).
KIND_EVENT: Mapping[str, str] = MappingProxyType(
    {kind.name: kind.event for kind in KINDS.values() if kind.event}
)


def definition_element(event: str) -> str:
    """The local name of the BPMN element of an event definition (`timerEventDefinition`)."""
    return f"{event}EventDefinition"


def element_kind(element: str, attributes: Mapping[str, str | None]) -> str | None:
    """The kind a BPMN element without a fixed event definition is: the one of that element whose
    marks it carries (`subProcess` with `triggeredByEvent="true"` is an event sub-process)."""
    found = [
        kind
        for kind in KINDS.values()
        if kind.element == element
        and kind.event is None
        and all(attributes.get(key) == value for key, value in kind.marks.items())
    ]
    return max(found, key=lambda kind: len(kind.marks)).name if found else None


# Kinds that may hold other nodes (their `parent`), and that may carry `multiInstance`.
SCOPE_KINDS: tuple[str, ...] = ("subProcess", "eventSubProcess", "transaction", "adHocSubProcess")
TASK_KINDS: tuple[str, ...] = (
    "userTask",
    "serviceTask",
    "sendTask",
    "receiveTask",
    "scriptTask",
    "manualTask",
    "businessRuleTask",
)
MULTI_INSTANCE_KINDS: tuple[str, ...] = (*TASK_KINDS, "subProcess", "callActivity", "transaction")
# Boundary events attach to these.
BOUNDARY_HOSTS: tuple[str, ...] = (
    *TASK_KINDS,
    "subProcess",
    "callActivity",
    "transaction",
    "adHocSubProcess",
)
# What may follow an event-based gateway, and the event each of those kinds waits for there.
EVENT_GATEWAY_TARGETS: Mapping[str, str] = MappingProxyType(
    {
        "timerCatch": "timer",
        "messageCatch": "message",
        "signalCatch": "signal",
        "receiveTask": "message",
        "conditionalCatch": "conditional",
    }
)
#: Gateways whose outgoing flows carry conditions and a default flow, and the ones of them that
#: take every flow whose condition holds (an inclusive split) rather than the first.
CONDITION_GATEWAYS: tuple[str, ...] = ("exclusiveGateway", "inclusiveGateway", "complexGateway")
INCLUSIVE_SPLITS: tuple[str, ...] = ("inclusiveGateway", "complexGateway")
#: How an ad-hoc sub-process runs its activities: any number at once, or one at a time.
ADHOC_ORDERINGS: tuple[str, ...] = ("parallel", "sequential")
# Script languages Flowdesk runs (others import verbatim and are a publish error).
SCRIPT_LANGUAGES: tuple[str, ...] = ("flowdesk",)
MULTI_INSTANCE_KEYS: tuple[str, ...] = (
    "sequential",
    "collection",
    "cardinality",
    "element",
    "completion",
    "output",
)

#: A standard loop's settings (`loop`): the condition under which the activity runs again, whether
#: it is tested before each run (else after), and the most runs.
LOOP_KEYS: tuple[str, ...] = ("condition", "testBefore", "maximum")

ASSIGNEE_TYPES: tuple[str, ...] = ("user", "role", "expression")

#: Activities and intermediate events that may have no outgoing flow: there the path ends, as
#: at a plain end event (BPMN's implicit end, which Camunda and SpiffWorkflow run too).
IMPLICIT_END_KINDS = frozenset(
    {
        *TASK_KINDS,
        "timerCatch",
        "messageCatch",
        "signalCatch",
        "conditionalCatch",
        "signalThrow",
        "messageThrow",
        "milestone",
        "subProcess",
        "callActivity",
        "escalationThrow",
        "compensationThrow",
        "transaction",
        "adHocSubProcess",
    }
)


def get_kind(name: str) -> NodeKind | None:
    """Return the registered kind called ``name``, or ``None`` when it is unknown."""
    return KINDS.get(name)


def default_size(kind: str) -> tuple[int, int]:
    """Return the default ``(width, height)`` of a shape of ``kind`` (task size when unknown)."""
    spec = KINDS.get(kind)
    return (spec.width, spec.height) if spec else (TASK_SIZE["width"], TASK_SIZE["height"])


def config_type_ok(kind: NodeKind, key: str, value: Any) -> bool:
    """Tell whether ``value`` has the declared type of config ``key`` (``bool`` is no number)."""
    types = kind.config_types.get(key)
    if types is None or value is None:
        return True
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)
