"""Where a node or token sits in a structured process, in words people read: the titles of the
sub-processes around it, and for one instance of a multi-instance activity its element and
position ("reviewer: ann (2 of 3)"). Shared by operations pages and the inbox."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select

from webapp.engine import tree
from webapp.extensions import db
from webapp.models import ProcessVersion, Token
from webapp.models.statuses import LIVE_TOKEN
from webapp.process.document import ancestors

MAX_ITEM = 60
SEPARATOR = " \u203a "  # a single right-pointing angle quotation mark between scope titles
# Deeper than any scope chain the engine runs (sub-processes nest, calls do not add depth here).
MAX_LEVELS = 64


def _nodes(document: Any) -> Mapping[str, Any]:
    nodes = document.get("nodes") if isinstance(document, Mapping) else None
    return nodes if isinstance(nodes, Mapping) else {}


def title(document: Any, node_id: str | None) -> str:
    """A node's title, or its id when it has none."""
    node = _nodes(document).get(node_id or "")
    if isinstance(node, Mapping) and node.get("title"):
        return str(node["title"])
    return node_id or ""


def scope_ids(document: Any, node_id: str | None) -> list[str]:
    """The ids of the sub-processes around `node_id`, outermost first (empty at the top)."""
    if not _nodes(document) or not node_id:
        return []
    return list(reversed(ancestors(document, node_id)))


def scope_text(document: Any, node_id: str | None) -> str:
    """The titles of the sub-processes around a node, outermost first, joined by a chevron;
    "" at the process level."""
    return SEPARATOR.join(title(document, scope) for scope in scope_ids(document, node_id))


def scopes_by_node(document: Any) -> dict[str, str]:
    """{node id: scope text} for every node inside a sub-process."""
    return {
        node_id: text for node_id in _nodes(document) if (text := scope_text(document, node_id))
    }


def element_text(value: Any) -> str:
    """A multi-instance element as a short text: strings as they are, others as compact JSON."""
    if isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= MAX_ITEM else text[: MAX_ITEM - 1] + "…"


@dataclass(frozen=True)
class Place:
    """Where one token stands: the scopes around it (with their instance numbers) and, inside a
    multi-instance activity, its element and position."""

    scope: str = ""
    index: int | None = None
    count: int | None = None
    item: Any = None
    element: str = ""  # the element variable's name ("reviewer"), when the node names one

    @property
    def position(self) -> str:
        """ "2 of 3" for the second of three instances; "" outside a multi-instance."""
        if self.index is None:
            return ""
        return f"{self.index + 1} of {self.count}" if self.count else f"{self.index + 1}"

    def label(self, title: str) -> str:
        """A task's title with its element: "Review — reviewer: ann (2 of 3)"."""
        if self.index is None:
            return title
        element = self.element_label
        return f"{title} — {element} ({self.position})" if element else f"{title} ({self.position})"

    @property
    def element_label(self) -> str:
        """ "reviewer: ann" (or the bare element without a variable name); "" when none."""
        if self.index is None or self.item is None:
            return ""
        shown = element_text(self.item)
        return f"{self.element}: {shown}" if self.element else shown


@dataclass
class TokenInfo:
    id: int
    node_id: str
    parent_id: int | None
    locals: dict[str, Any] | None


def _is_inner(token: TokenInfo, parent: TokenInfo | None) -> bool:
    return parent is not None and tree.is_instance(token.node_id, token.locals, parent.node_id)


