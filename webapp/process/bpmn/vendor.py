"""Best-effort mapping of vendor extensions (Camunda 7/8, Flowable, Activiti, Spiff) to config.

Each function reads one BPMN element and returns the config keys it could derive; whatever it
reads only approximately is reported through `warn(code, message)`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from . import conditions
from .namespaces import (
    ACTIVITI,
    BPMN,
    CAMUNDA,
    FLOWABLE,
    FLOWDESK,
    JUEL_VENDORS,
    SPIFF,
    ZEEBE,
    q,
    split,
)

Warn = Callable[[str, str], None]

#: The vendor names config values record (`formRef`, `implementation`...), so export writes
#: each setting back in the namespace it came from.
VENDOR_NAMES = {CAMUNDA: "camunda", FLOWABLE: "flowable", ACTIVITI: "activiti", ZEEBE: "zeebe"}
NAMESPACES = {name: uri for uri, name in VENDOR_NAMES.items()}

_ISO_DURATION = re.compile(r"^P(?!$)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")
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


def vendor_attr(element: etree._Element, name: str) -> str | None:
    """Return the first Camunda/Flowable/Activiti attribute `name` set on `element`."""
    for namespace in JUEL_VENDORS:
        value = element.get(q(namespace, name))
        if value is not None:
            return value
    return None


def _extensions(element: etree._Element) -> list[etree._Element]:
    namespace = split(element.tag)[0]
    return [
        child
        for container in element.iterchildren(q(namespace, "extensionElements"))
        for child in container
        if isinstance(child.tag, str)
    ]


def find_extension(element: etree._Element, namespaces: tuple[str, ...], local: str) -> Any:
    for child in _extensions(element):
        namespace, name = split(child.tag)
        if namespace in namespaces and name == local:
            return child
    return None


def _expression(text: str, warn: Warn) -> str:
    result = conditions.translate(text)
    if not result.ok:
        warn("import.expression_untranslated", f"Kept the expression '{text}' untranslated")
    return result.text


def start_event_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """The start form of a start event, and the reference of an external one."""
    config = _form_config(element, warn)
    _listeners(element, warn)
    return config


def user_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Assignee, form and due date of a user task."""
    config: dict[str, Any] = {}
    assignee, candidates = _assignee(element, warn)
    if assignee:
        config["assignee"] = assignee
    if candidates:
        config["candidates"] = candidates
    config.update(_form_config(element, warn))
    config.update(_dates(element, warn))
    _listeners(element, warn)
    return config


