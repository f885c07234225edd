"""Business rule task settings: the called decision (Camunda 7 `decisionRef` and its binding,
Zeebe `calledDecision`, SpiffArena `calledDecisionId`, Flowable's `decisionTableReferenceKey`
field), the result variable, and a Java or job-worker implementation; read and written back."""

from __future__ import annotations

from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from ..namespaces import JUEL_VENDORS, SPIFF, ZEEBE, q, split
from .common import (
    ORIGIN,
    VENDOR_NAMES,
    Warn,
    as_mapping,
    extensions,
    find_extension,
    set_vendor_attribute,
    vendor_attr,
    writable_text,
)
from .tools import JAVA_IMPLEMENTATIONS

#: SpiffArena's name in `origin` (it has no entry in `VENDOR_NAMES`: nothing else writes it back).
SPIFF_VENDOR = "spiffworkflow"
#: Camunda 7 result mappings whose shape is Flowdesk's for a decision that fits them (one output:
#: a single-hit value, a multi-hit list); the others always give lists or maps of entries.
_FITTING_RESULTS = ("singleEntry", "collectEntries")
#: The job type Zeebe's early DMN worker ran, with the decision in the `decisionRef` header.
_ZEEBE_DMN_WORKER = "DMN"


def business_rule_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Decision, binding, version, result variable and required flag of a business rule task;
    a Java or job-worker implementation is kept for export and reported."""
    config: dict[str, Any] = {}
    vendor = _camunda(element, config, warn)
    called = find_extension(element, (ZEEBE,), "calledDecision")
    if called is not None:
        vendor = "zeebe"
        _decision(config, called.get("decisionId"), warn)
        _save_to(config, called.get("resultVariable"), warn)
    spiff = find_extension(element, (SPIFF,), "calledDecisionId")
    if spiff is not None:
        vendor = SPIFF_VENDOR
        _decision(config, (spiff.text or "").strip(), warn)
    vendor = _flowable_fields(element, config, warn) or vendor
    vendor = _implementation(element, config, warn) or vendor
    if vendor is not None:
        config[ORIGIN] = {"vendor": vendor}
    return config


def _camunda(element: etree._Element, config: dict[str, Any], warn: Warn) -> str | None:
    """Camunda 7 (and Flowable, Activiti) attributes: the vendor, when the element has them."""
    vendor = None
    for namespace in JUEL_VENDORS:
        if element.get(q(namespace, "decisionRef")) is not None:
            vendor = VENDOR_NAMES[namespace]
            _decision(config, element.get(q(namespace, "decisionRef")), warn)
            break
    binding = vendor_attr(element, "decisionRefBinding")
    version = (vendor_attr(element, "decisionRefVersion") or "").strip()
    if binding == "version" and version.isdigit():
        config["binding"] = "version"
        config["version"] = int(version)
    elif binding == "version":
        warn("import.decision_binding", f"Decision version '{version}' is not a number; latest")
    elif binding not in (None, "latest"):
        warn(
            "import.decision_binding",
            f"Decision binding '{binding}' imported as the latest published version",
        )
    _save_to(config, vendor_attr(element, "resultVariable"), warn)
    mapping = vendor_attr(element, "mapDecisionResult")
    if vendor is not None and config.get("saveTo") and mapping not in _FITTING_RESULTS:
        shown = mapping or "resultList"
        warn(
            "import.decision_result",
            f"Result mapping '{shown}' kept for export: Flowdesk stores the decision's result by "
            "its hit policy (one value, a map of outputs, or a list of them)",
        )
    return vendor


def _flowable_fields(element: etree._Element, config: dict[str, Any], warn: Warn) -> str | None:
    """Flowable's DMN task fields: `decisionTableReferenceKey`, `decisionTaskThrowErrorOnNoHits`."""
    vendor = None
    for child in extensions(element):
        namespace, local = split(child.tag)
        if namespace not in JUEL_VENDORS or local != "field":
            continue
        value = child.get("stringValue")
        if value is None:
            text = next((c.text for c in child if split(c.tag)[1] == "string"), None)
            value = (text or "").strip()
        if child.get("name") == "decisionTableReferenceKey" and "decision" not in config:
            vendor = VENDOR_NAMES[namespace]
            _decision(config, value, warn)
        elif child.get("name") == "decisionTaskThrowErrorOnNoHits":
            config["required"] = value.strip().lower() == "true"
    return vendor


