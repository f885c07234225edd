"""Links to a form kept outside the file (`formKey`, `formRef`, `zeebe:formDefinition`):
read with their vendor and written back in that vendor's form."""

from __future__ import annotations

from typing import Any

from lxml import etree

from ..namespaces import JUEL_VENDORS, ZEEBE, q
from .common import VENDOR_NAMES, find_extension, set_vendor_attribute, writable_text

#: The attributes that link a form: Camunda 7's `formKey` or `formRef` (Camunda Forms, with its
#: binding), Flowable's and Activiti's `formKey`; Camunda 8's `zeebe:formDefinition`.
FORM_LINKS = ("formKey", "formRef", "formRefBinding", "formRefVersion")
ZEEBE_FORM_LINKS = ("formKey", "formId", "externalReference", "bindingType", "versionTag")


def form_ref(element: etree._Element) -> dict[str, str] | None:
    """The external form a task or start event links to, with the vendor it came from."""
    for namespace in JUEL_VENDORS:
        found = {name: element.get(q(namespace, name)) for name in FORM_LINKS}
        if found["formKey"] or found["formRef"]:
            links = {name: str(value) for name, value in found.items() if value}
            return {"vendor": VENDOR_NAMES[namespace], **links}
    definition = find_extension(element, (ZEEBE,), "formDefinition")
    if definition is not None:
        found = {name: definition.get(name) for name in ZEEBE_FORM_LINKS}
        links = {name: str(value) for name, value in found.items() if value}
        if links:
            return {"vendor": "zeebe", **links}
    return None


def form_name(reference: dict[str, Any]) -> str:
    """The form a reference names (its key, id or Camunda Forms reference)."""
    names = ("formKey", "formId", "formRef", "externalReference")
    return next((str(reference[name]) for name in names if reference.get(name)), "")


def form_link_settings(element: etree._Element, config: dict[str, Any]) -> list[etree._Element]:
    """The link to an external form in its vendor's form: attributes set on `element`, or a
    Camunda 8 `zeebe:formDefinition` (returned)."""
    reference = config.get("formRef")
    if not isinstance(reference, dict):
        return []
    if reference.get("vendor") == "zeebe":
        child = etree.Element(q(ZEEBE, "formDefinition"))
        for name in ZEEBE_FORM_LINKS:
            if writable_text(reference.get(name)):
                child.set(name, reference[name])
        return [child] if child.attrib else []
    for name in FORM_LINKS:
        set_vendor_attribute(element, reference.get("vendor"), name, reference.get(name))
    return []
