"""What every vendor setting family shares: the vendors' names and namespaces, finding an
extension, translating an expression, and taking back what a write-back attempt added."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from .. import conditions, kept
from ..namespaces import ACTIVITI, BPMN, CAMUNDA, FLOWABLE, JUEL_VENDORS, ZEEBE, q, split

Warn = Callable[[str, str], None]

#: The vendor names config values record (`formRef`, `implementation`...), so export writes
#: each setting back in the namespace it came from.
VENDOR_NAMES = {CAMUNDA: "camunda", FLOWABLE: "flowable", ACTIVITI: "activiti", ZEEBE: "zeebe"}
NAMESPACES = {name: uri for uri, name in VENDOR_NAMES.items()}


#: An ISO-8601 duration: weeks, days and a time of hours, minutes and seconds.
ISO_DURATION = re.compile(r"^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")


#: The config key recording, verbatim, the vendor settings a node came with that export writes
#: back: `{"vendor", "assignment": {attribute: text}, "form": [element trees], "io": tree}`.
ORIGIN = "origin"


def vendor_attr(element: etree._Element, name: str) -> str | None:
    """Return the first Camunda/Flowable/Activiti attribute `name` set on `element`."""
    for namespace in JUEL_VENDORS:
        value = element.get(q(namespace, name))
        if value is not None:
            return value
    return None


def extensions(element: etree._Element) -> list[etree._Element]:
    """The vendor extension elements of `element` (the children of its `extensionElements`)."""
    namespace = split(element.tag)[0]
    return [
        child
        for container in element.iterchildren(q(namespace, "extensionElements"))
        for child in container
        if isinstance(child.tag, str)
    ]


def find_extension(element: etree._Element, namespaces: tuple[str, ...], local: str) -> Any:
    """The first extension element of `element` named `local` in one of `namespaces`."""
    for child in extensions(element):
        namespace, name = split(child.tag)
        if namespace in namespaces and name == local:
            return child
    return None


def expression_text(text: str, warn: Warn) -> str:
    """A vendor expression in Flowdesk's language, kept as written (and reported) when it cannot be
    translated."""
    result = conditions.translate(text)
    if not result.ok:
        warn("import.expression_untranslated", f"Kept the expression '{text}' untranslated")
    return result.text


def warn_listeners(element: etree._Element, warn: Warn) -> None:
    """Report the execution and task listeners of `element`: Flowdesk runs none."""
    for child in extensions(element):
        namespace, local = split(child.tag)
        if namespace in JUEL_VENDORS and local in ("executionListener", "taskListener"):
            target = next((v for k, v in child.attrib.items() if k != "event"), "")
            warn("import.listener", f"The {local} '{target}' is not imported")


def writable_text(value: Any) -> bool:
    """Whether `value` is text an attribute can hold exactly as it is."""
    return isinstance(value, str) and value != "" and value == value.strip() and "\x00" not in value


def set_vendor_attribute(element: etree._Element, vendor: Any, name: str, value: Any) -> None:
    """Set `name` in the namespace of `vendor` (Camunda 7, Flowable, Activiti) on `element`,
    when `value` is text an attribute can hold."""
    if vendor in NAMESPACES and vendor != "zeebe" and writable_text(value):
        with contextlib.suppress(ValueError):
            element.set(q(NAMESPACES[vendor], name), value)


def canonical_tree(element: etree._Element) -> dict[str, Any]:
    """The JSON tree of `element` with its attributes in name order, as `<flowdesk:config>`'s
    canonical JSON gives them back, so the first export writes what every later one does."""

    def ordered(data: dict[str, Any]) -> dict[str, Any]:
        if isinstance(data.get("attrs"), dict):
            data["attrs"] = dict(sorted(data["attrs"].items()))
        for child in data.get("children") or []:
            ordered(child)
        return data

    return ordered(kept.to_data(element))


def as_mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def quiet(code: str, message: str) -> None:
    """A `warn` that drops what it hears: export re-reads what it writes only to compare."""


def _container(element: etree._Element) -> etree._Element:
    container = element.find(q(BPMN, "extensionElements"))
    if container is None:
        container = etree.Element(q(BPMN, "extensionElements"))
        element.insert(0, container)
    return container


class Added:
    """What one attempt wrote on an element, so it can be taken back."""

    def __init__(self, element: etree._Element) -> None:
        self.element = element
        self.attributes: list[str] = []
        self.children: list[etree._Element] = []

    def set(self, name: str, value: Any) -> bool:
        if not isinstance(value, str) or "\x00" in value:
            return False
        try:
            self.element.set(name, value)
        except ValueError:
            return False
        self.attributes.append(name)
        return True

    def extension(self, child: etree._Element | None) -> None:
        if child is not None:
            _container(self.element).append(child)
            self.children.append(child)

    def undo(self) -> None:
        for name in self.attributes:
            self.element.attrib.pop(name, None)
        for child in self.children:
            parent = child.getparent()
            if parent is not None:
                parent.remove(child)
        container = self.element.find(q(BPMN, "extensionElements"))
        if container is not None and len(container) == 0:
            self.element.remove(container)
        self.attributes, self.children = [], []