def _implementation(element: etree._Element, config: dict[str, Any], warn: Warn) -> str | None:
    """A Java class, external topic or Zeebe job worker that runs the task in its engine: kept
    for export; Flowdesk evaluates a published decision instead (Zeebe's DMN worker names it)."""
    found: dict[str, Any] | None = None
    for namespace in JUEL_VENDORS:
        vendor = VENDOR_NAMES[namespace]
        topic = element.get(q(namespace, "topic"))
        if element.get(q(namespace, "type")) == "external" and topic:
            found = {"vendor": vendor, "type": "external", "topic": topic}
        for attribute in JAVA_IMPLEMENTATIONS:
            value = element.get(q(namespace, attribute))
            if value and found is None:
                found = {"vendor": vendor, attribute: value}
    worker = find_extension(element, (ZEEBE,), "taskDefinition")
    if worker is not None and worker.get("type"):
        found = {"vendor": "zeebe", "jobType": worker.get("type")}
        headers = find_extension(element, (ZEEBE,), "taskHeaders")
        named = [
            h.get("value")
            for h in (headers if headers is not None else [])
            if h.get("key") == "decisionRef"
        ]
        if worker.get("type") == _ZEEBE_DMN_WORKER and named and "decision" not in config:
            _decision(config, named[0], warn)
    if found is None:
        return None
    config["implementation"] = found
    shown = next(str(v) for k, v in found.items() if k != "vendor")
    warn(
        "import.decision_implementation",
        f"Implementation '{shown}' kept for export: Flowdesk evaluates the published decision"
        + ("" if "decision" in config else "; choose one"),
    )
    return str(found["vendor"])


def _decision(config: dict[str, Any], value: str | None, warn: Warn) -> None:
    text = (value or "").strip()
    if text.startswith(("${", "#{", "=")):
        warn("import.decision_ref", f"Decision '{text[:80]}' is an expression; not imported")
    elif text:
        config["decision"] = text


def _save_to(config: dict[str, Any], name: str | None, warn: Warn) -> None:
    if not name:
        return
    if is_identifier(name):
        config["saveTo"] = name
    else:
        warn("import.save_to", f"Result variable '{name}' is not an identifier; not imported")


def decision_settings(element: etree._Element, config: dict[str, Any]) -> list[etree._Element]:
    """The decision, binding and result variable in the dialect the node came with (attributes
    set on `element`; the extension elements are returned), and its kept implementation."""
    if "decision" not in config and "implementation" not in config:
        return []
    vendor = as_mapping(config.get(ORIGIN)).get("vendor")
    decision, save_to = config.get("decision"), config.get("saveTo")
    found: list[etree._Element] = []
    if vendor in ("camunda", "flowable", "activiti"):
        set_vendor_attribute(element, vendor, "decisionRef", decision)
        if config.get("binding") == "version" and isinstance(config.get("version"), int):
            set_vendor_attribute(element, vendor, "decisionRefBinding", "version")
            set_vendor_attribute(element, vendor, "decisionRefVersion", str(config["version"]))
        set_vendor_attribute(element, vendor, "resultVariable", save_to)
    elif vendor == "zeebe" and writable_text(decision) and not _zeebe_worker(config):
        called = etree.Element(q(ZEEBE, "calledDecision"), decisionId=decision)
        if writable_text(save_to):
            called.set("resultVariable", save_to)
        found.append(called)
    elif vendor == SPIFF_VENDOR and writable_text(decision):
        spiff = etree.Element(q(SPIFF, "calledDecisionId"))
        spiff.text = decision
        found.append(spiff)
    implementation = as_mapping(config.get("implementation"))
    if implementation.get("type") == "external":
        owner = implementation.get("vendor")
        set_vendor_attribute(element, owner, "type", "external")
        set_vendor_attribute(element, owner, "topic", implementation.get("topic"))
    if _zeebe_worker(config):
        found.append(etree.Element(q(ZEEBE, "taskDefinition"), type=implementation["jobType"]))
    return found


def _zeebe_worker(config: dict[str, Any]) -> bool:
    implementation = as_mapping(config.get("implementation"))
    return implementation.get("vendor") == "zeebe" and writable_text(implementation.get("jobType"))
