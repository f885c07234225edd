"""Best-effort mapping of vendor extensions (Camunda 7/8, Flowable, Activiti, Spiff) to config.

Each function reads one BPMN element and returns the config keys it could derive; whatever it
reads only approximately is reported through `warn(code, message)`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier
from webapp.process.kinds import EMPTY_SCRIPT

from . import conditions, kept, safe_xml
from .namespaces import (
    ACTIVITI,
    BPMN,
    CAMUNDA,
    FLOWABLE,
    FLOWDESK,
    JBPM,
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
    config.update(origin_config(element, form=True))
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
    config.update(origin_config(element, assignment=True, form=True))
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
    config.update(origin_config(element, io=True))
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
    elif not (text or "").strip() and declared & {JBPM, SPIFF}:
        warn(
            "import.script_empty",
            "The script is empty; it runs as a no-op, as in jBPM and SpiffWorkflow",
        )
        return {"language": "flowdesk", "script": "", EMPTY_SCRIPT: True}
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
        for key in ("formRef", "dueDate", "followUpDate", "implementation", ORIGIN):
            value = config.get(key) if isinstance(config, dict) else None
            if isinstance(value, dict) and value.get("vendor") in NAMESPACES:
                found.add(NAMESPACES[value["vendor"]])
    return found


# --- assignment, forms and tool inputs: what the source wrote, and writing them back ------------

#: The config key recording, verbatim, the vendor settings a node came with that export writes
#: back: `{"vendor", "assignment": {attribute: text}, "form": [element trees], "io": tree}`.
ORIGIN = "origin"
ASSIGNMENT_ATTRIBUTES = ("assignee", "candidateUsers", "candidateGroups")
#: Config keys export writes back in the vendor's form: in a file Flowdesk wrote they are read
#: from `<flowdesk:config>` only (the vendor's copy on a canvas is stale after a panel edit).
WRITTEN_BACK = ("assignee", "candidates", "form", "inputs", ORIGIN)
_FORM_ELEMENTS = ("formData", "formProperty")


def origin_config(
    element: etree._Element, *, assignment: bool = False, form: bool = False, io: bool = False
) -> dict[str, Any]:
    """`{"origin": ...}`: the vendor and the assignment attributes, form elements and input/output
    mapping of `element` as written, so export gives an untouched node back exactly."""
    origin: dict[str, Any] = {}
    if assignment:
        for namespace in (*JUEL_VENDORS, ZEEBE):
            source = element
            if namespace == ZEEBE:
                source = find_extension(element, (ZEEBE,), "assignmentDefinition")
            if source is None:
                continue
            qualified = source is element
            names = {n: q(namespace, n) if qualified else n for n in ASSIGNMENT_ATTRIBUTES}
            found = {n: str(source.get(a)) for n, a in names.items() if source.get(a) is not None}
            if found:
                origin = {"vendor": VENDOR_NAMES[namespace], "assignment": found}
                break
    if form:
        items = [
            child
            for child in _extensions(element)
            if split(child.tag)[0] in JUEL_VENDORS and split(child.tag)[1] in _FORM_ELEMENTS
        ]
        if items:
            origin.setdefault("vendor", VENDOR_NAMES[split(items[0].tag)[0]])
            origin["form"] = [_tree(child) for child in items]
    if io:
        mapping = find_extension(element, JUEL_VENDORS, "inputOutput")
        if mapping is None:
            mapping = find_extension(element, (ZEEBE,), "ioMapping")
        if mapping is not None:
            origin.setdefault("vendor", VENDOR_NAMES[split(mapping.tag)[0]])
            origin["io"] = _tree(mapping)
    return {ORIGIN: origin} if origin else {}


def _tree(element: etree._Element) -> dict[str, Any]:
    """The JSON tree of `element` with its attributes in name order, as `<flowdesk:config>`'s
    canonical JSON gives them back, so the first export writes what every later one does."""

    def ordered(data: dict[str, Any]) -> dict[str, Any]:
        if isinstance(data.get("attrs"), dict):
            data["attrs"] = dict(sorted(data["attrs"].items()))
        for child in data.get("children") or []:
            ordered(child)
        return data

    return ordered(kept.to_data(element))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _quiet(code: str, message: str) -> None:
    """A `warn` that drops what it hears: export re-reads what it writes only to compare."""


#: Node kinds whose element may hold a vendor form or a tool's input mapping.
_FORM_KINDS = ("userTask", "startEvent")
_TOOL_KINDS = ("serviceTask", "sendTask", "messageThrow", "endEvent")


def write_back(root: etree._Element, doc: Mapping[str, Any]) -> None:
    """Write each node's current assignment, form fields and tool inputs in the dialect its
    file came with (`origin`, the node's other vendor settings, else the one vendor the document
    uses): what the source wrote, verbatim, while Flowdesk's values still read the same from
    it; otherwise the current values, when the vendor's form says them exactly; otherwise
    nothing (they stay in `<flowdesk:config>` only). Runs on the built tree, whose resources
    `potentialOwner` references name."""
    fallback = _document_vendor(doc)
    elements = {element.get("id"): element for element in root.iter(q(BPMN, "*"))}
    for node_id, node in doc.get("nodes", {}).items():
        element = elements.get(node_id)
        config = node.get("config")
        if element is None or not isinstance(config, dict):
            continue
        origin = _mapping(config.get(ORIGIN))
        dialect = _node_vendor(config, origin) or fallback
        local = split(element.tag)[1]
        if node["kind"] == "userTask" and local == "userTask":
            _write_assignment(element, config, origin, dialect)
        if node["kind"] in _FORM_KINDS and local == node["kind"]:
            _write_form(element, config, origin, dialect)
        if node["kind"] in _TOOL_KINDS and local != "task":
            _write_inputs(element, config, origin, dialect)


def _node_vendor(config: dict[str, Any], origin: dict[str, Any]) -> str | None:
    for value in (origin, *(config.get(key) for key in _VENDOR_KEYS)):
        if isinstance(value, dict) and value.get("vendor") in NAMESPACES:
            return str(value["vendor"])
    return None


_VENDOR_KEYS = ("formRef", "implementation", "dueDate", "followUpDate")


def _document_vendor(doc: Mapping[str, Any]) -> str | None:
    """The one vendor whose settings or kept extensions the document holds (None for none or
    several): the dialect of a node that has none of its own."""
    found: set[str] = set()
    for node in doc.get("nodes", {}).values():
        config = node.get("config") if isinstance(node, dict) else None
        if isinstance(config, dict):
            origin = _mapping(config.get(ORIGIN))
            vendor = _node_vendor(config, origin)
            if vendor:
                found.add(vendor)
    text = json.dumps([doc.get("kept"), [n.get("kept") for n in doc.get("nodes", {}).values()]])
    found |= {name for uri, name in VENDOR_NAMES.items() if "{" + uri + "}" in text}
    return found.pop() if len(found) == 1 else None


def _container(element: etree._Element) -> etree._Element:
    container = element.find(q(BPMN, "extensionElements"))
    if container is None:
        container = etree.Element(q(BPMN, "extensionElements"))
        element.insert(0, container)
    return container


class _Added:
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


# --- assignment ---------------------------------------------------------------------------------


def _assignment_now(config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The assignee and candidates of `config` as import gives them (no empty lists)."""
    assignee = config.get("assignee")
    if not isinstance(assignee, dict) or not assignee.get("value"):
        assignee = None
    candidates = _mapping(config.get("candidates"))
    return assignee, {key: names for key, names in candidates.items() if names}


