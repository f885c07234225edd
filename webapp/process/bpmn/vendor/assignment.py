"""User task assignment (assignee, candidate groups and users, BPMN performers): read from
each vendor's form, kept as written, and written back in that form."""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from .. import conditions
from ..namespaces import BPMN, JUEL_VENDORS, ZEEBE, q, split
from .common import (
    NAMESPACES,
    VENDOR_NAMES,
    Added,
    Warn,
    as_mapping,
    expression_text,
    find_extension,
    quiet,
    vendor_attr,
)

#: Standard BPMN resource roles of a user task: a plain name is the assignee for a (human)
#: performer and a candidate group for a potential owner, as Activiti, Flowable and Camunda read
#: them; `user(x)` is the assignee of a performer and a candidate user of a potential owner.
_PERFORMERS = {"humanPerformer": "assignee", "performer": "assignee", "potentialOwner": "role"}
_PERFORMER_ITEM = re.compile(r"^(user|group)\((.+)\)$")
PERFORMER_TAGS = {q(BPMN, local) for local in _PERFORMERS}


#: The vendor attributes that say a user task's assignment.
ASSIGNMENT_ATTRIBUTES = ("assignee", "candidateUsers", "candidateGroups")


def assignment_of(element: etree._Element, warn: Warn) -> tuple[dict[str, str] | None, dict]:
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
        key: expression_text(texts[0], warn) for key, texts in computed.items() if texts
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
        assignee = {"type": "expression", "value": expression_text(value, warn)}
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


def assignment_origin(element: etree._Element) -> tuple[str, str, Any] | None:
    """(vendor, "assignment", the assignment attributes as written) of a user task, if any."""
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
            return VENDOR_NAMES[namespace], "assignment", found
    return None


def _assignment_now(config: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The assignee and candidates of `config` as import gives them (no empty lists)."""
    assignee = config.get("assignee")
    if not isinstance(assignee, dict) or not assignee.get("value"):
        assignee = None
    candidates = as_mapping(config.get("candidates"))
    return assignee, {key: names for key, names in candidates.items() if names}


def write_assignment(
    element: etree._Element, config: dict[str, Any], origin: dict[str, Any], dialect: str | None
) -> None:
    """Write a user task's current assignment in its vendor's form: as the file had it when that
    still says it, else generated, else not at all."""
    current = _assignment_now(config)
    performers = [child for child in element if child.tag in PERFORMER_TAGS]
    raw = origin.get("assignment") if isinstance(origin.get("assignment"), dict) else None
    source = origin.get("vendor") if raw else None
    added = Added(element)
    if raw and source in NAMESPACES:
        _put_assignment(added, str(source), raw)
    if assignment_of(element, quiet) == current:
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
    if not written or assignment_of(element, quiet) != current:
        added.undo()
        for child in [c for c in element if c.tag in PERFORMER_TAGS]:
            element.remove(child)


def _put_assignment(added: Added, vendor: str, values: dict[str, Any]) -> bool:
    values = {name: values[name] for name in ASSIGNMENT_ATTRIBUTES if name in values}
    if vendor == "zeebe":
        child = etree.Element(q(ZEEBE, "assignmentDefinition"))
        added_here = Added(child)
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
