"""Due and follow-up dates of a user task: an ISO duration read as `dueIn`, any other date
kept with its vendor and written back in that vendor's form."""

from __future__ import annotations

from typing import Any

from lxml import etree

from ..namespaces import JUEL_VENDORS, ZEEBE, q
from .common import (
    ISO_DURATION,
    VENDOR_NAMES,
    Warn,
    find_extension,
    set_vendor_attribute,
    writable_text,
)


def due_dates(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """`dueDate` as an ISO duration becomes `dueIn`; any other due date (an ISO date, a JUEL
    date expression) and `camunda:followUpDate` are kept as written, with their vendor."""
    config: dict[str, Any] = {}
    for namespace in JUEL_VENDORS:
        for attribute in ("dueDate", "followUpDate"):
            value = element.get(q(namespace, attribute))
            taken = attribute in config or (attribute == "dueDate" and "dueIn" in config)
            if value is None or taken:
                continue
            if attribute == "dueDate" and ISO_DURATION.match(value.strip()):
                config["dueIn"] = value.strip()
                continue
            config[attribute] = {"vendor": VENDOR_NAMES[namespace], "value": value}
            if attribute == "dueDate":
                warn(
                    "import.due_date",
                    f"Due date '{value}' is not an ISO-8601 duration: kept for export, not "
                    "applied; set a due time in Flowdesk",
                )
    schedule = find_extension(element, (ZEEBE,), "taskSchedule")
    for attribute in ("dueDate", "followUpDate") if schedule is not None else ():
        value = schedule.get(attribute)
        if value and attribute not in config and not (attribute == "dueDate" and "dueIn" in config):
            config[attribute] = {"vendor": "zeebe", "value": value}
            if attribute == "dueDate":
                warn("import.due_date", f"Due date '{value}' kept for export, not applied")
    return config


def due_date_settings(element: etree._Element, config: dict[str, Any]) -> list[etree._Element]:
    """The kept due and follow-up dates in their vendor's form: attributes set on `element`, or
    a Camunda 8 `zeebe:taskSchedule` (returned)."""
    schedule = etree.Element(q(ZEEBE, "taskSchedule"))
    for name in ("dueDate", "followUpDate"):
        date = config.get(name)
        if (
            isinstance(date, dict)
            and date.get("vendor") == "zeebe"
            and writable_text(date.get("value"))
        ):
            schedule.set(name, date["value"])
        elif isinstance(date, dict):
            set_vendor_attribute(element, date.get("vendor"), name, date.get("value"))
    return [schedule] if schedule.attrib else []
