"""Names for the ids operations tables show: process names, partition names and node titles.

Each function reads what one page needs in one query, so a table of 25 or 100 rows costs one
lookup per kind of label, not one per row.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select

from webapp.extensions import db
from webapp.models import Partition, Process, ProcessVersion
from webapp.permissions import partition_filter
from webapp.process.naming import Namer

Titles = dict[str, str]


def process_names(keys: Iterable[str | None]) -> dict[str, str]:
    """{process key: process name} for the given keys."""
    wanted = sorted({key for key in keys if key})
    if not wanted:
        return {}
    rows = db.session.execute(select(Process.key, Process.name).where(Process.key.in_(wanted)))
    return {key: name for key, name in rows}


def visible_partitions(user: object) -> list[tuple[str, str]]:
    """(key, name) of the partitions the user may see, by name: what partition choosers list."""
    rows = db.session.execute(
        select(Partition.key, Partition.name)
        .where(partition_filter(Partition.id, user))
        .order_by(Partition.name, Partition.key)
    )
    return [(key, name) for key, name in rows]


def partition_names(ids: Iterable[int | None]) -> dict[int, str]:
    """{partition id: partition name} for the given ids."""
    wanted = sorted({i for i in ids if i is not None})
    if not wanted:
        return {}
    rows = db.session.execute(select(Partition.id, Partition.name).where(Partition.id.in_(wanted)))
    return {partition_id: name for partition_id, name in rows}


def _titles(document: object) -> Titles:
    """Each node's title, else what it is and where ("the end event after 'Approve'")."""
    nodes = document.get("nodes") if isinstance(document, dict) else None
    if not isinstance(nodes, dict):
        return {}
    flows = document.get("flows") if isinstance(document, dict) else None
    return Namer(nodes, flows if isinstance(flows, dict) else {}).labels()


def version_titles(version_ids: Iterable[int | None]) -> dict[int, Titles]:
    """{version id: {node id: label}} for the given versions (see `_titles`)."""
    wanted = sorted({i for i in version_ids if i is not None})
    if not wanted:
        return {}
    rows = db.session.execute(
        select(ProcessVersion.id, ProcessVersion.document).where(ProcessVersion.id.in_(wanted))
    )
    return {version_id: _titles(document) for version_id, document in rows}


def process_titles(keys: Iterable[str | None]) -> dict[str, Titles]:
    """{process key: {node id: label}} over all versions of each process, the newest label
    winning: for rows grouped by process rather than by version."""
    wanted = sorted({key for key in keys if key})
    if not wanted:
        return {}
    rows = db.session.execute(
        select(Process.key, ProcessVersion.document)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key.in_(wanted))
        .order_by(ProcessVersion.number)
    )
    found: dict[str, Titles] = {}
    for key, document in rows:
        found.setdefault(key, {}).update(_titles(document))
    return found


def process_partitions(keys: Iterable[str | None]) -> dict[str, str]:
    """{process key: name of the partition it belongs to} for processes in a partition."""
    wanted = sorted({key for key in keys if key})
    if not wanted:
        return {}
    rows = db.session.execute(
        select(Process.key, Partition.name)
        .join(Partition, Partition.id == Process.partition_id)
        .where(Process.key.in_(wanted))
    )
    return {key: name for key, name in rows}
