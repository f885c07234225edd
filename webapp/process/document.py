"""The process document: a JSON-shaped dict of nodes and flows, and the helpers every module shares.

``normalize`` fills defaults and checks the structure (raising ``DocumentError``),
``canonical_json`` and ``content_hash`` give a stable serialisation, ``upgrade`` migrates formats.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any, TypeGuard

from webapp.process.kinds import SCOPE_KINDS, default_size

CURRENT_FORMAT_VERSION = 1
MAX_DOCUMENT_BYTES = 5_000_000

ID_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]
# Maps a format version to the function that turns a document of that version into the next one.
UPGRADES: dict[int, Upgrade] = {}


class DocumentError(ValueError):
    """A document that is not structurally a process document; names the offending element/field."""

    def __init__(
        self,
        message: str,
        *,
        element_id: str | None = None,
        field: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.element_id = element_id
        self.field = field
        self.line = line
        self.column = column


#: The document setting `"variables": "pool"`: start input, form answers, message and signal
#: payloads and tool results all land in `$vars`, as in Camunda, Flowable and SpiffWorkflow.
VARIABLES_POOL = "pool"


#: Kinds whose output stays out of the pool: a call or sub-process returns only what its mappings
#: name.
UNPOOLED_KINDS = frozenset({"callActivity", "subProcess", "eventSubProcess", "transaction"})


def uses_pool(doc: Mapping[str, Any]) -> bool:
    """Whether the process reads one pool of process variables (see VARIABLES_POOL)."""
    return doc.get("variables") == VARIABLES_POOL


def is_valid_id(value: object) -> TypeGuard[str]:
    """Tell whether ``value`` is a usable node/flow id (XML NCName-like)."""
    return isinstance(value, str) and ID_RE.fullmatch(value) is not None


def is_identifier(value: object) -> TypeGuard[str]:
    """Tell whether ``value`` is a plain identifier (``saveTo`` names, form field keys)."""
    return isinstance(value, str) and IDENTIFIER_RE.fullmatch(value) is not None


def _type_name(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


class _NotJson(Exception):
    pass


def _fast_copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        for key in value:
            if type(key) is not str:
                raise _NotJson
        return {key: _fast_copy(item) for key, item in value.items()}
    if kind is list:
        return [_fast_copy(item) for item in value]
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float and math.isfinite(value):
        return value
    raise _NotJson


def _shallow_copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value


def _json_copy(value: Any, where: str, element_id: str | None, deep: bool = True) -> Any:
    """Copy a JSON value (one level unless ``deep``), rejecting what JSON cannot represent."""
    try:
        return _fast_copy(value) if deep else _shallow_copy(value)
    except (_NotJson, RecursionError):
        pass
    if isinstance(value, str | bool) or value is None:
        return value
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise DocumentError(f"{where} is not a finite number", element_id=element_id)
        return value
    if isinstance(value, dict):
        copied = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise DocumentError(f"{where} has a non-string key {key!r}", element_id=element_id)
            copied[key] = _json_copy(item, f"{where}.{key}", element_id)
        return copied
    if isinstance(value, list | tuple):
        return [_json_copy(item, f"{where}[{i}]", element_id) for i, item in enumerate(value)]
    raise DocumentError(f"{where} is {_type_name(value)}, not a JSON value", element_id=element_id)


def _number(value: Any, where: str, element_id: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DocumentError(
            f"{where} must be a number, not {_type_name(value)}", element_id=element_id
        )
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _expect(value: Any, types: type | tuple[type, ...], where: str, element_id: str | None) -> None:
    if not isinstance(value, types):
        what = {dict: "an object", str: "a string", list: "a list", bool: "true or false"}
        wanted = what.get(types, "a valid value") if isinstance(types, type) else "a valid value"
        raise DocumentError(
            f"{where} must be {wanted}, not {_type_name(value)}",
            element_id=element_id,
            field=where,
        )


def _normalize_position(position: Any, kind: str, node_id: str) -> dict[str, Any]:
    where = f"Node '{node_id}' position"
    _expect(position, dict, where, node_id)
    result = _json_copy(position, where, node_id)
    for axis in ("x", "y"):
        if axis not in position:
            raise DocumentError(f"{where} has no '{axis}'", element_id=node_id, field="position")
        result[axis] = _number(position[axis], f"{where} '{axis}'", node_id)
    width, height = default_size(kind)
    for name, default in (("width", width), ("height", height)):
        value = position.get(name)
        if value is None:
            result[name] = default
            continue
        result[name] = _number(value, f"{where} '{name}'", node_id)
        if result[name] <= 0:
            raise DocumentError(f"{where} '{name}' must be positive", element_id=node_id)
    return result


def _normalize_node(node_id: str, node: Any, deep: bool) -> dict[str, Any]:
    where = f"Node '{node_id}'"
    _expect(node, dict, where, node_id)
    result = _json_copy(node, where, node_id, deep)
    kind = node.get("kind")
    if not isinstance(kind, str) or not kind:
        raise DocumentError(f"{where} has no kind", element_id=node_id, field="kind")
    title = node.get("title")
    result["title"] = "" if title is None else title
    _expect(result["title"], str, f"{where} title", node_id)
    config = node.get("config")
    _expect({} if config is None else config, dict, f"{where} config", node_id)
    result["config"] = {} if config is None else result["config"] if deep else dict(config)
    if node.get("position") is not None:
        result["position"] = _normalize_position(node["position"], kind, node_id)
    else:
        result.pop("position", None)
    if node.get("parent") is None:
        result.pop("parent", None)
    elif not isinstance(node["parent"], str) or not node["parent"]:
        raise DocumentError(
            f"{where} parent must name a sub-process, not {_type_name(node['parent'])}",
            element_id=node_id,
            field="parent",
        )
    return result


def _check_parents(nodes: Mapping[str, Mapping[str, Any]]) -> None:
    """Every ``parent`` names an existing node of a scope kind, and no node contains itself."""
    for node_id, node in nodes.items():
        parent = node.get("parent")
        if parent is None:
            continue
        container = nodes.get(parent)
        if container is None:
            raise DocumentError(
                f"Node '{node_id}' has parent '{parent}', which is not a node of the process",
                element_id=node_id,
                field="parent",
            )
        if container.get("kind") not in SCOPE_KINDS:
            raise DocumentError(
                f"Node '{node_id}' has parent '{parent}', a {container.get('kind')}; only "
                f"{' and '.join(SCOPE_KINDS)} nodes can hold other nodes",
                element_id=node_id,
                field="parent",
            )
    done: set[str] = set()
    for node_id in nodes:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = node_id
        while current is not None and current not in done:
            if current in on_path:
                raise DocumentError(
                    f"Node '{current}' is inside itself (its parents form a cycle)",
                    element_id=current,
                    field="parent",
                )
            path.append(current)
            on_path.add(current)
            current = nodes[current].get("parent")
        done.update(path)


def _normalize_flow(flow_id: str, flow: Any, deep: bool) -> dict[str, Any]:
    where = f"Flow '{flow_id}'"
    _expect(flow, dict, where, flow_id)
    result = _json_copy(flow, where, flow_id, deep)
    for end in ("source", "target"):
        value = flow.get(end)
        if not isinstance(value, str) or not value:
            raise DocumentError(f"{where} has no {end}", element_id=flow_id, field=end)
    title = flow.get("title")
    result["title"] = "" if title is None else title
    _expect(result["title"], str, f"{where} title", flow_id)
    condition = flow.get("condition")
    if condition is not None:
        _expect(condition, str, f"{where} condition", flow_id)
        condition = condition.strip() or None
    result["condition"] = condition
    default = flow.get("default")
    result["default"] = False if default is None else default
    _expect(result["default"], bool, f"{where} default", flow_id)
    waypoints = flow.get("waypoints")
    result["waypoints"] = [] if waypoints is None else waypoints
    _expect(result["waypoints"], list, f"{where} waypoints", flow_id)
    points = []
    for i, point in enumerate(result["waypoints"]):
        _expect(point, dict, f"{where} waypoint {i + 1}", flow_id)
        points.append(
            {
                **point,
                "x": _number(point.get("x"), f"{where} waypoint {i + 1} 'x'", flow_id),
                "y": _number(point.get("y"), f"{where} waypoint {i + 1} 'y'", flow_id),
            }
        )
    result["waypoints"] = points
    return result


def normalize(doc: Any, *, deep: bool = True) -> dict[str, Any]:
    """Return a checked deep copy of ``doc`` with defaults filled, so equal documents compare equal.

    Fills title ``""``, config ``{}``, condition ``None`` (blank conditions too), default ``False``,
    waypoints ``[]`` and shape sizes per kind; integral float coordinates become ints; drops a
    ``None`` parent and refuses a parent that is not a sub-process of the document. With
    ``deep=False`` nested config values are shared with ``doc`` (for read-only callers).
    """
    _expect(doc, dict, "The process document", None)
    result = {
        key: _json_copy(value, f"The document's {key}", None, deep)
        for key, value in doc.items()
        if key not in ("nodes", "flows")
    }
    version = doc.get("format_version", CURRENT_FORMAT_VERSION)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DocumentError(
            "format_version must be a positive whole number", field="format_version"
        )
    result["format_version"] = version
    for name in ("key", "name"):
        if doc.get(name) is not None:
            _expect(doc[name], str, f"The document {name}", None)
    if doc.get("variables") not in (None, VARIABLES_POOL):
        raise DocumentError(
            f"variables must be '{VARIABLES_POOL}' or absent, not {doc['variables']!r}"[:200],
            field="variables",
        )
    nodes = doc.get("nodes")
    flows = doc.get("flows")
    _expect({} if nodes is None else nodes, dict, "The document's nodes", None)
    _expect({} if flows is None else flows, dict, "The document's flows", None)
    result["nodes"] = {nid: _normalize_node(nid, n, deep) for nid, n in (nodes or {}).items()}
    result["flows"] = {fid: _normalize_flow(fid, f, deep) for fid, f in (flows or {}).items()}
    _check_parents(result["nodes"])
    return result


_dumps = partial(json.dumps, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(doc: Mapping[str, Any]) -> str:
    """Serialise ``doc`` with record keys sorted but ``nodes``/``flows`` kept in document order."""
    _expect(doc, dict, "The process document", None)
    parts = []
    for key in sorted(doc):
        value = doc[key]
        if key in ("nodes", "flows") and isinstance(value, dict):
            items = ",".join(f"{_dumps(k)}:{_dumps(v, sort_keys=True)}" for k, v in value.items())
            encoded = "{" + items + "}"
        else:
            encoded = _dumps(value, sort_keys=True)
        parts.append(f"{_dumps(key)}:{encoded}")
    return "{" + ",".join(parts) + "}"


def content_hash(doc: Mapping[str, Any]) -> str:
    """Return the sha256 hex of ``canonical_json(doc)``; normalize first for stable hashes."""
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def upgrade(doc: Mapping[str, Any]) -> dict[str, Any]:
    """Bring ``doc`` to ``CURRENT_FORMAT_VERSION`` via ``UPGRADES``; the input is not modified."""
    _expect(doc, dict, "The process document", None)
    version = doc.get("format_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise DocumentError(
            "format_version must be a positive whole number", field="format_version"
        )
    if version > CURRENT_FORMAT_VERSION:
        raise DocumentError(
            f"The document has format version {version}, newer than this Flowdesk reads "
            f"(up to {CURRENT_FORMAT_VERSION})",
            field="format_version",
        )
    if version == CURRENT_FORMAT_VERSION:
        return {**doc, "format_version": version}
    result = json.loads(json.dumps(doc))
    while version < CURRENT_FORMAT_VERSION:
        step = UPGRADES.get(version)
        if step is None:
            raise DocumentError(f"No upgrade from format version {version}", field="format_version")
        result = step(result)
        version += 1
        result["format_version"] = version
    return result


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DocumentError(f"Duplicate key '{key}' in the document", field=key)
        result[key] = value
    return result


def _reject_constant(name: str) -> None:
    raise DocumentError(f"{name} is not allowed in a process document")


def from_json(text: str | bytes, *, max_bytes: int = MAX_DOCUMENT_BYTES) -> dict[str, Any]:
    """Parse, upgrade and normalize a JSON document; bad input raises ``DocumentError``.

    Rejects input over ``max_bytes``, duplicate keys (which would silently drop nodes) and NaN.
    """
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise DocumentError(f"The document is {size:,} bytes; the limit is {max_bytes:,}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(f"The document is not valid UTF-8 (byte {exc.start})") from None
    try:
        data = json.loads(
            text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as exc:
        raise DocumentError(
            f"Invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except RecursionError:
        raise DocumentError("The document is nested too deeply") from None
    return normalize(upgrade(data))


def plain_start(doc: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The process-level start event a person or the API starts; None when only message,
    timer or signal starts start the process."""
    for node in (doc.get("nodes") or {}).values():
        plain = not node.get("parent") and not (node.get("config") or {}).get("event")
        if node.get("kind") == "startEvent" and plain:
            return node
    return None


