"""What an import did, in words a modeller reads: the settings Flowdesk took from the file, what
it approximated, what it keeps as documentation only, what it left out, and which of the
current draft's problems need a person (a tool to install, a script to rewrite, a group to map).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from webapp.process.document import content_hash
from webapp.process.kinds import KINDS
from webapp.process.naming import plural
from webapp.process.validation import Problem

from .model import ImportResult

#: Problems a person must settle, by the kind of edit they need (the rest are "other").
NEEDS = {
    "tool.unknown": "tool",
    "tool.missing": "tool",
    "script.language": "script",
    "expression.foreign": "script",
    "task.role_unknown": "group",
    "decision.unpublished": "decision",
    "decision.version_unknown": "decision",
}

#: Kept elements by their BPMN name, as the report names one and several.
_KEPT_NAMES = {
    "laneSet": ("lane set", "lane sets"),
    "dataObject": ("data object", "data objects"),
    "dataObjectReference": ("data object reference", "data object references"),
    "dataStore": ("data store", "data stores"),
    "dataStoreReference": ("data store reference", "data store references"),
    "textAnnotation": ("text annotation", "text annotations"),
    "association": ("association", "associations"),
    "group": ("group", "groups"),
    "category": ("category", "categories"),
    "itemDefinition": ("item definition", "item definitions"),
    "ioSpecification": ("input/output specification", "input/output specifications"),
    "property": ("property", "properties"),
    "dataInputAssociation": ("data input association", "data input associations"),
    "dataOutputAssociation": ("data output association", "data output associations"),
    "participant": ("pool", "pools"),
    "messageFlow": ("message flow", "message flows"),
    "collaboration": ("collaboration", "collaborations"),
    "process": ("process of another pool", "processes of other pools"),
    "rendering": ("rendering", "renderings"),
    "message": ("message", "messages"),
    "signal": ("signal", "signals"),
    "error": ("error", "errors"),
    "escalation": ("escalation", "escalations"),
    "resource": ("resource", "resources"),
    "correlationProperty": ("correlation property", "correlation properties"),
    "performer": ("performer", "performers"),
    "humanPerformer": ("human performer", "human performers"),
    "potentialOwner": ("potential owner", "potential owners"),
    "resourceRole": ("resource role", "resource roles"),
}
_FOREIGN = ("other vendor's extension", "other vendors' extensions")


def _kept_words(tag: str) -> tuple[str, str]:
    if tag in _KEPT_NAMES:
        return _KEPT_NAMES[tag]
    if "}" in tag:
        return _FOREIGN
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in tag).strip()
    return words, words + ("es" if words.endswith("s") else "s")


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


#: Where an element is drawn: moving it settles nothing.
_LAYOUT = {"position", "size", "waypoints", "label", "_di"}


def fingerprints(doc: dict[str, Any]) -> dict[str, str]:
    """A hash of each node and flow as imported, to tell later which ones a person changed."""
    return {
        element_id: content_hash({k: v for k, v in element.items() if k not in _LAYOUT})
        for name in ("nodes", "flows")
        for element_id, element in doc.get(name, {}).items()
        if isinstance(element, dict)
    }


def changed_since(stored: dict[str, str], doc: dict[str, Any]) -> set[str]:
    """The elements of `stored` fingerprints that `doc` no longer has as imported (edited or
    deleted): what the import said about them is settled or out of date."""
    now = fingerprints(doc)
    return {element_id for element_id, digest in stored.items() if now.get(element_id) != digest}


def element_names(doc: dict[str, Any]) -> dict[str, str]:
    """Each node and flow as a person reads it: a node by its title, an untitled one by its kind
    and a neighbour ("Exclusive gateway after 'Check'"); a flow by its title and "A → B"."""
    nodes = doc.get("nodes", {})
    flows = doc.get("flows", {})
    ins: dict[str, list[str]] = {}
    outs: dict[str, list[str]] = {}
    for flow in flows.values():
        outs.setdefault(flow.get("source", ""), []).append(flow.get("target", ""))
        ins.setdefault(flow.get("target", ""), []).append(flow.get("source", ""))

    def kind_of(node_id: str) -> str:
        kind = KINDS.get((nodes.get(node_id) or {}).get("kind", ""))
        return kind.label if kind else "Node"

    def title(node_id: str) -> str:
        return str((nodes.get(node_id) or {}).get("title") or "")

    names: dict[str, str] = {}
    for node_id in nodes:
        if title(node_id):
            names[node_id] = title(node_id)
            continue
        names[node_id] = kind_of(node_id)
        for word, others in (("after", ins.get(node_id, [])), ("before", outs.get(node_id, []))):
            if len(others) == 1:
                other = others[0]
                shown = f"'{title(other)}'" if title(other) else kind_of(other).lower()
                names[node_id] = f"{kind_of(node_id)} {word} {shown}"
                break
    for flow_id, flow in flows.items():
        source, target = flow.get("source", ""), flow.get("target", "")
        route = f"{names.get(source, source)} → {names.get(target, target)}"
        names[flow_id] = f"'{flow['title']}' ({route})" if flow.get("title") else route
    return names


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
        found.append(f"form with {plural(len(form['fields']), 'field')}: {keys}")
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
        ("decision", "evaluates decision"),
    ):
        if config.get(key) not in (None, ""):
            found.append(f"{label} {config[key]}")
    return found


def kept_counts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """How many elements of each modelling-only type the document keeps (diagram shapes aside)."""
    counts: Counter[tuple[str, str]] = Counter()
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
            counts[_kept_words(tag)] += 1
    return [
        {"what": words[0] if n == 1 else words[1], "count": n}
        for words, n in sorted(counts.items(), key=lambda item: item[0][1])
    ]


def needs_a_person(problems: list[Problem]) -> dict[str, list[Problem]]:
    """The draft's errors by the edit they need: tool, script, group, decision, other (in that
    order)."""
    groups: dict[str, list[Problem]] = {
        "tool": [],
        "script": [],
        "group": [],
        "decision": [],
        "other": [],
    }
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


def retool(doc: dict[str, Any], tasks: list[str], tool: str) -> dict[str, Any]:
    """`doc` with the nodes `tasks` calling `tool`; their inputs stay for the person to check."""
    for node_id in tasks:
        node = doc.get("nodes", {}).get(node_id)
        if isinstance(node, dict):
            node["config"] = {**_mapping(node.get("config")), "tool": tool}
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