def _write_assignment(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    current = _assignment_now(config)
    performers = [child for child in element if child.tag in _PERFORMER_TAGS]
    raw = origin.get("assignment") if isinstance(origin.get("assignment"), dict) else None
    source = origin.get("vendor") if raw else None
    added = _Added(element)
    if raw and source in NAMESPACES:
        _put_assignment(added, str(source), raw)
    if _assignee(element, _quiet) == current:
        return  # as the file said it (or nothing, as nothing is set)
    added.undo()
    for child in performers:
        element.remove(child)
    target = source if source in NAMESPACES else ("bpmn" if performers else dialect)
    if target is None or current == (None, {}):
        return
    if target == "bpmn":
        written = _put_performers(element, current)
    else:
        generated = _vendor_assignment(current, target == "zeebe")
        written = generated is not None and _put_assignment(added, target, generated)
    if not written or _assignee(element, _quiet) != current:
        added.undo()
        for child in [c for c in element if c.tag in _PERFORMER_TAGS]:
            element.remove(child)


_PERFORMER_TAGS = {q(BPMN, local) for local in _PERFORMERS}


def _put_assignment(added: _Added, vendor: str, values: dict[str, Any]) -> bool:
    values = {name: values[name] for name in ASSIGNMENT_ATTRIBUTES if name in values}
    if vendor == "zeebe":
        child = etree.Element(q(ZEEBE, "assignmentDefinition"))
        added_here = _Added(child)
        if not all(added_here.set(name, value) for name, value in values.items()):
            return False
        added.extension(child)
        return True
    namespace = NAMESPACES[vendor]
    return all(added.set(q(namespace, name), value) for name, value in values.items())


def _vendor_assignment(current: tuple[Any, dict[str, Any]], feel: bool) -> dict[str, str] | None:
    """The vendor attributes saying `current` (the caller checks they read back the same)."""
    assignee, candidates = current
    roles, users = list(candidates.get("roles", [])), list(candidates.get("users", []))
    values: dict[str, str] = {}
    if assignee is not None:
        kind, value = assignee.get("type"), assignee.get("value")
        if kind == "role":
            roles.insert(0, value)
        elif kind == "user":
            values["assignee"] = value
        elif kind == "expression":
            text = conditions.to_vendor(value, conditions.FEEL if feel else conditions.JUEL)
            if text is None:
                return None
            values["assignee"] = text
        else:
            return None
    if not all(isinstance(name, str) for name in [*roles, *users]):
        return None
    for key, names in (("rolesFrom", roles), ("usersFrom", users)):
        if isinstance(candidates.get(key), str):  # Camunda splits the list, then evaluates each
            text = conditions.to_vendor(
                candidates[key], conditions.FEEL if feel else conditions.JUEL
            )
            if text is None or feel:  # Zeebe takes one expression for the whole list
                return None
            names.append(text)
    if roles:
        values["candidateGroups"] = ",".join(roles)
    if users:
        values["candidateUsers"] = ",".join(users)
    return values


def _put_performers(element: etree._Element, current: tuple[Any, dict[str, Any]]) -> bool:
    """`humanPerformer` (the assignee user or expression) and `potentialOwner` (`group(x)`,
    `user(x)`) saying `current`, before any loop characteristics."""
    assignee, candidates = current
    roles, users = list(candidates.get("roles", [])), list(candidates.get("users", []))
    texts: list[tuple[str, str]] = []
    if assignee is not None:
        kind, value = assignee.get("type"), assignee.get("value")
        if kind == "role":
            roles.insert(0, value)
        elif kind == "user":
            texts.append(("humanPerformer", value))
        elif kind == "expression":
            text = conditions.to_vendor(value, conditions.JUEL)
            if text is None:
                return False
            texts.append(("humanPerformer", text))
    if not all(isinstance(name, str) for name in [*roles, *users]):
        return False
    owners = [f"group({name})" for name in roles] + [f"user({name})" for name in users]
    if owners:
        texts.append(("potentialOwner", ", ".join(owners)))
    loops = [child for child in element if split(child.tag)[1].endswith("LoopCharacteristics")]
    for local, text in texts:
        performer = etree.Element(q(BPMN, local))
        expression = etree.SubElement(performer, q(BPMN, "resourceAssignmentExpression"))
        try:
            etree.SubElement(expression, q(BPMN, "formalExpression")).text = text
        except ValueError:
            return False
        if loops:
            loops[0].addprevious(performer)
        else:
            element.append(performer)
    return True


# --- forms --------------------------------------------------------------------------------------

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


def _write_form(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    wanted = _form_meaning(config.get("form"))
    trees = origin["form"] if isinstance(origin.get("form"), list) else []
    added = _Added(element)
    for tree in trees:
        added.extension(kept.to_xml(tree))
    if _form_meaning(form_spec(element, _quiet)) == wanted:
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
    if _form_meaning(form_spec(element, _quiet)) != wanted:
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


# --- tool inputs --------------------------------------------------------------------------------


def _saved_to(element: etree._Element) -> str | None:
    probe: dict[str, Any] = {}
    _outputs(probe, element, _quiet)
    return probe.get("saveTo")


def _write_inputs(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    wanted = _mapping(config.get("inputs"))
    tree = origin.get("io") if isinstance(origin.get("io"), dict) else None
    added = _Added(element)
    if tree is not None:
        added.extension(kept.to_xml(tree))

    def same() -> bool:
        saved = _saved_to(element)
        return input_parameters(element, _quiet) == wanted and saved in (None, config.get("saveTo"))

    if same():
        return
    outputs = [
        copy
        for child in added.children
        for copy in child
        if split(copy.tag)[1] in ("outputParameter", "output")
    ]
    added.undo()
    namespace = (
        split(str(tree.get("tag")))[0] if tree is not None else NAMESPACES.get(dialect or "")
    )
    if namespace not in (CAMUNDA, ZEEBE) or (not wanted and not outputs):
        return
    feel = namespace == ZEEBE
    mapping = etree.Element(q(namespace, "ioMapping" if feel else "inputOutput"))
    for name, value in sorted(wanted.items()):  # the order <flowdesk:config> gives back
        text = _vendor_input(value, feel)
        if text is None or not isinstance(name, str):
            return
        try:
            if feel:
                etree.SubElement(mapping, q(ZEEBE, "input"), source=text, target=name)
            else:
                etree.SubElement(mapping, q(namespace, "inputParameter"), name=name).text = text
        except ValueError:
            return
    mapping.extend(outputs)
    added.extension(mapping)
    if not same():
        for output in outputs:
            mapping.remove(output)
        if not same() or not len(mapping):
            added.undo()


_ESCAPES = {"\\\\": "\\", "\\n": "\n", "\\r": "\r", "\\t": "\t", "\\'": "'", '\\"': '"'}


def _vendor_input(value: Any, feel: bool = False) -> str | None:
    """A Camunda input parameter's text (a Zeebe input's source) for our input value: `${path}`
    (`=path`) for a variable path, the text of a string literal; None when neither reads back
    as `value` exactly."""
    if not isinstance(value, str):
        return None
    path = conditions.to_vendor(value, conditions.FEEL if feel else conditions.JUEL)
    if path is not None:
        return path
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        text = re.sub(r"\\[\\nrt'\"]", lambda m: _ESCAPES[m.group()], value[1:-1])
        translated = conditions.translate_value(text)
        if translated.ok and translated.text == value:
            return text
    return None


# --- a canvas's copy ----------------------------------------------------------------------------


def _written_back(element: etree._Element, kind: str) -> tuple[list[Any], list[etree._Element]]:
    """The vendor's copy of the written-back settings on a node element: its assignment
    attributes (namespace, name) and performers, and the extension elements that hold them."""
    attributes: list[Any] = []
    if kind == "userTask":
        for namespace in JUEL_VENDORS:
            for name in ASSIGNMENT_ATTRIBUTES:
                if element.get(q(namespace, name)) is not None:
                    attributes.append((namespace, name))
    wanted = {"assignmentDefinition"} if kind == "userTask" else set()
    wanted |= set(_FORM_ELEMENTS) if kind in _FORM_KINDS else set()
    wanted |= {"inputOutput", "ioMapping"} if kind in _TOOL_KINDS else set()
    children = [
        child
        for child in _extensions(element)
        if split(child.tag)[0] in (*JUEL_VENDORS, ZEEBE) and split(child.tag)[1] in wanted
    ]
    if kind == "userTask":
        children += [child for child in element if child.tag in _PERFORMER_TAGS]
    return attributes, children


def _copy_of(element: etree._Element, kind: str) -> list[str]:
    attributes, children = _written_back(element, kind)
    values = [repr((*item, element.get(q(*item)))) for item in attributes]
    return sorted(values + [json.dumps(kept.to_data(child), sort_keys=True) for child in children])


def refresh_written_back(root: etree._Element, doc: Mapping[str, Any]) -> bool:
    """Make the vendor's copy of assignment, forms and inputs in a tree Flowdesk once exported
    (a canvas posts it back after panel edits that changed only `<flowdesk:config>`) say the
    document's current values, as export would; tell whether anything changed."""
    elements = {element.get("id"): element for element in root.iter(q(BPMN, "*"))}
    before: dict[str, list[str]] = {}
    for node_id, node in doc.get("nodes", {}).items():
        element = elements.get(node_id)
        if element is None or split(element.tag)[1] == "task":
            continue
        before[node_id] = _copy_of(element, node["kind"])
        attributes, children = _written_back(element, node["kind"])
        for namespace, name in attributes:
            del element.attrib[q(namespace, name)]
        for child in children:
            parent = child.getparent()
            if child.tag not in _PERFORMER_TAGS and parent is not None:
                parent.remove(child)  # performers stay: write_back keeps or rewrites them
    write_back(root, doc)
    kinds = {node_id: node["kind"] for node_id, node in doc.get("nodes", {}).items()}
    return any(_copy_of(elements[i], kinds[i]) != old for i, old in before.items())


def refreshed_xml(xml: str, doc: Mapping[str, Any]) -> str | None:
    """`xml` (which imports to `doc`) with the vendor's copy of the written-back settings made
    current, or None when it already is; a designer save stores this, so a download of the
    draft never gives Camunda Modeler a value edited away in Flowdesk."""
    markers = (*VENDOR_NAMES, "Performer", "potentialOwner")
    if not any(marker in xml for marker in markers):
        return None  # no vendor's copy to make current (a save of a Flowdesk process: no parse)
    root = safe_xml.parse(xml, max_bytes=len(xml.encode("utf-8", "surrogatepass")) + 1)
    if not refresh_written_back(root, doc):
        return None
    body = etree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
