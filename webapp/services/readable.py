"""Instance data as a person reads it: form labels and option labels instead of keys and raw
values, nested objects and lists as nested facts rather than JSON.

Labels come from the form specs of the steps that saved the data: the start form for the input,
the form of each user task for the variable its `saveTo` names (and, in a pooled process, for
the answers merged into the variables key by key).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from webapp.process import forms
from webapp.process.document import plain_start

MAX_DEPTH = 4
MAX_ITEMS = 50


@dataclass(frozen=True)
class Fact:
    """One labelled value; `items` holds the parts of an object or a list of objects."""

    label: str
    text: str = ""
    items: tuple[Fact, ...] = field(default=())


def humanize(key: str) -> str:
    """A data key as words: `unit_price` and `unitPrice` both read "Unit price"."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(key)).replace("_", " ").replace("-", " ")
    words = " ".join(words.split()).lower()
    return words[:1].upper() + words[1:] if words else str(key)


def _option_label(spec: Mapping[str, Any], value: Any) -> str:
    for option in spec.get("options") or []:
        if isinstance(option, Mapping) and option.get("value") == value:
            return str(option.get("label") or forms.display_text(value))
        if option == value:
            return forms.display_text(value)
    return forms.display_text(value)


def field_text(spec: Mapping[str, Any], value: Any) -> str:
    """A submitted value as the form showed it: option labels, Yes/No, whole numbers plain."""
    kind = spec.get("type")
    if kind in ("select", "radio"):
        return _option_label(spec, value)
    if kind == "multiselect" and isinstance(value, list):
        return ", ".join(_option_label(spec, item) for item in value)
    return forms.display_text(value)


def value_fact(label: str, value: Any, depth: int = 0) -> Fact:
    """`value` under `label`: objects and lists of objects become nested facts."""
    if depth >= MAX_DEPTH and isinstance(value, (dict, list)):
        return Fact(label, json.dumps(value, ensure_ascii=False, default=str)[:200])
    if isinstance(value, Mapping):
        return Fact(
            label,
            items=tuple(value_fact(humanize(k), v, depth + 1) for k, v in value.items()),
        )
    if isinstance(value, list) and any(isinstance(item, (dict, list)) for item in value):
        return Fact(
            label,
            items=tuple(
                value_fact(f"{index}.", item, depth + 1)
                for index, item in enumerate(value[:MAX_ITEMS], start=1)
            ),
        )
    return Fact(label, forms.display_text(value))


def form_facts(spec: Any, values: Any, label: str = "") -> list[Fact]:
    """The values a form saved, labelled by its fields in form order (keys it does not know
    after them); a list of such values (one per multi-instance run) as numbered groups."""
    if isinstance(values, list) and values and all(isinstance(v, Mapping) for v in values):
        return [
            Fact(f"{index}.", items=tuple(form_facts(spec, item)))
            for index, item in enumerate(values[:MAX_ITEMS], start=1)
        ]
    if not isinstance(values, Mapping):
        return [value_fact(label, values)]
    known = {item["key"]: item for item in forms.iter_fields(spec) if item.get("key")}
    facts = [
        _field_fact(known[key], values[key])
        for key in known
        if key in values and known[key]["type"] != "display"
    ]
    facts += [value_fact(humanize(key), value) for key, value in values.items() if key not in known]
    return facts


def _field_fact(spec: Mapping[str, Any], value: Any) -> Fact:
    if isinstance(value, (dict, list)) and spec.get("type") != "multiselect":
        return value_fact(forms.field_label(spec), value)
    return Fact(forms.field_label(spec), field_text(spec, value))


def _forms(document: Mapping[str, Any]) -> list[tuple[dict[str, Any], Mapping[str, Any]]]:
    """(node, its form spec) for every node of the document that has a form."""
    found = []
    for node in (document.get("nodes") or {}).values():
        spec = (node.get("config") or {}).get("form")
        if isinstance(spec, Mapping) and isinstance(spec.get("fields"), list):
            found.append((node, spec))
    return found


def start_form(document: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The form of the process's plain start event, if it has one."""
    start = plain_start(document)
    spec = (start.get("config") or {}).get("form") if start else None
    return spec if isinstance(spec, Mapping) and isinstance(spec.get("fields"), list) else None


def input_facts(document: Mapping[str, Any], data: Mapping[str, Any] | None) -> list[Fact]:
    """An instance's start input, labelled by the start form."""
    if not data:
        return []
    return form_facts(start_form(document), data)


def variable_facts(document: Mapping[str, Any], data: Mapping[str, Any] | None) -> list[Fact]:
    """An instance's variables: one group per user task's `saveTo` (titled by the task, its
    answers labelled by its form), other keys labelled by any form field of that key."""
    if not data:
        return []
    saved: dict[str, tuple[str, Mapping[str, Any]]] = {}
    fields: dict[str, Mapping[str, Any]] = {}
    for node, spec in _forms(document):
        target = (node.get("config") or {}).get("saveTo")
        if isinstance(target, str) and target and node.get("kind") != "startEvent":
            saved.setdefault(target, (node.get("title") or humanize(target), spec))
        for item in forms.iter_fields(spec):
            if item.get("key") and item["type"] != "display":
                fields.setdefault(item["key"], item)
    facts = []
    for key, value in data.items():
        if key in saved:
            title, spec = saved[key]
            facts.append(Fact(title, items=tuple(form_facts(spec, value, title))))
        elif key in fields:
            facts.append(_field_fact(fields[key], value))
        else:
            facts.append(value_fact(humanize(key), value))
    return facts


def result_text(spec: Any, values: Mapping[str, Any] | None) -> str:
    """A task's submitted values on one line ("Decision: Approve; Amount: 30")."""
    return "; ".join(_flat(fact) for fact in form_facts(spec, values or {}))


def _flat(fact: Fact) -> str:
    if fact.items:
        return f"{fact.label}: " + ", ".join(_flat(item) for item in fact.items)
    return f"{fact.label}: {fact.text}"
