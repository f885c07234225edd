"""Events on import: which BPMN events map to our kinds, and their timer and message settings.

Plain start and end events map directly; error, escalation and terminate end events, the timer,
message, error and escalation starts of event sub-processes, boundary events with one of those
four definitions and escalation throws carry `event`/`code`. Any other start or end definition is
imported as a plain event and listed as unsupported. Intermediate catch events with exactly one
timer or message definition become `timerCatch`/`messageCatch`; every other event (signal,
conditional, link, compensation...) is not imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from webapp.process.kinds import BOUNDARY_EVENTS, END_EVENTS, EVENT_START_EVENTS

from . import conditions
from .namespaces import BPMN, FLOWDESK_LANGUAGE, q, split

EVENTS = {
    "startEvent",
    "endEvent",
    "intermediateCatchEvent",
    "intermediateThrowEvent",
    "boundaryEvent",
    "implicitThrowEvent",
}
_ISO_DURATION = re.compile(r"^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")

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
) -> tuple[str, dict[str, Any]] | None:
    """Return (kind, config) for an event we import, or None after listing it as unsupported.

    The config holds the `event` a definition gives; a definition Flowdesk cannot run is listed.
    """
    found = definitions(element, root)
    single = found[0] if len(found) == 1 else None
    if local == "startEvent" and in_event_subprocess and single in EVENT_START_EVENTS:
        return local, {"event": single}
    if local == "endEvent" and single in END_EVENTS:
        return local, {"event": single}
    if local in ("startEvent", "endEvent"):
        for name in found:
            skip(element, f"{local}[{name}]", f"imported as a plain {local}")
        return local, {}
    if local == "boundaryEvent" and single in BOUNDARY_EVENTS:
        return "boundaryEvent", {"event": single}
    if local == "intermediateThrowEvent" and found == ["escalation"]:
        return "escalationThrow", {}
    if local == "intermediateCatchEvent" and found == ["timer"]:
        timer = element.find(q(BPMN, "timerEventDefinition"))
        cycle = timer.find(q(BPMN, "timeCycle")) if timer is not None else None
        if cycle is not None:
            skip(element, f"{local}[timeCycle]", "cycle timers are not supported; no time imported")
        return "timerCatch", {}
    if local == "intermediateCatchEvent" and found == ["message"]:
        return "messageCatch", {}
    skip(element, f"{local}[{','.join(found) or 'none'}]")
    return None


def message_names(root: etree._Element) -> dict[str, str | None]:
    """Each `<bpmn:message>` id with its name; read once per file, not once per catch event."""
    return {m.get("id"): m.get("name") for m in root.iter(q(BPMN, "message")) if m.get("id")}


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
) -> dict[str, Any]:
    """The config standard BPMN carries: timers, message names, error and escalation codes,
    a boundary event's host and `cancelActivity`, an event sub-process start's `isInterrupting`."""
    config: dict[str, Any] = {}
    if kind == "boundaryEvent":
        config["attachedTo"] = (element.get("attachedToRef") or "").strip().rpartition(":")[2]
        if element.get("cancelActivity") in ("true", "false"):
            config["interrupting"] = element.get("cancelActivity") == "true"
    if kind == "startEvent" and event and element.get("isInterrupting") in ("true", "false"):
        config["interrupting"] = element.get("isInterrupting") == "true"
    if kind == "timerCatch" or event == "timer":
        definition = element.find(q(BPMN, "timerEventDefinition"))
        config.update(_timer(definition, warn, cycle=event is not None))
    elif kind == "messageCatch" or event == "message":
        config.update(_message(element, warn, messages))
    elif kind == "escalationThrow" or event in ("error", "escalation"):
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


def _message(element: etree._Element, warn: Warn, messages: Mapping[str, str | None]) -> dict:
    definition = element.find(q(BPMN, "messageEventDefinition"))
    ref = (definition.get("messageRef") if definition is not None else None) or ""
    if not ref:
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


def _timer(definition: etree._Element | None, warn: Warn, cycle: bool = False) -> dict[str, Any]:
    duration = definition.find(q(BPMN, "timeDuration")) if definition is not None else None
    date = definition.find(q(BPMN, "timeDate")) if definition is not None else None
    repeat = definition.find(q(BPMN, "timeCycle")) if definition is not None and cycle else None
    if duration is not None and "".join(duration.itertext()).strip():
        text = "".join(duration.itertext()).strip()
        literal = text.strip("\"'")
        if _ISO_DURATION.match(literal):
            return {"duration": literal}
        warn("import.timer_untranslated", f"Timer duration '{text}' is not an ISO-8601 duration")
        return {"duration": text}
    if date is not None and "".join(date.itertext()).strip():
        text = "".join(date.itertext())
        if date.get("language") == FLOWDESK_LANGUAGE:
            return {"date": text}
        result = conditions.translate_date(text)
        if not result.ok:
            warn("import.timer_untranslated", f"Timer date '{text.strip()}' kept as written")
        return {"date": result.text}
    if repeat is not None and "".join(repeat.itertext()).strip():
        text = "".join(repeat.itertext()).strip()
        literal = text.strip("\"'")
        if not literal.startswith("R"):
            warn("import.timer_untranslated", f"Timer cycle '{text}' is not an ISO-8601 cycle")
            return {"cycle": text}
        return {"cycle": literal}
    if definition is None or definition.find(q(BPMN, "timeCycle")) is None:
        warn("import.timer_empty", "Timer has no duration or date")
    return {}
