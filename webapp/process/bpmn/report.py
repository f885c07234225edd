"""What an import did, in words a modeller reads: the settings Flowdesk took from the file, what
it approximated, what it keeps as documentation only, what it left out, and which of the
current draft's problems need a person (a tool to install, a script to rewrite, a group to map).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from webapp.process.validation import Problem

from .model import ImportResult

#: Problems a person must settle, by the kind of edit they need (the rest are "other").
NEEDS = {
    "tool.unknown": "tool",
    "tool.missing": "tool",
    "script.language": "script",
    "expression.foreign": "script",
    "task.role_unknown": "group",
}

#: Kept elements by their BPMN name, as the report names them.
_KEPT_NAMES = {
    "laneSet": "lane sets",
    "dataObject": "data objects",
    "dataObjectReference": "data object references",
    "dataStore": "data stores",
    "dataStoreReference": "data store references",
    "textAnnotation": "text annotations",
    "association": "associations",
    "group": "groups",
    "category": "categories",
    "itemDefinition": "item definitions",
    "ioSpecification": "input/output specifications",
    "property": "properties",
    "dataInputAssociation": "data input associations",
    "dataOutputAssociation": "data output associations",
    "participant": "pools",
    "messageFlow": "message flows",
    "collaboration": "collaborations",
    "process": "processes of other pools",
    "rendering": "renderings",
}


def summarize(result: ImportResult) -> dict[str, Any]:
    """The part of the report fixed at import time, as JSON-ready data."""
    return {
        "mapped": mapped(result.document),
        "approximated": [
            {"element": w.element_id, "code": w.code, "message": w.message} for w in result.warnings
        ],
        "kept": kept_counts(result.document),
        "left_out": [
            {"element": u.id, "type": u.type, "line": u.line, "detail": u.detail}
            for u in result.unsupported
        ],
    }


def mapped(doc: dict[str, Any]) -> list[dict[str, str]]:
    """One line per node setting that runs in Flowdesk, in document order."""
    lines: list[dict[str, str]] = []
    for node_id, node in doc.get("nodes", {}).items():
        config = _mapping(node.get("config"))
        for text in _settings(node.get("kind", ""), config):
            lines.append({"element": node_id, "text": text})
    for flow_id, flow in doc.get("flows", {}).items():
        if flow.get("condition"):
            lines.append({"element": flow_id, "text": f"condition {flow['condition']}"})
    return lines


def _settings(kind: str, config: dict[str, Any]) -> list[str]:
    found: list[str] = []
    assignee = config.get("assignee") if isinstance(config.get("assignee"), dict) else None
    if kind == "userTask":
        if assignee and assignee.get("value"):
            found.append(f"assigned to {assignee.get('type')} {assignee.get('value')}")
        elif not config.get("candidates"):
            found.append("open to everyone who may work tasks in the partition")
        candidates = _mapping(config.get("candidates"))
        for key in ("roles", "users"):
            names = candidates.get(key)
            if isinstance(names, list) and names:
                found.append(f"also offered to {key} {', '.join(map(str, names))}")
            if isinstance(candidates.get(f"{key}From"), str):
                found.append(f"also offered to the {key} {candidates[f'{key}From']} gives")
    form = config.get("form") if isinstance(config.get("form"), dict) else None
    if form and isinstance(form.get("fields"), list) and form["fields"]:
        keys = ", ".join(str(f.get("key")) for f in form["fields"] if isinstance(f, dict))
        found.append(f"form with {len(form['fields'])} field(s): {keys}")
    if config.get("tool"):
        found.append(f"tool {config['tool']}")
    if isinstance(config.get("inputs"), dict) and config["inputs"]:
        found.append(f"inputs {', '.join(map(str, config['inputs']))}")
    for key, label in (
        ("saveTo", "result saved as"),
        ("retries", "retries"),
        ("dueIn", "due in"),
        ("message", "message"),
        ("signal", "signal"),
        ("correlationKey", "correlation key"),
        ("duration", "timer duration"),
        ("date", "timer date"),
        ("cycle", "timer cycle"),
        ("process", "calls process"),
        ("language", "script language"),
    ):
        if config.get(key) not in (None, ""):
            found.append(f"{label} {config[key]}")
    return found


def kept_counts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """How many elements of each modelling-only type the document keeps (diagram shapes aside)."""
    counts: Counter[str] = Counter()
    kept = _mapping(doc.get("kept"))
    owners = [kept.get(name) for name in kept if name != "diagram"]
    owners += [node.get("kept") for node in doc.get("nodes", {}).values()]
    for items in owners:
        for item in items if isinstance(items, list) else []:
            tag = item.get("tag") if isinstance(item, dict) else None
            if not isinstance(tag, str) or tag.startswith("@"):
                continue
            if tag == "collaboration":  # counted by what it holds: pools and message flows
                for child in item.get("children") or []:
                    if isinstance(child, dict) and child.get("tag") in _KEPT_NAMES:
                        counts[_KEPT_NAMES[child["tag"]]] += 1
                continue
            counts[_KEPT_NAMES.get(tag, "other vendors' extensions" if "}" in tag else tag)] += 1
    return [{"what": what, "count": n} for what, n in sorted(counts.items())]


def needs_a_person(problems: list[Problem]) -> dict[str, list[Problem]]:
    """The draft's errors by the edit they need: tool, script, group, other (in that order)."""
    groups: dict[str, list[Problem]] = {"tool": [], "script": [], "group": [], "other": []}
    for problem in problems:
        if problem.severity == "error":
            groups[NEEDS.get(problem.code, "other")].append(problem)
    return groups


