"""Loading processes for the designer: partition checks (404), the revision an edit is based on."""

from __future__ import annotations

from typing import Any

from flask import abort, request
from flask_login import current_user
from sqlalchemy import select
from wtforms.fields.choices import SelectChoice

from webapp.extensions import db
from webapp.models import Partition, Process
from webapp.permissions import can, visible_partition_ids
from webapp.services import processes
from webapp.web.access import require


def load_process(process_id: int, *, lock: bool = False, permission: str = "processes.edit"):
    """The process, or 404 when it does not exist or lies in a partition the user cannot see.

    With `lock` the row is locked for the rest of the transaction (a read-check-write save).
    """
    process = processes.lock_process(process_id) if lock else db.session.get(Process, process_id)
    if process is None:
        abort(404)
    require(permission, process.partition_id)
    return process


def base_revision(source: Any = None) -> int:
    """The draft revision the client edited, from a form field or the `X-Draft-Revision` header."""
    values = request.form if source is None else source
    raw = request.headers.get("X-Draft-Revision") or values.get("revision", "")
    try:
        return int(raw)
    except (TypeError, ValueError):
        abort(400, "The request does not say which draft revision it was based on.")


def partition_choices() -> list[SelectChoice]:
    """Partitions a new process may be put in: the user's own; admins also get 'no partition'."""
    ids = visible_partition_ids(current_user)
    query = select(Partition).order_by(Partition.name)
    if ids is not None:
        query = query.where(Partition.id.in_(sorted(ids)))
    choices = [SelectChoice(str(p.id), p.name) for p in db.session.scalars(query)]
    if ids is None or not choices:
        choices.insert(0, SelectChoice("", "No partition (visible to every modeller)"))
    return choices


def can_publish(process: Process) -> bool:
    return can(current_user, "processes.publish", process.partition_id)
