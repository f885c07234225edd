"""Events on import: which BPMN events map to our kinds, and their timer and message settings.

Plain start and end events map directly; error, escalation, terminate, signal and message end
events, the timer, message and signal starts of the process, the starts of event sub-processes,
boundary events and escalation throws carry `event`/`code`. Any other start or end definition is
imported as a plain event and listed as unsupported. Intermediate events with exactly one timer,
message, signal, link or conditional definition become their kinds (a throw with none is a
milestone); every other event (multiple...) is not imported. Compensation and cancel events are
read as their kinds and `event` configs (see `compensation`). A conditional event's condition is
translated as a flow's is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from webapp.process.kinds import (
    BOUNDARY_EVENTS,
    END_EVENTS,
    EVENT_KINDS,
    EVENT_START_EVENTS,
    KIND_EVENT,
    KINDS,
    PROCESS_START_EVENTS,
)

from . import compensation, conditions
from .namespaces import BPMN, CAMUNDA, FLOWDESK_LANGUAGE, ZEEBE, q, split

#: The event elements the reader hands to `read_event`: those of our event kinds, and the
#: implicit throw event some tools write.
EVENTS = {kind.element for kind in KINDS.values() if kind.role == "event"} | {"implicitThrowEvent"}
_ISO_DURATION = re.compile(r"^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")
#: A Quartz/Spring cron (seconds first, `?` for "no value"); with 0 seconds it is a 5-field cron.
_SECONDS_CRON = re.compile(r"^0\s+(\S+\s+\S+\s+\S+\s+\S+\s+\S+)$")
_CRON = re.compile(r"^\S+(\s+\S+){4}$")

Warn = Callable[[str, str], None]
Skip = Callable[..., None]


def definitions(element: etree._Element, root: etree._Element) -> list[str]:
    """Short names (`timer`, `message`, `terminate`...) of an event's definitions."""
    names = []
    by_id = None
    for child in element:
        namespace, local = split(child.tag)
        if namespace != BPMN:
            continue
        if local.endswith("EventDefinition"):
            names.append(local.removesuffix("EventDefinition"))
        elif local == "eventDefinitionRef":
            if by_id is None:
                by_id = {e.get("id"): split(e.tag)[1] for e in root.iter() if e.get("id")}
            target = by_id.get((child.text or "").strip().rpartition(":")[2], "unknown")
            names.append(target.removesuffix("EventDefinition"))
    return names


def read_event(
    element: etree._Element,
    local: str,
    skip: Skip,
    root: etree._Element,
    in_event_subprocess: bool = False,
    top_level: bool = False,
) -> tuple[str, dict[str, Any]] | None:
    """Return (kind, config) for an event we import, or None after listing it as unsupported.

    The config holds the `event` a definition gives; a definition Flowdesk cannot run is listed.
    """
    found = definitions(element, root)
    single = found[0] if len(found) == 1 else None
    if local == "startEvent" and in_event_subprocess and single in EVENT_START_EVENTS:
        return local, {"event": single}
    if local == "startEvent" and top_level and single in PROCESS_START_EVENTS:
        return local, {"event": single}
    if local == "endEvent" and single in END_EVENTS:
        return local, {"event": single}
    if local in ("startEvent", "endEvent"):
        for name in found:
            skip(element, f"{local}[{name}]", f"imported as a plain {local}")
        return local, {}
    if local == "boundaryEvent" and single in BOUNDARY_EVENTS:
        return "boundaryEvent", {"event": single}
    kind = EVENT_KINDS.get((local, tuple(found)))
    if kind is not None:
        return kind, {}
    skip(element, f"{local}[{','.join(found) or 'none'}]")
    return None


def message_names(root: etree._Element) -> dict[str, str | None]:
    """Each `<bpmn:message>` id with its name; read once per file, not once per catch event."""
    return {m.get("id"): m.get("name") for m in root.iter(q(BPMN, "message")) if m.get("id")}


