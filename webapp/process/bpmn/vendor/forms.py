"""Form fields (Camunda `formData`, Flowable and Activiti `formProperty`): read into a form
spec, kept as written, and the current form written back in the vendor's form."""

from __future__ import annotations

from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from .. import kept
from ..namespaces import JUEL_VENDORS, q, split
from .common import (
    NAMESPACES,
    VENDOR_NAMES,
    Added,
    Warn,
    canonical_tree,
    expression_text,
    extensions,
    find_extension,
    quiet,
)
from .embedded_forms import embedded_form
from .form_links import form_name, form_ref

_FIELD_TYPES = {
    "string": "text",
    "long": "integer",
    "integer": "integer",
    "double": "number",
    "boolean": "boolean",
    "date": "date",
    "enum": "select",
    "textarea": "textarea",
}
_CONSTRAINTS = {"required": "required", "min": "min", "max": "max"}
_CONSTRAINTS.update({"minlength": "minLength", "maxlength": "maxLength"})


#: The vendor extension elements that hold form fields.
FORM_ELEMENTS = ("formData", "formProperty")


def form_spec(element: etree._Element, warn: Warn) -> dict[str, Any] | None:
    """Form fields from `camunda:formData`, `flowable:formProperty` and a Camunda 8 embedded
    form (`zeebe:userTaskForm`, converted only when every component maps exactly)."""
    fields: list[dict[str, Any]] = []
    data = find_extension(element, JUEL_VENDORS, "formData")
    for child in data if data is not None else []:
        if split(child.tag)[1] == "formField":
            fields.append(_form_field(child, warn))
    for child in extensions(element):
        namespace, local = split(child.tag)
        if namespace in JUEL_VENDORS and local == "formProperty":
            field = _form_property(child, warn)
            if field is not None:
                fields.append(field)
    if not fields:
        fields = embedded_form(element, warn) or []
    return {"fields": fields} if fields else None


def form_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """`form` and `formRef` of a start event or user task (an external form with no fields
    keeps its reference and gets a blank form to fill in)."""
    config: dict[str, Any] = {}
    form = form_spec(element, warn)
    reference = form_ref(element)
    if reference is not None:
        config["formRef"] = reference
        if form is None:
            name = form_name(reference)
            warn(
                "import.form_ref",
                f"Form '{name}' lives outside the file: its reference is kept; "
                "fill in the form's fields",
            )
    if form:
        config["form"] = form
    return config


def _form_field(field: etree._Element, warn: Warn) -> dict[str, Any]:
    """A Camunda 7 `formField`: type, label, default, enum values, validation, properties."""
    key = field.get("id", "")
    vendor_type = field.get("type", "string")
    result: dict[str, Any] = {
        "key": key,
        "label": field.get("label") or field.get("name") or key,
        "type": _FIELD_TYPES.get(vendor_type, "text"),
        "required": field.get("required") == "true",
    }
    if vendor_type not in _FIELD_TYPES:
        warn("import.form_lossy", f"Form field '{key}' type '{vendor_type}' imported as text")
    default = field.get("defaultValue") or field.get("default")
    if default is not None:
        result["default"] = _typed_default(result["type"], default)
    options = []
    readonly = False
    for child in field.iter():
        namespace, local = split(child.tag)
        if namespace not in JUEL_VENDORS:
            continue
        if local == "value":
            value = child.get("id", "")
            options.append({"value": value, "label": child.get("name") or value})
        elif local == "constraint" and child.get("name") == "readonly":
            readonly = True
        elif local == "constraint":
            _constraint(result, child.get("name", ""), child.get("config"), warn)
        elif local == "property":
            if child.get("id") == "description":
                result["help"] = child.get("value", "")
            else:
                warn("import.form_lossy", f"Form field '{key}' property '{child.get('id')}'")
    if options:
        result["options"] = options
    return _read_only(result) if readonly else result


def _read_only(field: dict[str, Any]) -> dict[str, Any]:
    """A read-only field shows the process variable of its key and submits nothing."""
    shown = {"key": field["key"], "label": field["label"], "type": "display"}
    shown["value"] = f"$vars.{field['key']}" if is_identifier(field["key"]) else "null"
    if "help" in field:
        shown["help"] = field["help"]
    return shown


def _form_property(prop: etree._Element, warn: Warn) -> dict[str, Any] | None:
    """A Flowable/Activiti `formProperty`; an unreadable one is not on the form at all."""
    if prop.get("readable") == "false":
        return None
    result = _form_field(prop, warn)
    variable = prop.get("variable")
    if variable:  # the answer is stored under this process variable
        result["key"] = variable
    expression = prop.get("expression")
    if prop.get("writable") == "false":
        shown = _read_only(result)
        if expression:
            shown["value"] = expression_text(expression, warn)
        return shown
    if expression:
        result["default"] = {"expr": expression_text(expression, warn)}
    pattern = prop.get("datePattern")
    if pattern and pattern not in ("yyyy-MM-dd", "yyyy-MM-dd'T'HH:mm:ss"):
        warn("import.form_lossy", f"Form field '{result['key']}' date pattern '{pattern}': ISO")
    return result


def _typed_default(field_type: str, text: str) -> Any:
    """Turn a vendor default (always text) into a literal of the field's type if it reads as one."""
    if field_type == "boolean" and text.strip().lower() in ("true", "false"):
        return text.strip().lower() == "true"
    try:
        if field_type == "integer":
            return int(text)
        if field_type == "number":
            return float(text)
    except ValueError:
        pass
    return text


