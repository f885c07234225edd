"""Camunda 8 forms embedded in the file (`zeebe:userTaskForm`), read as form fields when
every component maps exactly."""

from __future__ import annotations

import json
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from ..namespaces import ZEEBE, q
from .common import Warn
from .form_links import form_ref

#: Camunda 8 form components and the Flowdesk field type each becomes.
_COMPONENTS = {
    "textfield": "text",
    "textarea": "textarea",
    "number": "number",
    "checkbox": "boolean",
    "select": "select",
    "radio": "radio",
    "datetime": "datetime",
}
#: Component properties that change nothing about the data a field takes.
_COMPONENT_LOOKS = {"id", "key", "label", "type", "layout", "validate", "values", "description"}
_COMPONENT_LOOKS |= {"defaultValue", "subtype", "dateLabel", "timeLabel", "decimalDigits"}
_VALIDATE = {"required": "required", "min": "min", "max": "max"}
_VALIDATE |= {"minLength": "minLength", "maxLength": "maxLength"}


def embedded_form(element: etree._Element, warn: Warn) -> list[dict[str, Any]] | None:
    """Fields of the `zeebe:userTaskForm` a `zeebe:formDefinition formKey` names, when the
    conversion is exact; None (the reference alone) otherwise."""
    reference = form_ref(element)
    root = element.getroottree().getroot()
    if reference is None or reference["vendor"] != "zeebe" or "formKey" not in reference:
        return None
    if root.get("exporter") == "Flowdesk":  # our own export: the config says what the form is
        return None
    form_id = reference["formKey"].rpartition(":")[2]
    text = next(
        (f.text or "" for f in root.iter(q(ZEEBE, "userTaskForm")) if f.get("id") == form_id),
        None,
    )
    if text is None:
        return None
    try:
        schema = json.loads(text)
        fields = [_component(item) for item in schema["components"]]
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        warn("import.form_lossy", f"Embedded form '{form_id}' kept as a reference: {exc}")
        return None
    if None in fields:
        warn("import.form_lossy", f"Embedded form '{form_id}': its static text is not imported")
    return [field for field in fields if field]


def _component(item: dict[str, Any]) -> dict[str, Any] | None:
    """One Camunda 8 form component as a field; ValueError when it does not map exactly."""
    kind = item.get("type")
    if kind == "text" and "key" not in item:
        return None  # static text: nothing to fill in
    if kind not in _COMPONENTS or set(item) - _COMPONENT_LOOKS:
        extra = sorted(set(item) - _COMPONENT_LOOKS)
        raise ValueError(f"component '{item.get('key') or kind}' ({kind}; {extra}) has no match")
    key = item["key"]
    if not isinstance(key, str) or not is_identifier(key):
        raise ValueError(f"component key '{key}' is not a plain name")
    field_type = _COMPONENTS[kind]
    if kind == "datetime":
        subtype = item.get("subtype", "date")
        if subtype not in ("date", "datetime"):
            raise ValueError(f"component '{key}' takes a {subtype}")
        field_type = subtype
    if kind == "number" and item.get("decimalDigits") == 0:
        field_type = "integer"
    field: dict[str, Any] = {"key": key, "label": item.get("label") or key, "type": field_type}
    field["required"] = False
    for name, value in (item.get("validate") or {}).items():
        if name not in _VALIDATE or isinstance(value, bool) != (name == "required"):
            raise ValueError(f"component '{key}' validation '{name}' has no match")
        field[_VALIDATE[name]] = value
    if "values" in item:
        field["options"] = [
            {"value": str(option["value"]), "label": str(option.get("label", option["value"]))}
            for option in item["values"]
        ]
    if "defaultValue" in item:
        field["default"] = item["defaultValue"]
    if isinstance(item.get("description"), str):
        field["help"] = item["description"]
    return field