def message_ref(element: etree._Element) -> str:
    """The id of the message an event or a send/receive task refers to ("" when none)."""
    definition = element.find(q(BPMN, "messageEventDefinition"))
    ref = element.get("messageRef") if definition is None else definition.get("messageRef")
    return (ref or "").strip().rpartition(":")[2]


def correlation_keys(root: etree._Element) -> dict[str, conditions.Translation]:
    """Camunda 8's correlation key of each `<bpmn:message>` (`zeebe:subscription`), translated
    when it can be; kept as written otherwise (`ok` False)."""
    keys: dict[str, conditions.Translation] = {}
    for message in root.iter(q(BPMN, "message")):
        for subscription in message.iter(q(ZEEBE, "subscription")):
            key = (subscription.get("correlationKey") or "").strip()
            if message.get("id") and key:
                keys[str(message.get("id"))] = conditions.translate_value(key)
    return keys


#: The correlation key of an imported message catch that has none. Camunda 7 models carry none:
#: its `correlateMessage(name, businessKey)` finds the waiting instance by business key; Flowable
#: and SpiffWorkflow hosts address one instance too, which the business key does in Flowdesk.
BUSINESS_KEY = "$instance.businessKey"


def correlates_on_business_key(root: etree._Element) -> bool:
    """Whether message catches without a key correlate on the business key: in every file
    but a Camunda 8 one, whose catches must say their key (a missing one stays missing)."""
    namespaces = {ns for element in (root, *root) for ns in (element.nsmap or {}).values()}
    return ZEEBE not in namespaces


def signal_names(root: etree._Element) -> dict[str, str]:
    """Each `<bpmn:signal>` id with its name (the id when it has none)."""
    return {
        str(s.get("id")): s.get("name") or str(s.get("id"))
        for s in root.iter(q(BPMN, "signal"))
        if s.get("id")
    }


def codes(root: etree._Element, local: str) -> dict[str, str | None]:
    """Each `<bpmn:error>` (or escalation) id with its code: `errorCode`/`escalationCode`."""
    return {e.get("id"): e.get(f"{local}Code") for e in root.iter(q(BPMN, local)) if e.get("id")}


def standard_config(
    element: etree._Element,
    kind: str,
    warn: Warn,
    messages: Mapping[str, str | None],
    refs: Mapping[str, Mapping[str, str | None]] | None = None,
    event: str | None = None,
    signals: Mapping[str, str] | None = None,
    ours: Mapping[str, Any] | None = None,
    top_level: bool = False,
    foreign: bool = True,
) -> dict[str, Any]:
    """The config standard BPMN carries: timers, message and signal names, link names, error and
    escalation codes, a boundary event's host and `cancelActivity`, an event sub-process start's
    `isInterrupting`. `ours` (our extension's config) wins over a name only guessed from the id.
    A process-level timer start's date is an ISO date-time (not an expression). In a `foreign`
    file (not Flowdesk's) a message event without a message is named by itself, as Spiff does."""
    config: dict[str, Any] = {}
    spec = KINDS.get(kind)
    event = event or KIND_EVENT.get(kind) or ("message" if spec and spec.message_ref else None)
    if kind == "boundaryEvent":
        config["attachedTo"] = (element.get("attachedToRef") or "").strip().rpartition(":")[2]
        if element.get("cancelActivity") in ("true", "false"):
            config["interrupting"] = element.get("cancelActivity") == "true"
    if kind == "startEvent" and event and element.get("isInterrupting") in ("true", "false"):
        config["interrupting"] = element.get("isInterrupting") == "true"
    if event == "timer":
        definition = element.find(q(BPMN, "timerEventDefinition"))
        iso_date = top_level and kind == "startEvent"
        config.update(_timer(definition, warn, iso_date=iso_date))
    elif event == "message" and spec and spec.message_ref:
        ref = (element.get("messageRef") or "").strip().rpartition(":")[2]
        if ref and messages.get(ref):
            config["message"] = messages[ref]
        elif ref:
            warn("import.message_missing", f"Message '{ref}' is not defined in the file or unnamed")
    elif event == "message":
        config.update(_message(element, warn, messages, by_name=foreign))
    elif event == "signal":
        config.update(_signal(element, warn, signals or {}))
    elif event == "link":
        definition = element.find(q(BPMN, "linkEventDefinition"))
        name = definition.get("name") if definition is not None else None
        if name:
            config["link"] = name
        elif name is None and "link" not in (ours or {}) and element.get("name"):
            config["link"] = element.get("name")  # bpmn-js before 2019 named only the event
        elif "link" not in (ours or {}):
            warn("import.link_missing", "Link event has no name")
    elif event == "compensate" and kind != "boundaryEvent":
        definition = element.find(q(BPMN, "compensateEventDefinition"))
        config.update(compensation.definition_settings(definition))
    elif event == "conditional":
        config.update(_condition(element, warn, "condition" in (ours or {})))
    elif event in ("error", "escalation"):
        local = "error" if event == "error" else "escalation"
        definition = element.find(q(BPMN, f"{local}EventDefinition"))
        ref = (definition.get(f"{local}Ref") if definition is not None else None) or ""
        ref = ref.strip().rpartition(":")[2]
        known = (refs or {}).get(local, {})
        if ref and ref not in known:
            warn("import.code_missing", f"The {local} '{ref}' is not defined in the file")
        elif ref and known[ref]:
            config["code"] = known[ref]
    return config