def _constraint(field: dict[str, Any], name: str, value: str | None, warn: Warn) -> None:
    target = _CONSTRAINTS.get(name)
    if target == "required":
        field["required"] = True
        return
    if target and value is not None:
        try:
            number = float(value)
        except ValueError:
            number = None
        if number is not None:
            field[target] = int(number) if number.is_integer() else number
            return
    warn("import.form_lossy", f"Form field '{field['key']}' constraint '{name}' not imported")


def form_origin(element: etree._Element) -> tuple[str, str, Any] | None:
    """(vendor, "form", the form elements as written) of a start event or user task, if any."""
    items = [
        child
        for child in extensions(element)
        if split(child.tag)[0] in JUEL_VENDORS and split(child.tag)[1] in FORM_ELEMENTS
    ]
    if not items:
        return None
    return VENDOR_NAMES[split(items[0].tag)[0]], "form", [canonical_tree(child) for child in items]


#: Flowdesk field types a Camunda `formField` or Flowable `formProperty` type says exactly.
_VENDOR_FIELD_TYPES = {
    "text": "string",
    "integer": "long",
    "boolean": "boolean",
    "date": "date",
    "select": "enum",
}
_VENDOR_CONSTRAINTS = {
    "min": "min",
    "max": "max",
    "minLength": "minlength",
    "maxLength": "maxlength",
}


def _form_meaning(spec: Any) -> Any:
    """A form spec with the defaults import writes out spelled out (a label, `required`)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("fields"), list) or not spec["fields"]:
        return None
    fields = []
    for field in spec["fields"]:
        if not isinstance(field, dict):
            return spec
        field = dict(field)
        if not field.get("label"):
            field["label"] = field.get("key")
        if field.get("type") != "display":
            field["required"] = field.get("required") is True
        elif field.get("required") is False:
            del field["required"]
        if isinstance(field.get("options"), list):
            field["options"] = [
                {**option, "label": option.get("label") or option.get("value")}
                if isinstance(option, dict)
                else option
                for option in field["options"]
            ]
        fields.append(field)
    return {**spec, "fields": fields}


def write_form(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    """Write a node's current form fields in its vendor's form: as the file had them when they still
    say it, else generated, else not at all."""
    wanted = _form_meaning(config.get("form"))
    trees = origin["form"] if isinstance(origin.get("form"), list) else []
    added = Added(element)
    for tree in trees:
        added.extension(kept.to_xml(tree))
    if _form_meaning(form_spec(element, quiet)) == wanted:
        return
    added.undo()
    first = trees[0].get("tag") if trees and isinstance(trees[0], dict) else None
    namespace, local = split(first) if isinstance(first, str) else ("", "")
    if namespace not in JUEL_VENDORS:
        if dialect not in ("camunda", "flowable", "activiti") or "formRef" in config:
            return
        namespace = NAMESPACES[dialect]
        local = "formData" if dialect == "camunda" else "formProperty"
    if wanted is None:
        return
    try:
        if local == "formData":
            data = etree.Element(q(namespace, "formData"))
            for field in wanted["fields"]:
                data.append(_form_field_xml(namespace, field))
            added.extension(data)
        else:
            for field in wanted["fields"]:
                added.extension(_form_property_xml(namespace, field))
    except (ValueError, TypeError, KeyError):
        added.undo()
        return
    if _form_meaning(form_spec(element, quiet)) != wanted:
        added.undo()


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError("an expression default")


def _field_type(field: dict[str, Any]) -> str:
    if field["type"] == "display":
        return "string"
    return _VENDOR_FIELD_TYPES[field["type"]]


def _form_field_xml(namespace: str, field: dict[str, Any]) -> etree._Element:
    """A Camunda `formField` for `field` (KeyError, ValueError for what it cannot say)."""
    result = etree.Element(q(namespace, "formField"), id=field["key"], label=field["label"])
    result.set("type", _field_type(field))
    if "default" in field:
        result.set("defaultValue", _default_text(field["default"]))
    constraints: list[tuple[str, str | None]] = []
    if field.get("required") is True:
        constraints.append(("required", None))
    for key, name in _VENDOR_CONSTRAINTS.items():
        if isinstance(field.get(key), (int, float)) and not isinstance(field[key], bool):
            constraints.append((name, str(field[key])))
    if field["type"] == "display":
        constraints.append(("readonly", None))
    if constraints:
        validation = etree.SubElement(result, q(namespace, "validation"))
        for name, value in constraints:
            constraint = etree.SubElement(validation, q(namespace, "constraint"), name=name)
            if value is not None:
                constraint.set("config", value)
    if isinstance(field.get("help"), str):
        properties = etree.SubElement(result, q(namespace, "properties"))
        etree.SubElement(properties, q(namespace, "property"), id="description").set(
            "value", field["help"]
        )
    for option in field.get("options") or []:
        etree.SubElement(result, q(namespace, "value"), id=option["value"], name=option["label"])
    return result


def _form_property_xml(namespace: str, field: dict[str, Any]) -> etree._Element:
    """A Flowable/Activiti `formProperty` for `field` (it has no bounds or help)."""
    result = etree.Element(q(namespace, "formProperty"), id=field["key"], name=field["label"])
    result.set("type", _field_type(field))
    if field.get("required") is True:
        result.set("required", "true")
    if field["type"] == "display":
        result.set("writable", "false")
    if "default" in field:
        result.set("default", _default_text(field["default"]))
    for option in field.get("options") or []:
        etree.SubElement(result, q(namespace, "value"), id=option["value"], name=option["label"])
    return result
