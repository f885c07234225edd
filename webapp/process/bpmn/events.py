"""Events on import: which BPMN events map to our kinds, and their timer and message settings.

Plain start and end events map directly. A start or end event with an event definition (timer,
message, terminate, error...) is imported as a plain event and its definition is listed as
unsupported. Intermediate catch events with exactly one timer or message definition become
`timerCatch`/`messageCatch`; every other event (throw, boundary, signal...) is not imported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

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
    element: etree._Element, local: str, skip: Skip, root: etree._Element
) -> tuple[str, dict[str, Any]] | None:
    """Return (kind, {}) for an event we import, or None after listing it as unsupported."""
    found = definitions(element, root)
    if local in ("startEvent", "endEvent"):
        for name in found:
            skip(element, f"{local}[{name}]", f"imported as a plain {local}")
        return local, {}
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


def standard_config(
    element: etree._Element, kind: str, warn: Warn, messages: Mapping[str, str | None]
) -> dict[str, Any]:
    """The config standard BPMN carries: timer duration/date and the message name."""
    if kind == "timerCatch":
        return _timer(element.find(q(BPMN, "timerEventDefinition")), warn)
    if kind == "messageCatch":
        definition = element.find(q(BPMN, "messageEventDefinition"))
        ref = (definition.get("messageRef") if definition is not None else None) or ""
        if not ref:
            warn("import.message_missing", "Message catch names no message")
            return {}
        ref = ref.strip().rpartition(":")[2]
        if ref in messages:
            if messages[ref]:
                return {"message": messages[ref]}
            warn("import.message_missing", f"Message '{ref}' has no name")
            return {}
        warn("import.message_missing", f"Message '{ref}' is not defined in the file")
    return {}


def _timer(definition: etree._Element | None, warn: Warn) -> dict[str, Any]:
    duration = definition.find(q(BPMN, "timeDuration")) if definition is not None else None
    date = definition.find(q(BPMN, "timeDate")) if definition is not None else None
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
    if definition is None or definition.find(q(BPMN, "timeCycle")) is None:
        warn("import.timer_empty", "Timer has no duration or date")
    return {}