def _dates(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """`dueDate` as an ISO duration becomes `dueIn`; any other due date (an ISO date, a JUEL
    date expression) and `camunda:followUpDate` are kept as written, with their vendor."""
    config: dict[str, Any] = {}
    for namespace in JUEL_VENDORS:
        for attribute in ("dueDate", "followUpDate"):
            value = element.get(q(namespace, attribute))
            taken = attribute in config or (attribute == "dueDate" and "dueIn" in config)
            if value is None or taken:
                continue
            if attribute == "dueDate" and _ISO_DURATION.match(value.strip()):
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


def _assignee(element: etree._Element, warn: Warn) -> tuple[dict[str, str] | None, dict]:
    """The assignee and further candidates of a user task, as the source engine reads them: a
    direct assignee (or, without one, the first candidate group, else the first candidate user)
    is the assignee; every other candidate group and user is a candidate, and a candidate
    expression gives candidates when the task is created (`rolesFrom`, `usersFrom`)."""
    direct: list[tuple[str, str]] = []
    groups: list[str] = []
    users: list[str] = []
    zeebe = find_extension(element, (ZEEBE,), "assignmentDefinition")
    for source in [element] + ([zeebe] if zeebe is not None else []):
        value = vendor_attr(source, "assignee") or source.get("assignee")
        if value:
            direct.append(("user", value.strip()))
        users += _names(vendor_attr(source, "candidateUsers") or source.get("candidateUsers"))
        groups += _names(vendor_attr(source, "candidateGroups") or source.get("candidateGroups"))
    for kind, value in _performers(element):
        if kind == "role":
            groups.append(value)
        elif kind == "user":
            users.append(value)
        else:
            direct.append(("user", value))
    computed = {
        "rolesFrom": [name for name in dict.fromkeys(groups) if _is_expression(name)],
        "usersFrom": [name for name in dict.fromkeys(users) if _is_expression(name)],
    }
    groups = [name for name in dict.fromkeys(groups) if not _is_expression(name)]
    users = [name for name in dict.fromkeys(users) if not _is_expression(name)]
    lost = [v for _, v in direct[1:]] + [v for texts in computed.values() for v in texts[1:]]
    if lost:
        warn("import.assignee_lossy", f"Not imported: the further assignment(s) {', '.join(lost)}")
    candidates: dict[str, Any] = {
        key: _expression(texts[0], warn) for key, texts in computed.items() if texts
    }
    if direct:
        kind, value = direct[0]
    elif groups:
        kind, value = "role", groups.pop(0)
    elif users:
        kind, value = "user", users.pop(0)
    else:
        return None, candidates
    if _is_expression(value):
        assignee = {"type": "expression", "value": _expression(value, warn)}
    else:
        assignee = {"type": kind, "value": value}
    listed = {
        "roles": [name for name in groups if not (kind == "role" and name == value)],
        "users": [name for name in users if not (kind == "user" and name == value)],
    }
    return assignee, {**{key: names for key, names in listed.items() if names}, **candidates}


def _names(text: str | None) -> list[str]:
    """The names of a comma-separated vendor list (an expression is one name)."""
    text = (text or "").strip()
    if not text:
        return []
    if _is_expression(text):
        return [text]
    return [part.strip() for part in text.split(",") if part.strip()]


def _is_expression(text: str) -> bool:
    return text.strip().startswith(("${", "#{", "="))


#: Standard BPMN resource roles of a user task: a plain name is the assignee for a (human)
#: performer and a candidate group for a potential owner, as Activiti, Flowable and Camunda read
#: them; `user(x)` is the assignee of a performer and a candidate user of a potential owner.
_PERFORMERS = {"humanPerformer": "assignee", "performer": "assignee", "potentialOwner": "role"}
_PERFORMER_ITEM = re.compile(r"^(user|group)\((.+)\)$")


def _performers(element: etree._Element) -> list[tuple[str, str]]:
    """Assignments from `potentialOwner`/`humanPerformer` (a `resourceAssignmentExpression`
    such as `group(management), user(kermit)`, or a `resourceRef` naming a resource), each as
    ("assignee" | "user" | "role" | "expression", name)."""
    found: list[tuple[str, str]] = []
    for child in element:
        namespace, local = split(child.tag) if isinstance(child.tag, str) else ("", "")
        if namespace != BPMN or local not in _PERFORMERS:
            continue
        plain = _PERFORMERS[local]
        formal = child.find(f".//{q(BPMN, 'formalExpression')}")
        text = (formal.text or "").strip() if formal is not None else ""
        if not text:
            reference = child.find(q(BPMN, "resourceRef"))
            text = _resource_name(element, (reference.text or "") if reference is not None else "")
        if text.startswith(("${", "#{", "=")):
            found.append(("expression", text))
            continue
        for item in (part.strip() for part in text.split(",")):
            match = _PERFORMER_ITEM.match(item)
            if match and match[1] == "group":
                found.append(("role", match[2].strip()))
            elif match:
                found.append(("user" if plain == "role" else "assignee", match[2].strip()))
            elif item:
                found.append((plain, item))
    return found


def _resource_name(element: etree._Element, reference: str) -> str:
    target = reference.strip().rpartition(":")[2]
    if not target:
        return ""
    root = element.getroottree().getroot()
    for resource in root.iterchildren(q(BPMN, "resource")):
        if resource.get("id") == target:
            return (resource.get("name") or "").strip()
    return ""


def form_spec(element: etree._Element, warn: Warn) -> dict[str, Any] | None:
    """Form fields from `camunda:formData`, `flowable:formProperty` and a Camunda 8 embedded
    form (`zeebe:userTaskForm`, converted only when every component maps exactly)."""
    fields: list[dict[str, Any]] = []
    data = find_extension(element, JUEL_VENDORS, "formData")
    for child in data if data is not None else []:
        if split(child.tag)[1] == "formField":
            fields.append(_form_field(child, warn))
    for child in _extensions(element):
        namespace, local = split(child.tag)
        if namespace in JUEL_VENDORS and local == "formProperty":
            field = _form_property(child, warn)
            if field is not None:
                fields.append(field)
    if not fields:
        fields = _embedded_form(element, warn) or []
    return {"fields": fields} if fields else None


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


def _form_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
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
            shown["value"] = _expression(expression, warn)
        return shown
    if expression:
        result["default"] = {"expr": _expression(expression, warn)}
    pattern = prop.get("datePattern")
    if pattern and pattern not in ("yyyy-MM-dd", "yyyy-MM-dd'T'HH:mm:ss"):
        warn("import.form_lossy", f"Form field '{result['key']}' date pattern '{pattern}': ISO")
    return result


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


def _embedded_form(element: etree._Element, warn: Warn) -> list[dict[str, Any]] | None:
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


def service_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Tool, inputs, result variable and retries of a service task."""
    config: dict[str, Any] = {}
    inputs: dict[str, str] = {}
    operator = find_extension(element, (SPIFF,), "serviceTaskOperator")
    if operator is not None:
        config["tool"] = operator.get("id", "")
        for parameter in operator.iter(q(SPIFF, "parameter")):
            inputs[parameter.get("id", "")] = _expression(parameter.get("value", ""), warn)
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
    _outputs(config, element, warn)
    _listeners(element, warn)
    return config


#: Camunda/Flowable attributes naming Java code that runs a service task.
JAVA_IMPLEMENTATIONS = ("class", "delegateExpression", "expression")
_CYCLE = re.compile(r"^R(\d+)/(P.+)$")
_SECONDS = re.compile(r"^PT?(?:(\d+)D)?T?(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$")


def iso_seconds(text: str) -> float | None:
    """Seconds of an ISO-8601 duration of days, hours, minutes and seconds (None otherwise)."""
    match = _SECONDS.match(text.strip()) if _ISO_DURATION.match(text.strip()) else None
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


def _outputs(config: dict[str, Any], element: etree._Element, warn: Warn) -> None:
    """Output mappings of a tool call. A Camunda connector's whole `${response}` copied into one
    variable becomes `saveTo`; a mapping that copies a result variable under its own name
    (`=id` to `id`) needs nothing, as the variables pool merges the tool's result key by key
    (when there is no `saveTo`); any other mapping is reported, not imported."""
    found: list[tuple[str, str]] = []
    io = find_extension(element, JUEL_VENDORS, "inputOutput")
    for parameter in io if io is not None else []:
        if split(parameter.tag)[1] == "outputParameter":
            text = "" if len(parameter) else (parameter.text or "").strip()
            found.append((parameter.get("name", ""), text))
    mapping = find_extension(element, (ZEEBE,), "ioMapping")
    for parameter in mapping if mapping is not None else []:
        if split(parameter.tag)[1] == "output":
            found.append((parameter.get("target", ""), (parameter.get("source") or "").strip()))
    for target, source in found:
        juel = source[:2] in ("${", "#{") and source.endswith("}")
        name = source[2:-1].strip() if juel else source.removeprefix("=").strip()
        if not (juel or source.startswith("=")) or not is_identifier(target):
            name = ""
        if juel and name == "response" and len(found) == 1 and "saveTo" not in config:
            config["saveTo"] = target
        elif name != target or "saveTo" in config:
            warn("import.output_lossy", f"Output '{target}' = '{source[:80]}' not imported")


def input_parameters(element: etree._Element, warn: Warn) -> dict[str, str]:
    inputs: dict[str, str] = {}
    io = find_extension(element, JUEL_VENDORS, "inputOutput")
    for parameter in io if io is not None else []:
        if split(parameter.tag)[1] != "inputParameter":
            continue
        name = parameter.get("name", "")
        if len(parameter):
            warn("import.input_lossy", f"Input '{name}' (map, list or script) not imported")
            continue
        inputs[name] = _value(name, parameter.text or "", warn)
    mapping = find_extension(element, (ZEEBE,), "ioMapping")
    for parameter in mapping if mapping is not None else []:
        name = parameter.get("target", "")
        if split(parameter.tag)[1] == "input" and name:
            inputs[name] = _value(name, parameter.get("source", ""), warn)
    return inputs


def _value(name: str, text: str, warn: Warn) -> str:
    """A vendor input: `${...}`/`=...` is an expression, anything else a literal string."""
    translated = conditions.translate_value(text)
    if not translated.ok:
        warn("import.expression_untranslated", f"Input '{name}' kept as written: {text[:80]}")
    return translated.text


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


def _listeners(element: etree._Element, warn: Warn) -> None:
    for child in _extensions(element):
        namespace, local = split(child.tag)
        if namespace in JUEL_VENDORS and local in ("executionListener", "taskListener"):
            target = next((v for k, v in child.attrib.items() if k != "event"), "")
            warn("import.listener", f"The {local} '{target}' is not imported")


#: Script formats that are expressions: with a result variable they become one assignment.
_EXPRESSION_FORMATS = ("juel", "feel")


def script_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Script and language of a script task: `scriptFormat` lower-cased and the `<script>` text
    verbatim; an expression (JUEL, Zeebe's FEEL) with a result variable becomes our assignment.
    Without `scriptFormat` a file Flowdesk touched means our default, a SpiffWorkflow file Python,
    any other file an unknown language (`unspecified`)."""
    script = element.find(q(split(element.tag)[0], "script"))
    text = "".join(script.itertext()) if script is not None else None
    language = (element.get("scriptFormat") or "").strip().lower()
    declared = set(element.getroottree().getroot().nsmap.values())
    if not language and FLOWDESK in declared:
        return {} if text is None else {"script": text}
    if not language:
        language = "python" if SPIFF in declared else "unspecified"
    result = vendor_attr(element, "resultVariable")
    zeebe = find_extension(element, (ZEEBE,), "script")
    if zeebe is not None and zeebe.get("expression"):
        text, language, result = zeebe.get("expression"), "feel", zeebe.get("resultVariable")
    if vendor_attr(element, "resource"):
        warn("import.script_resource", "The external script resource is not imported")
    if text is None:
        return {"language": language}
    if language in _EXPRESSION_FORMATS and result and is_identifier(result):
        translated = conditions.translate(text.strip(), language)
        if translated.ok:
            return {"language": "flowdesk", "script": f"{result} = {translated.text}"}
    if language == "python" and not result:
        translated = conditions.translate_script(text)
        if translated.ok:
            return {"language": "flowdesk", "script": translated.text}
    config: dict[str, Any] = {"language": language, "script": text}
    if result:
        config["resultVariable"] = result
    if language != "flowdesk":
        warn(
            "import.script_language",
            f"Script in '{language}' imported as written; rewrite it in Flowdesk's language "
            "before publishing",
        )
    return config


def _text(value: Any) -> bool:
    return isinstance(value, str) and value != "" and value == value.strip() and "\x00" not in value


def export_settings(element: etree._Element, config: dict[str, Any]) -> list[etree._Element]:
    """Write the vendor settings import mapped back in their vendor's own form (attributes set
    on `element`; the extension elements are returned), so the source modeler finds them. The
    config keeps them too: `<flowdesk:config>` stays what a re-import reads."""
    children: list[etree._Element] = []

    def put(vendor: Any, name: str, value: Any) -> None:
        if vendor in NAMESPACES and vendor != "zeebe" and _text(value):
            with contextlib.suppress(ValueError):
                element.set(q(NAMESPACES[vendor], name), value)

    reference = config.get("formRef")
    if isinstance(reference, dict):
        if reference.get("vendor") == "zeebe":
            child = etree.Element(q(ZEEBE, "formDefinition"))
            for name in ZEEBE_FORM_LINKS:
                if _text(reference.get(name)):
                    child.set(name, reference[name])
            if child.attrib:
                children.append(child)
        else:
            for name in FORM_LINKS:
                put(reference.get("vendor"), name, reference.get(name))
    schedule = etree.Element(q(ZEEBE, "taskSchedule"))
    for name in ("dueDate", "followUpDate"):
        date = config.get(name)
        if isinstance(date, dict) and date.get("vendor") == "zeebe" and _text(date.get("value")):
            schedule.set(name, date["value"])
        elif isinstance(date, dict):
            put(date.get("vendor"), name, date.get("value"))
    if schedule.attrib:
        children.append(schedule)
    implementation = config.get("implementation")
    if not isinstance(implementation, dict):
        return children
    vendor = implementation.get("vendor")
    tool = config.get("tool")
    if vendor == "zeebe" and _text(tool):
        child = etree.Element(q(ZEEBE, "taskDefinition"), type=tool)
        if isinstance(config.get("retries"), int) and not isinstance(config["retries"], bool):
            child.set("retries", str(config["retries"]))
        children.append(child)
        return children
    if implementation.get("type") == "external" and _text(tool):
        put(vendor, "type", "external")
        put(vendor, "topic", tool)
    for name in JAVA_IMPLEMENTATIONS:
        put(vendor, name, implementation.get(name))
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
        children.append(child)
    return children


def export_namespaces(nodes: Any) -> set[str]:
    """The vendor namespaces `export_settings` writes for `nodes` (declared on the root)."""
    found: set[str] = set()
    for node in nodes:
        config = node.get("config") if isinstance(node, dict) else None
        for key in ("formRef", "dueDate", "followUpDate", "implementation"):
            value = config.get(key) if isinstance(config, dict) else None
            if isinstance(value, dict) and value.get("vendor") in NAMESPACES:
                found.add(NAMESPACES[value["vendor"]])
    return found