def _message(
    element: etree._Element, warn: Warn, messages: Mapping[str, str | None], *, by_name: bool
) -> dict:
    definition = element.find(q(BPMN, "messageEventDefinition"))
    ref = (definition.get("messageRef") if definition is not None else None) or ""
    if not ref:
        name = (element.get("name") or "").strip()
        if name and by_name:  # as SpiffWorkflow reads it
            warn(
                "import.message_by_name",
                f"Message event names no message; its own name '{name}' is the message's",
            )
            return {"message": name}
        warn("import.message_missing", "Message event names no message")
        return {}
    ref = ref.strip().rpartition(":")[2]
    if ref in messages:
        if messages[ref]:
            return {"message": messages[ref]}
        warn("import.message_missing", f"Message '{ref}' has no name")
        return {}
    warn("import.message_missing", f"Message '{ref}' is not defined in the file")
    return {}


def _condition(element: etree._Element, warn: Warn, ours: bool) -> dict[str, Any]:
    """A conditional event's condition (FEEL, JUEL or Python translated like a flow's), and
    Camunda 7's `variableName` as the variables whose change re-evaluates it; `ours`: our
    extension holds the condition."""
    definition = element.find(q(BPMN, "conditionalEventDefinition"))
    found = definition.find(q(BPMN, "condition")) if definition is not None else None
    text = "".join(found.itertext()).strip() if found is not None else ""
    config: dict[str, Any] = {}
    if definition is not None:
        names = (definition.get(q(CAMUNDA, "variableName")) or "").strip()
        if names:
            config["watch"] = ",".join(n.strip() for n in names.split(",") if n.strip())
        if definition.get(q(CAMUNDA, "variableEvents")):
            warn(
                "import.condition_events",
                "Conditional event's camunda:variableEvents not kept: any change of its "
                "variables re-evaluates it",
            )
    if not text:
        if not ours:  # else our extension keeps one XML could not
            warn("import.condition_missing", "Conditional event has no condition")
        return config
    assert found is not None
    if found.get("language") == FLOWDESK_LANGUAGE:
        return {**config, "condition": text}
    result = conditions.translate(text, found.get("language"))
    if not result.ok:
        warn(
            "import.condition_untranslated",
            f"Condition '{text}' ({result.dialect}) kept as written; rewrite it",
        )
    return {**config, "condition": result.text}