def assignees(doc: dict[str, Any], kind: str) -> dict[str, list[str]]:
    """The users or roles (`kind` "user" or "role") user tasks are given or offered to (their
    assignee and candidates), each with the ids of its tasks, in document order."""
    found: dict[str, list[str]] = {}
    for node_id, node in doc.get("nodes", {}).items():
        for value in _names(node, kind):
            tasks = found.setdefault(value, [])
            if node_id not in tasks:
                tasks.append(node_id)
    return found


def reassign(doc: dict[str, Any], kind: str, renamed: dict[str, str | None]) -> dict[str, Any]:
    """`doc` with each user or role (`kind`) named in `renamed` replaced by its new name in the
    user tasks' assignees and candidates, or, for None, taken out (a task left with nobody is
    open to everyone in the partition)."""
    for node in doc.get("nodes", {}).values():
        if node.get("kind") != "userTask" or not isinstance(node.get("config"), dict):
            continue
        config = node["config"]
        assignee = _mapping(config.get("assignee"))
        value = assignee.get("value") if assignee.get("type") == kind else None
        if value in renamed:
            if renamed[value] is None:
                del config["assignee"]
            else:
                assignee["value"] = renamed[value]
        candidates = config.get("candidates")
        key = f"{kind}s"
        if isinstance(candidates, dict) and isinstance(candidates.get(key), list):
            names = [renamed.get(n, n) if n in renamed else n for n in candidates[key]]
            candidates[key] = [n for n in dict.fromkeys(names) if n is not None]
            if not candidates[key]:
                del candidates[key]
            if not candidates:
                del config["candidates"]
    return doc


def _names(node: dict[str, Any], kind: str) -> list[str]:
    """The names of `kind` a user task node is given or offered to."""
    config = _mapping(node.get("config"))
    if node.get("kind") != "userTask":
        return []
    assignee = _mapping(config.get("assignee"))
    names = [assignee.get("value")] if assignee.get("type") == kind else []
    candidates = _mapping(config.get("candidates"))
    listed = candidates.get(f"{kind}s")
    names += listed if isinstance(listed, list) else []
    return [name for name in names if isinstance(name, str) and name]


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