def outgoing(doc: Mapping[str, Any], node_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Return ``(flow_id, flow)`` pairs leaving ``node_id``, in document order."""
    return [
        (fid, flow) for fid, flow in doc.get("flows", {}).items() if flow.get("source") == node_id
    ]


def incoming(doc: Mapping[str, Any], node_id: str) -> list[tuple[str, dict[str, Any]]]:
    """Return ``(flow_id, flow)`` pairs entering ``node_id``, in document order."""
    return [
        (fid, flow) for fid, flow in doc.get("flows", {}).items() if flow.get("target") == node_id
    ]


def parent_of(doc: Mapping[str, Any], node_id: str) -> str | None:
    """Return the scope (sub-process id) holding ``node_id``; ``None`` at the process level."""
    node = doc.get("nodes", {}).get(node_id) or {}
    parent = node.get("parent")
    return parent if isinstance(parent, str) else None


def ancestors(doc: Mapping[str, Any], node_id: str) -> list[str]:
    """Return the scopes around ``node_id``, innermost first (normalize first: no cycles)."""
    chain: list[str] = []
    current = parent_of(doc, node_id)
    while current is not None and current not in chain:
        chain.append(current)
        current = parent_of(doc, current)
    return chain


def depths(doc: Mapping[str, Any]) -> dict[str, int]:
    """How many sub-processes hold each node (0 at the process level), in linear time."""
    nodes = doc.get("nodes", {})
    result: dict[str, int] = {}
    for node_id in nodes:
        path: list[str] = []
        current: str | None = node_id
        while current is not None and current not in result and current not in path:
            path.append(current)
            current = parent_of(doc, current)
            if current is not None and current not in nodes:
                current = None
        base = result.get(current, -1) if current is not None else -1
        for offset, item in enumerate(reversed(path)):
            result[item] = base + 1 + offset
    return result


def children(doc: Mapping[str, Any]) -> dict[str | None, list[str]]:
    """Map each scope id (``None``: the process level) to its node ids in document order."""
    result: dict[str | None, list[str]] = {None: []}
    for node_id in doc.get("nodes", {}):
        result.setdefault(parent_of(doc, node_id), []).append(node_id)
    return result


def element_ids(doc: Mapping[str, Any]) -> set[str]:
    """Return every node and flow id used in ``doc``."""
    return set(doc.get("nodes", {})) | set(doc.get("flows", {}))


def next_id(doc: Mapping[str, Any], prefix: str, taken: Iterable[str] = ()) -> str:
    """Return ``<prefix>_<n>`` with the smallest ``n >= 1`` unused by nodes, flows and ``taken``."""
    used = element_ids(doc) | set(taken)
    n = 1
    while f"{prefix}_{n}" in used:
        n += 1
    return f"{prefix}_{n}"


def new_document(key: str = "", name: str = "") -> dict[str, Any]:
    """Return a fresh, valid document: a start event connected to an end event."""
    return normalize(
        {
            "format_version": CURRENT_FORMAT_VERSION,
            "key": key,
            "name": name,
            "nodes": {
                "start": {"kind": "startEvent", "title": "Start", "position": {"x": 100, "y": 100}},
                "end": {"kind": "endEvent", "title": "End", "position": {"x": 300, "y": 100}},
            },
            "flows": {
                "flow_1": {
                    "source": "start",
                    "target": "end",
                    "waypoints": [{"x": 136, "y": 118}, {"x": 300, "y": 118}],
                }
            },
        }
    )