def _signal(element: etree._Element, warn: Warn, signals: Mapping[str, str]) -> dict[str, Any]:
    definition = element.find(q(BPMN, "signalEventDefinition"))
    ref = (definition.get("signalRef") if definition is not None else None) or ""
    ref = ref.strip().rpartition(":")[2]
    if not ref:
        warn("import.signal_missing", "Signal event names no signal")
        return {}
    if ref not in signals:
        warn("import.signal_missing", f"Signal '{ref}' is not defined in the file")
        return {}
    return {"signal": signals[ref]}


def cron_cycle(text: str) -> str | None:
    """A 5-field cron from a cron cycle (Quartz/Spring's 6 fields with 0 seconds too), or None."""
    seconds = _SECONDS_CRON.match(text)
    if seconds:
        text = seconds.group(1)
    if not _CRON.match(text):
        return None
    return " ".join("*" if field == "?" else field for field in text.split())


#: jBPM's short durations: `1s`, `2m 30s`, `1d2h`, `500ms` (parts in this order, each once).
_SHORT_DURATION = re.compile(
    r"^(?:(?P<d>\d+)d)?\s*(?:(?P<h>\d+)h)?\s*(?:(?P<m>\d+)m(?!s))?\s*"
    r"(?:(?P<s>\d+)s)?\s*(?:(?P<ms>\d+)ms)?$"
)


def short_duration(text: str) -> str | None:
    """jBPM's `1d 2h 3m 4s 5ms` as an ISO-8601 duration (`P1DT2H3M4.005S`); None otherwise."""
    match = _SHORT_DURATION.match(text.strip().lower())
    if match is None or not any(match.groupdict().values()):
        return None
    parts = {key: int(value) for key, value in match.groupdict().items() if value}
    seconds = parts.get("s", 0) + parts.pop("ms", 0) / 1000
    days = f"{parts['d']}D" if parts.get("d") else ""
    clock = "".join(f"{parts[k]}{k.upper()}" for k in ("h", "m") if parts.get(k))
    if seconds:
        clock += f"{seconds:.3f}".rstrip("0").rstrip(".") + "S"
    if not days and not clock:
        return "PT0S"
    return f"P{days}{'T' + clock if clock else ''}"


def _timer(definition: etree._Element | None, warn: Warn, iso_date: bool = False) -> dict[str, Any]:
    duration = definition.find(q(BPMN, "timeDuration")) if definition is not None else None
    date = definition.find(q(BPMN, "timeDate")) if definition is not None else None
    repeat = definition.find(q(BPMN, "timeCycle")) if definition is not None else None
    if duration is not None and "".join(duration.itertext()).strip():
        text = "".join(duration.itertext()).strip()
        literal = text.strip("\"'")
        if _ISO_DURATION.match(literal):
            return {"duration": literal}
        if (iso := short_duration(literal)) is not None:
            return {"duration": iso}
        warn("import.timer_untranslated", f"Timer duration '{text}' is not an ISO-8601 duration")
        return {"duration": text}
    if date is not None and "".join(date.itertext()).strip():
        text = "".join(date.itertext())
        if date.get("language") == FLOWDESK_LANGUAGE:
            return {"date": text}
        if iso_date:
            return {"date": text.strip().strip("\"'")}
        result = conditions.translate_date(text)
        if not result.ok:
            warn("import.timer_untranslated", f"Timer date '{text.strip()}' kept as written")
        return {"date": result.text}
    if repeat is not None and "".join(repeat.itertext()).strip():
        text = "".join(repeat.itertext()).strip()
        if repeat.get("language") == FLOWDESK_LANGUAGE:
            return {"cycle": text}
        literal = text.strip("\"'")
        if literal.startswith("R"):
            return {"cycle": literal}
        cron = cron_cycle(literal)
        if cron is not None:
            return {"cycle": cron}
        warn("import.timer_untranslated", f"Timer cycle '{text}' is not an ISO-8601 cycle or cron")
        return {"cycle": text}
    if definition is None or definition.find(q(BPMN, "timeCycle")) is None:
        warn("import.timer_empty", "Timer has no duration or date")
    return {}
