"""Service task implementation: the tool (Spiff operator, external topic, Zeebe task type), a
Java implementation kept for export, retries and the result variable; read and written back."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from ..namespaces import JUEL_VENDORS, SPIFF, ZEEBE, q
from .common import (
    ISO_DURATION,
    NAMESPACES,
    VENDOR_NAMES,
    Warn,
    expression_text,
    find_extension,
    set_vendor_attribute,
    vendor_attr,
    warn_listeners,
    writable_text,
)
from .mappings import input_parameters, read_outputs
from .origin import origin_config

#: Camunda/Flowable attributes naming Java code that runs a service task.
JAVA_IMPLEMENTATIONS = ("class", "delegateExpression", "expression")
_CYCLE = re.compile(r"^R(\d+)/(P.+)$")
_SECONDS = re.compile(r"^PT?(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$")


def service_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Tool, inputs, result variable and retries of a service task."""
    config: dict[str, Any] = {}
    inputs: dict[str, str] = {}
    operator = find_extension(element, (SPIFF,), "serviceTaskOperator")
    if operator is not None:
        config["tool"] = operator.get("id", "")
        for parameter in operator.iter(q(SPIFF, "parameter")):
            inputs[parameter.get("id", "")] = expression_text(parameter.get("value", ""), warn)
        _save_to(config, operator.get("resultVariable"), warn)
        retry = operator.find(q(SPIFF, "retry"))
        if retry is not None:
            _retry(config, retry.get("retries"), retry.get("backoff_base"), warn)
    task_definition = find_extension(element, (ZEEBE,), "taskDefinition")
    if task_definition is not None and task_definition.get("type"):
        config["tool"] = task_definition.get("type")
        config["implementation"] = {"vendor": "zeebe"}
        _retry(config, task_definition.get("retries"), None, warn)
    for namespace in JUEL_VENDORS:
        vendor = VENDOR_NAMES[namespace]
        if element.get(q(namespace, "type")) == "external" and element.get(q(namespace, "topic")):
            config["tool"] = element.get(q(namespace, "topic"))
            config["implementation"] = {"vendor": vendor, "type": "external"}
        for attribute in JAVA_IMPLEMENTATIONS:
            value = element.get(q(namespace, attribute))
            if value and "implementation" not in config:
                config["implementation"] = {"vendor": vendor, attribute: value}
                warn(
                    "import.service_implementation",
                    f"Java implementation {attribute} '{value}' kept: Flowdesk needs a tool",
                )
    if find_extension(element, JUEL_VENDORS, "connector") is not None:
        warn("import.service_implementation", "Camunda connector not imported")
    cycle = find_extension(element, JUEL_VENDORS, "failedJobRetryTimeCycle")
    if cycle is not None:
        _retry_cycle(config, (cycle.text or "").strip(), warn)
    _save_to(config, vendor_attr(element, "resultVariable"), warn)
    _save_to(config, vendor_attr(element, "resultVariableName"), warn)
    inputs.update(input_parameters(element, warn))
    if inputs:
        config["inputs"] = inputs
    read_outputs(config, element, warn)
    warn_listeners(element, warn)
    config.update(origin_config(element, io=True))
    return config


def iso_seconds(text: str) -> float | None:
    """Seconds of an ISO-8601 duration of days, hours, minutes and seconds (None otherwise)."""
    match = _SECONDS.match(text.strip()) if ISO_DURATION.match(text.strip()) else None
    if match is None:
        return None
    days, hours, minutes, seconds = (float(part or 0) for part in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def iso_duration(seconds: float) -> str:
    """`seconds` as the shortest ISO-8601 duration (`PT5M`, `PT1H30M`, `PT1.5S`)."""
    whole = int(seconds)
    rest = seconds - whole
    parts = [(whole // 3600, "H"), (whole % 3600 // 60, "M")]
    text = "".join(f"{value}{unit}" for value, unit in parts if value)
    tail = whole % 60 + rest
    if tail or not text:
        text += f"{int(tail) if float(tail).is_integer() else tail}S"
    return "PT" + text


def _retry_cycle(config: dict[str, Any], text: str, warn: Warn) -> None:
    """Camunda's `failedJobRetryTimeCycle`: `R5/PT5M` is 5 retries, the first after 5 minutes
    (Flowdesk then doubles the wait); a list of waits gives their count and the first."""
    match = _CYCLE.match(text)
    waits = [match.group(2)] if match else [part.strip() for part in text.split(",")]
    seconds = [iso_seconds(wait) for wait in waits]
    if not text or any(value is None or value <= 0 for value in seconds):
        warn("import.retry", f"Retry cycle '{text}' is not a count and a duration; not imported")
        return
    config["retries"] = int(match.group(1)) if match else len(seconds)
    config["backoff"] = float(seconds[0] or 0)
    warn(
        "import.retry",
        f"Retry cycle '{text}': {config['retries']} retries, the first after "
        f"{iso_duration(config['backoff'])}; Flowdesk doubles each later wait",
    )


def _save_to(config: dict[str, Any], name: str | None, warn: Warn) -> None:
    if not name:
        return
    if is_identifier(name):
        config["saveTo"] = name
    else:
        warn("import.save_to", f"Result variable '{name}' is not an identifier; not imported")


def _retry(config: dict[str, Any], retries: str | None, backoff: str | None, warn: Warn) -> None:
    try:
        if retries is not None:
            config["retries"] = int(retries)
        if backoff is not None:
            config["backoff"] = float(backoff)
    except ValueError:
        warn("import.retry", f"Retry settings '{retries}', '{backoff}' are not numbers")


def implementation_settings(
    element: etree._Element, config: dict[str, Any]
) -> list[etree._Element]:
    """A service task's implementation and retries in their vendor's form: attributes set on
    `element`, or a Zeebe `taskDefinition` or `failedJobRetryTimeCycle` (returned)."""
    implementation = config.get("implementation")
    if not isinstance(implementation, dict):
        return []
    vendor = implementation.get("vendor")
    tool = config.get("tool")
    if vendor == "zeebe" and writable_text(tool):
        child = etree.Element(q(ZEEBE, "taskDefinition"), type=tool)
        if isinstance(config.get("retries"), int) and not isinstance(config["retries"], bool):
            child.set("retries", str(config["retries"]))
        return [child]
    if implementation.get("type") == "external" and writable_text(tool):
        set_vendor_attribute(element, vendor, "type", "external")
        set_vendor_attribute(element, vendor, "topic", tool)
    for name in JAVA_IMPLEMENTATIONS:
        set_vendor_attribute(element, vendor, name, implementation.get(name))
    retries, backoff = config.get("retries"), config.get("backoff")
    if (
        vendor in NAMESPACES
        and vendor != "zeebe"
        and isinstance(retries, int)
        and isinstance(backoff, (int, float))
        and backoff > 0
        and retries >= 0
    ):
        child = etree.Element(q(NAMESPACES[vendor], "failedJobRetryTimeCycle"))
        child.text = f"R{retries}/{iso_duration(float(backoff))}"
        return [child]
    return []