def place_of(document: Any, token_id: int | None, tokens: Mapping[int, TokenInfo]) -> Place:
    """The place of `token_id` from the tokens around it (its ancestors must be in `tokens`)."""
    token = tokens.get(token_id) if token_id is not None else None
    if token is None:
        return Place()
    parent = tokens.get(token.parent_id) if token.parent_id is not None else None
    index = count = item = None
    element = ""
    if _is_inner(token, parent) and parent is not None:
        index = int((token.locals or {}).get("index") or 0)
        count = (parent.locals or {}).get("count")
        item = (token.locals or {}).get("item")
        element = _element_name(document, token.node_id)
        parent = tokens.get(parent.parent_id) if parent.parent_id is not None else None
    labels: list[str] = []
    seen: set[int] = set()
    while parent is not None and parent.id not in seen and len(labels) < MAX_LEVELS:
        seen.add(parent.id)
        above = tokens.get(parent.parent_id) if parent.parent_id is not None else None
        label = title(document, parent.node_id)
        if _is_inner(parent, above) and above is not None:
            number = int((parent.locals or {}).get("index") or 0) + 1
            total = (above.locals or {}).get("count")
            label += f" ({number} of {total})" if total else f" ({number})"
            above = tokens.get(above.parent_id) if above.parent_id is not None else None
        labels.append(label)
        parent = above
    return Place(SEPARATOR.join(reversed(labels)), index, count, item, element)


def _element_name(document: Any, node_id: str) -> str:
    node = _nodes(document).get(node_id)
    config = node.get("config") if isinstance(node, Mapping) else None
    settings = config.get("multiInstance") if isinstance(config, Mapping) else None
    name = settings.get("element") if isinstance(settings, Mapping) else None
    return name if isinstance(name, str) else ""


def load_tokens(token_ids: Iterable[int | None]) -> dict[int, TokenInfo]:
    """The tokens `token_ids` and all their ancestors, one query per level of nesting."""
    found: dict[int, TokenInfo] = {}
    wanted = {i for i in token_ids if i is not None}
    while wanted and len(found) < 100_000:
        rows = db.session.execute(
            select(Token.id, Token.node_id, Token.parent_id, Token.locals).where(
                Token.id.in_(sorted(wanted))
            )
        )
        wanted = set()
        for row in rows:
            found[row.id] = TokenInfo(row.id, row.node_id, row.parent_id, row.locals)
            if row.parent_id is not None and row.parent_id not in found:
                wanted.add(row.parent_id)
    return found


def task_places(tasks: Iterable[Any]) -> dict[int, Place]:
    """{task id: Place} for tasks (with `id`, `token_id`, `instance.version_id`): the scope and
    multi-instance element of each, reading each version's document once, and only for tasks
    inside a scope (a task at the process level has no place to name)."""
    tasks = list(tasks)
    if not tasks:
        return {}
    tokens = load_tokens(task.token_id for task in tasks)
    version_ids = sorted(
        {
            task.instance.version_id
            for task in tasks
            if (token := tokens.get(task.token_id)) is not None and token.parent_id is not None
        }
    )
    documents: dict[int, Any] = {}
    if version_ids:
        documents = dict(
            db.session.execute(
                select(ProcessVersion.id, ProcessVersion.document).where(
                    ProcessVersion.id.in_(version_ids)
                )
            ).all()
        )
    return {
        task.id: place_of(documents.get(task.instance.version_id), task.token_id, tokens)
        for task in tasks
    }


def task_context(task: Any, base: dict[str, Any]) -> dict[str, Any]:
    """The expression context of a task's form: the instance's (`base`), and inside a
    multi-instance activity also `$item`, `$loop` and the element variable, as the engine
    gives them to the task's own expressions."""
    tokens = load_tokens([task.token_id])
    token = tokens.get(task.token_id)
    parent = tokens.get(token.parent_id) if token and token.parent_id is not None else None
    if token is None or parent is None or not _is_inner(token, parent):
        return base
    active = db.session.scalar(
        select(func.count())
        .select_from(Token)
        .where(Token.parent_id == parent.id, Token.status.in_(LIVE_TOKEN))
    )
    element = _element_name(task.instance.process_version.document, token.node_id)
    variables = base.get("$vars") or {}
    return {
        **base,
        **tree.loop_values(token.locals, parent.locals, active or 0, element, variables),
    }
