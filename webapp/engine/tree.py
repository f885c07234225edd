"""What a token's `locals` say about its place in the token tree.

The engine writes these marks (multi-instance bodies and instances, event-sub-process listeners,
standard loops);
the pages that show tokens read them through the same functions.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def is_listener(locals_: Any) -> bool:
    """A token that only listens for an event sub-process's start; it keeps no scope alive."""
    return isinstance(locals_, dict) and bool(locals_.get("listen"))


def is_body(locals_: Any) -> bool:
    """The token of a multi-instance activity as a whole (its instances are tokens inside it)."""
    return isinstance(locals_, dict) and "count" in locals_ and "completed" in locals_


def is_looping(locals_: Any) -> bool:
    """A token running a standard loop's activity: `loop` counts the runs completed."""
    return isinstance(locals_, dict) and "loop" in locals_


def is_instance(node_id: str, locals_: Any, parent_node_id: str | None) -> bool:
    """One instance of a multi-instance activity: at the same node as its parent, the body."""
    return parent_node_id == node_id and isinstance(locals_, dict) and "index" in locals_


def loop_values(
    instance: Any, body: Any, active: int, element: str | None, variables: dict[str, Any]
) -> dict[str, Any]:
    """`$item`, `$loop` and the element variable (in `$vars`) as one instance sees them."""
    own = instance if isinstance(instance, dict) else {}
    state = body if isinstance(body, dict) else {}
    item = own.get("item")
    values: dict[str, Any] = {
        "$item": item,
        "$loop": {
            "index": own.get("index"),
            "count": state.get("count"),
            "completed": state.get("completed"),
            "active": active,
        },
    }
    if isinstance(element, str) and element:
        values["$vars"] = {**variables, element: item}
    return values


#: What a compensation handler's data snapshot holds (`$vars`, `$nodes`, `$item`, `$loop`).
SNAPSHOT_KEYS = ("vars", "nodes", "item", "loop")


def fingerprints(values: dict[str, Any]) -> dict[str, str]:
    """A short digest of each value: what a handler's start saw, to tell what it wrote since."""
    return {
        key: hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[
            :16
        ]
        for key, value in values.items()
    }


def handler_locals(snapshot: dict[str, Any], vars_: dict[str, Any], nodes: dict[str, Any]):
    """The `locals` of a compensation handler's token: the data as its activity completed, and
    fingerprints of the instance's data as the handler starts."""
    return {
        "snapshot": snapshot,
        "base": {"vars": fingerprints(vars_), "nodes": fingerprints(nodes)},
    }


def handler_context(token: Any, vars_: dict[str, Any], nodes: dict[str, Any]) -> dict[str, Any]:
    """What expressions read inside a compensation handler (nothing when `token` is in none):
    the snapshot's `$vars`, `$nodes` (and an instance's `$item`, `$loop`), with what the handler
    itself wrote since it started on top."""
    while token is not None:
        locals_ = token.locals
        if isinstance(locals_, dict) and isinstance(locals_.get("snapshot"), dict):
            break
        token = token.parent
    else:
        return {}
    snapshot, base = locals_["snapshot"], locals_.get("base") or {}
    context = {f"${key}": value for key, value in snapshot.items() if key in SNAPSHOT_KEYS}
    for name, current in (("vars", vars_), ("nodes", nodes)):
        seen = base.get(name) or {}
        now = fingerprints(current)
        written = {key: value for key, value in current.items() if seen.get(key) != now[key]}
        context[f"${name}"] = {**(snapshot.get(name) or {}), **written}
    return context
