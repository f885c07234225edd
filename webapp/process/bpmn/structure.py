"""Import of call activities, multi-instance settings and standard loops (standard BPMN,
Camunda 7/8, Spiff).

Each function reads one element and returns the config keys it could derive; what it reads only
approximately is reported through `warn(code, message)`.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from . import conditions
from .namespaces import BPMN, FLOWDESK_LANGUAGE, JUEL_VENDORS, ZEEBE, q, split
from .vendor import Warn, find_extension, input_parameters, vendor_attr


def _expression_text(element: etree._Element | None, warn: Warn, what: str) -> str | None:
    """A formal expression's text: ours as written, a vendor's translated (kept when it cannot)."""
    if element is None:
        return None
    text = "".join(element.itertext()).strip()
    if not text:
        return None
    if element.get("language") == FLOWDESK_LANGUAGE:
        return text
    result = conditions.translate(text, element.get("language"))
    if not result.ok:
        warn("import.expression_untranslated", f"{what} '{text}' kept as written; rewrite it")
    return result.text


def _value(text: str, warn: Warn, what: str) -> str:
    """A collection or result given as a variable name or an expression (`${...}`, `=...`)."""
    text = text.strip()
    if is_identifier(text):
        return f"$vars.{text}"
    result = conditions.translate(text)
    if not result.ok:
        warn("import.expression_untranslated", f"{what} '{text}' kept as written; rewrite it")
    return result.text


def multi_instance(element: etree._Element, warn: Warn) -> tuple[dict[str, Any] | None, str | None]:
    """The `multiInstance` config of an activity's loop characteristics and, when a vendor names
    the output collection, the variable to save it to; (None, None) without loop characteristics."""
    loop = element.find(q(BPMN, "multiInstanceLoopCharacteristics"))
    if loop is None:
        return None, None
    config: dict[str, Any] = {}
    save_to: str | None = None
    if loop.get("isSequential") in ("true", "false"):
        config["sequential"] = loop.get("isSequential") == "true"
    cardinality = _expression_text(loop.find(q(BPMN, "loopCardinality")), warn, "Cardinality")
    if cardinality is not None:
        config["cardinality"] = cardinality
    completion = _expression_text(
        loop.find(q(BPMN, "completionCondition")), warn, "Completion condition"
    )
    if completion is not None:
        config["completion"] = completion
    data_input = loop.find(q(BPMN, "loopDataInputRef"))
    if data_input is not None and (data_input.text or "").strip():
        config["collection"] = _value(data_input.text or "", warn, "Collection")
    item = loop.find(q(BPMN, "inputDataItem"))
    if item is not None:
        name = item.get("name") if is_identifier(item.get("name")) else item.get("id")
        if is_identifier(name):
            config["element"] = name
    data_output = loop.find(q(BPMN, "loopDataOutputRef"))
    if data_output is not None and is_identifier((data_output.text or "").strip()):
        save_to = (data_output.text or "").strip()
    if loop.find(q(BPMN, "outputDataItem")) is not None:
        warn(
            "import.multi_instance_lossy",
            "The output data item is not imported; each instance's own output is collected",
        )
    collection = vendor_attr(loop, "collection")
    if collection:
        config["collection"] = _value(collection, warn, "Collection")
    element_variable = vendor_attr(loop, "elementVariable")
    if element_variable:
        config["element"] = element_variable
    zeebe = find_extension(loop, (ZEEBE,), "loopCharacteristics")
    if zeebe is not None:
        if zeebe.get("inputCollection"):
            config["collection"] = _value(zeebe.get("inputCollection"), warn, "Collection")
        if zeebe.get("inputElement"):
            config["element"] = zeebe.get("inputElement")
        if zeebe.get("outputElement"):
            config["output"] = _value(zeebe.get("outputElement"), warn, "Output element")
        if zeebe.get("outputCollection"):
            save_to = zeebe.get("outputCollection")
    if save_to is not None and not is_identifier(save_to):
        warn("import.save_to", f"Output collection '{save_to}' is not an identifier; not imported")
        save_to = None
    for child in loop:
        namespace, local = split(child.tag)
        if namespace == BPMN and local in ("complexBehaviorDefinition", "oneBehaviorEventRef"):
            warn("import.multi_instance_lossy", f"Multi-instance {local} not imported")
    return config, save_to


def standard_loop(element: etree._Element, warn: Warn) -> dict[str, Any] | None:
    """The `loop` config of an activity's `standardLoopCharacteristics` (its loop condition
    translated as a flow's, `testBefore`, `loopMaximum`); None without one."""
    loop = element.find(q(BPMN, "standardLoopCharacteristics"))
    if loop is None:
        return None
    config: dict[str, Any] = {"testBefore": loop.get("testBefore") == "true"}
    condition = _expression_text(loop.find(q(BPMN, "loopCondition")), warn, "Loop condition")
    if condition is None and loop.get("loopCondition"):  # Spiff and some tools: an attribute
        result = conditions.translate(str(loop.get("loopCondition")))
        condition = result.text
    if condition is not None:
        config["condition"] = condition
    maximum = (loop.get("loopMaximum") or "").strip()
    if maximum.isdigit() and int(maximum) > 0:
        config["maximum"] = int(maximum)
    elif maximum:
        warn("import.loop_maximum", f"Loop maximum '{maximum}' is not a whole number; not imported")
    return config


def call_activity_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Called process key, version binding and input mapping of a call activity."""
    config: dict[str, Any] = {}
    called = (element.get("calledElement") or "").strip()
    zeebe = find_extension(element, (ZEEBE,), "calledElement")
    if zeebe is not None and zeebe.get("processId"):
        called = zeebe.get("processId", "").strip()
    if called.startswith(("${", "#{", "=")):
        warn("import.called_element", f"Called process '{called}' is an expression; not imported")
    elif called:
        config["process"] = called
    binding = vendor_attr(element, "calledElementBinding")
    version = vendor_attr(element, "calledElementVersion")
    if binding == "version" and version is not None and version.strip().isdigit():
        config["binding"] = "version"
        config["version"] = int(version)
    elif binding not in (None, "latest"):
        warn("import.called_element", f"Binding '{binding}' imported as the latest version")
    inputs = input_parameters(element, warn)
    for extension in _extensions_named(element, "in"):
        target = extension.get("target")
        if extension.get("variables") or not target:
            warn("import.input_lossy", "Passing all variables to the called process not imported")
            continue
        if extension.get("sourceExpression"):
            inputs[target] = _value(extension.get("sourceExpression"), warn, f"Input '{target}'")
        elif extension.get("source"):
            inputs[target] = _value(extension.get("source"), warn, f"Input '{target}'")
    if inputs:
        config["inputs"] = inputs
    if _extensions_named(element, "out"):
        warn("import.output_lossy", "Output mappings not imported; the call's output is saveTo")
    return config


def _extensions_named(element: etree._Element, local: str) -> list[etree._Element]:
    return [
        child
        for container in element.iterchildren(q(BPMN, "extensionElements"))
        for child in container
        if isinstance(child.tag, str) and split(child.tag) in {(ns, local) for ns in JUEL_VENDORS}
    ]
