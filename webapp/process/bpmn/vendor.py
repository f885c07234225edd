"""Best-effort mapping of vendor extensions (Camunda 7/8, Flowable, Activiti, Spiff) to config.

Each function reads one BPMN element and returns the config keys it could derive; whatever it
reads only approximately is reported through `warn(code, message)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lxml import etree

from webapp.process.document import is_identifier

from . import conditions
from .namespaces import BPMN, FLOWDESK, JUEL_VENDORS, SPIFF, ZEEBE, q, split

Warn = Callable[[str, str], None]

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
    """The start form of a start event."""
    form = form_spec(element, warn)
    _listeners(element, warn)
    return {"form": form} if form else {}


def user_task_config(element: etree._Element, warn: Warn) -> dict[str, Any]:
    """Assignee, form and due date of a user task."""
    config: dict[str, Any] = {}
    assignee, candidates = _assignee(element, warn)
    if assignee:
        config["assignee"] = assignee
    if candidates:
        config["candidates"] = candidates
    form = form_spec(element, warn)
    if form:
        config["form"] = form
    due = vendor_attr(element, "dueDate")
    if due is not None:
        if _ISO_DURATION.match(due.strip()):
            config["dueIn"] = due.strip()
        else:
            warn("import.due_date", f"Due date '{due}' is not an ISO-8601 duration; not imported")
    _listeners(element, warn)
    return config


def _assignee(element: etree._Element, warn: Warn) -> tuple[dict[str, str] | None, dict]:
    """The assignee and further candidates of a user task, as the source engine reads them: a
    direct assignee (or, without one, the first candidate group, else the first candidate user)
    is the assignee; every other candidate group and user is a candidate."""
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
    expressions = [name for name in [*groups, *users] if _is_expression(name)]
    groups = [name for name in dict.fromkeys(groups) if not _is_expression(name)]
    users = [name for name in dict.fromkeys(users) if not _is_expression(name)]
    if direct:
        kind, value = direct[0]
    elif expressions:
        kind, value = "expression", expressions.pop(0)
    elif groups:
        kind, value = "role", groups.pop(0)
    elif users:
        kind, value = "user", users.pop(0)
    else:
        return None, {}
    if len(direct) > 1 or expressions:
        lost = [v for _, v in direct[1:]] + expressions
        warn("import.assignee_lossy", f"Not imported: the further assignment(s) {', '.join(lost)}")
    if _is_expression(value):
        assignee = {"type": "expression", "value": _expression(value, warn)}
    else:
        assignee = {"type": kind, "value": value}
    candidates = {
        "roles": [name for name in groups if not (kind == "role" and name == value)],
        "users": [name for name in users if not (kind == "user" and name == value)],
    }
    return assignee, {key: names for key, names in candidates.items() if names}


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
    """Form fields from `camunda:formData`, `flowable:formProperty` (best effort)."""
    form_key = vendor_attr(element, "formKey")
    if form_key:
        warn("import.form_key", f"External form '{form_key}' is not imported")
    if find_extension(element, (ZEEBE,), "formDefinition") is not None:
        warn("import.form_key", "Camunda 8 linked form is not imported")
    fields: list[dict[str, Any]] = []
    data = find_extension(element, JUEL_VENDORS, "formData")
    for child in data if data is not None else []:
        if split(child.tag)[1] == "formField":
            fields.append(_form_field(child, warn))
    for child in _extensions(element):
        namespace, local = split(child.tag)
        if namespace in JUEL_VENDORS and local == "formProperty":
            fields.append(_form_field(child, warn))
    return {"fields": fields} if fields else None


def _form_field(field: etree._Element, warn: Warn) -> dict[str, Any]:
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
    for child in field.iter():
        namespace, local = split(child.tag)
        if local == "value" and namespace in JUEL_VENDORS:
            value = child.get("id", "")
            options.append({"value": value, "label": child.get("name") or value})
        elif local == "constraint" and namespace in JUEL_VENDORS:
            _constraint(result, child.get("name", ""), child.get("config"), warn)
        elif local == "property" and namespace in JUEL_VENDORS:
            if child.get("id") == "description":
                result["help"] = child.get("value", "")
            else:
                warn("import.form_lossy", f"Form field '{key}' property '{child.get('id')}'")
    if options:
        result["options"] = options
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
        _retry(config, task_definition.get("retries"), None, warn)
    if vendor_attr(element, "type") == "external" and vendor_attr(element, "topic"):
        config["tool"] = vendor_attr(element, "topic")
    for attribute in ("class", "expression", "delegateExpression"):
        value = vendor_attr(element, attribute)
        if value:
            warn("import.service_implementation", f"Service implementation '{value}' not imported")
    if find_extension(element, JUEL_VENDORS, "connector") is not None:
        warn("import.service_implementation", "Camunda connector not imported")
    _save_to(config, vendor_attr(element, "resultVariable"), warn)
    _save_to(config, vendor_attr(element, "resultVariableName"), warn)
    inputs.update(input_parameters(element, warn))
    if inputs:
        config["inputs"] = inputs
    _listeners(element, warn)
    return config


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
