"""The instance list: filters read from the query string, checked, and turned into one query.

Each filter narrows with an indexed column (see models/operations.py), so any single filter
keeps a page at a few index lookups; the data filter is translated to SQL by `varfilter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, false, select

from webapp.extensions import db
from webapp.inputs import MAX_INT32, MAX_INT64, text_problem, whole_number
from webapp.models import Instance, Partition, Process, ProcessVersion, User
from webapp.models.statuses import INSTANCE_STATUSES, UNFINISHED_INSTANCE
from webapp.permissions import partition_filter
from webapp.services.operations import labels, structure
from webapp.services.operations.common import (
    OperationsError,
    dialect,
    names_by_id,
    unindexed,
    visible,
)
from webapp.services.operations.keyset import Cursor, KeysetPage, Window, keyset_page
from webapp.services.operations.varfilter import FilterError, translate

MAX_TEXT = 200
MAX_EXPRESSION = 500
WINDOW = 2_000  # rows read in date order before a JSON filter falls back to a table scan
COLUMNS = (
    Instance.id,
    Instance.process_key,
    Instance.version,
    Instance.version_id,
    Instance.status,
    Instance.business_key,
    Instance.partition_id,
    Instance.started_by_id,
    Instance.error,
    Instance.created_at,
    Instance.updated_at,
    Instance.ended_at,
    Instance.parent_id,
    Instance.suspended_at,
)


@dataclass(frozen=True)
class Filters:
    """What the list is narrowed by; empty strings mean "any"."""

    process: str = ""
    version: str = ""
    status: str = ""
    partition: str = ""
    business_key: str = ""
    started_by: str = ""
    since: str = ""
    until: str = ""
    data: str = ""
    error_node: str = ""
    error_code: str = ""
    parent: str = ""  # "called by": the id of the instance whose call activities started them
    top: str = ""  # "1": only instances no call activity started (hide called children)
    suspended: str = ""  # "1": only suspended instances; "0": only those not suspended

    def args(self) -> dict[str, str]:
        """The non-empty filters, for links and hidden form fields."""
        return {key: value for key, value in asdict(self).items() if value}

    def describe(self) -> str:
        named = {"parent": "called by instance", "top": ""}
        fixed = {
            "top": "not called by another instance",
            "suspended": "suspended" if self.suspended == "1" else "not suspended",
        }
        parts = [
            fixed[key] if key in fixed else f"{named.get(key, key.replace('_', ' '))} {value}"
            for key, value in self.args().items()
        ]
        return "; ".join(parts) if parts else "all instances"


def read_filters(args: Mapping[str, Any]) -> Filters:
    """Filters from request arguments, trimmed and cut to a sane length (checked by `query`)."""
    values = {}
    for field in fields(Filters):
        raw = args.get(field.name) or ""
        limit = MAX_EXPRESSION if field.name == "data" else MAX_TEXT
        values[field.name] = str(raw).strip()[: limit + 1]
    return Filters(**values)


def _day(text: str, name: str, problems: dict[str, str]) -> datetime | None:
    if not text:
        return None
    try:
        day = date.fromisoformat(text)
    except ValueError:
        problems[name] = "Use a date like 2026-01-31."
        return None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


Clauses = list[ColumnElement[bool]]


def conditions(user: User, filters: Filters) -> tuple[Clauses, Clauses]:
    """The WHERE clauses of the filters: those an index serves, and those on JSON data that must
    read each row. OperationsError (422) names every bad field."""
    problems: dict[str, str] = {}
    where: Clauses = [visible(user)]
    scanned: Clauses = []
    for name, value in filters.args().items():
        problem = text_problem(value)
        if problem:  # a text no query can carry: reported, then left out of the query
            problems[name] = problem
            filters = replace(filters, **{name: ""})
        elif name != "data" and len(value) > MAX_TEXT:
            problems[name] = f"Use at most {MAX_TEXT} characters."
    if filters.status:
        if filters.status not in INSTANCE_STATUSES:
            problems["status"] = f"Use one of {', '.join(INSTANCE_STATUSES)}."
        where.append(Instance.status == filters.status)
    if filters.process:
        key, problem = process_key(user, filters.process)
        if problem:
            problems["process"] = problem
        filters = replace(filters, process=key or filters.process)
    if filters.version:
        number = whole_number(filters.version, 1, MAX_INT32)
        if number is None:
            problems["version"] = "Use a version number such as 3."
        elif filters.process:
            where.append(Instance.version_id == _version_id(filters.process, number))
        else:
            where.append(Instance.version == number)
    if filters.process:
        where.append(Instance.process_key == filters.process)
    if filters.business_key:
        where.append(Instance.business_key == filters.business_key)
    if filters.partition:
        partition_id = db.session.scalar(
            select(Partition.id).where(Partition.key == filters.partition)
        )
        if partition_id is None:
            problems["partition"] = f"There is no partition '{filters.partition}'."
        where.append(Instance.partition_id == partition_id)
    if filters.started_by:
        user_id = db.session.scalar(
            select(User.id).where(User.username == filters.started_by.lower())
        )
        if user_id is None:
            problems["started_by"] = f"There is no user '{filters.started_by}'."
        where.append(Instance.started_by_id == user_id)
    if filters.parent:
        parent_id = whole_number(filters.parent, 1, MAX_INT64)
        if parent_id is None:
            problems["parent"] = "Use an instance number such as 42."
        where.append(Instance.parent_id == (parent_id or -1))
    if filters.top:
        if filters.top != "1":
            problems["top"] = "Use 1 to hide called instances, or leave it out."
        where.append(Instance.parent_id.is_(None))
    if filters.suspended:
        if filters.suspended not in ("0", "1"):
            problems["suspended"] = "Use 1 for suspended instances, 0 for the others."
        elif filters.suspended == "1":
            where.append(Instance.suspended_at.is_not(None))
        else:
            where.append(Instance.suspended_at.is_(None))
    since = _day(filters.since, "since", problems)
    until = _day(filters.until, "until", problems)
    if since is not None:
        where.append(Instance.created_at >= since)
    if until is not None and until.date() < date.max:  # the last day ends after any instance
        where.append(Instance.created_at < until + timedelta(days=1))
    if since is not None and until is not None and until < since:
        problems["until"] = "The end date is before the start date."
    if filters.error_node:
        scanned.append(Instance.error["node"].as_string() == filters.error_node)
    if filters.error_code:
        scanned.append(Instance.error["code"].as_string() == filters.error_code)
    if filters.data:
        scanned.append(_data_condition(filters.data, problems))
    if problems:
        raise OperationsError(
            "invalid", "Some filters need fixing: " + ", ".join(sorted(problems)), fields=problems
        )
    return where, scanned


def _visible_processes(user: User) -> list[tuple[str, str]]:
    rows = db.session.execute(
        select(Process.key, Process.name)
        .where(partition_filter(Process.partition_id, user))
        .order_by(Process.name, Process.key)
    )
    return [(key, name) for key, name in rows]


def process_label(key: str, name: str) -> str:
    """How the process filter offers a process: "Name (key)", or the key when they agree."""
    return key if name.casefold() == key.casefold() else f"{name} ({key})"


def process_key(user: User, text: str) -> tuple[str | None, str]:
    """The key of the process `user` sees that `text` names (its key, its name or the offered
    "Name (key)", ignoring case), or None and what is wrong."""
    wanted = text.strip().casefold()
    visible_processes = _visible_processes(user)
    for key, name in visible_processes:
        if wanted in (key.casefold(), process_label(key, name).casefold()):
            return key, ""
    named = [key for key, name in visible_processes if name.casefold() == wanted]
    if len(named) > 1:
        return None, f"Several processes are called '{text}': pick one from the list."
    if named:
        return named[0], ""
    return None, f"There is no process '{text}'; pick one from the list."


def _version_id(process: str, number: int) -> Any:
    found = db.session.scalar(
        select(ProcessVersion.id)
        .join(Process, Process.id == ProcessVersion.process_id)
        .where(Process.key == process, ProcessVersion.number == number)
    )
    return found if found is not None else -1


def _data_condition(text: str, problems: dict[str, str]) -> ColumnElement[bool]:
    if len(text) > MAX_EXPRESSION:
        problems["data"] = f"Use at most {MAX_EXPRESSION} characters."
        return false()
    try:
        return translate(text, dialect())
    except FilterError as error:
        problems["data"] = error.message
        return false()


def list_page(
    user: User,
    filters: Filters,
    *,
    after: Cursor | None = None,
    before: Cursor | None = None,
    size: int = 25,
) -> KeysetPage:
    """One page of matching instances, newest first, with labels for partition and starter."""
    where, scanned = conditions(user, filters)
    query = select(*COLUMNS).where(*where, *scanned)
    options: dict[str, Any] = {}
    if scanned:
        # JSON filters match anything from no row to all: look among the next rows by date
        # first, and when those do not fill the page, scan the table rather than walk an index.
        names = tuple(column.key for column in COLUMNS)
        options["window"] = Window(select(Instance).where(*where), scanned, names, WINDOW)
        options["order"] = (unindexed(Instance.created_at), unindexed(Instance.id))
    page = keyset_page(query, after=after, before=before, size=size, **options)
    if before is not None and not page.rows:
        page = keyset_page(query, size=size, **options)
    partitions = names_by_id(Partition, "key", {row.partition_id for row in page.rows})
    starters = names_by_id(User, "username", {row.started_by_id for row in page.rows})
    partition_names = labels.partition_names(partitions)
    process_names = labels.process_names(row.process_key for row in page.rows)
    titles = labels.version_titles(row.version_id for row in page.rows if row.error)
    incidents = structure.child_incidents(
        row.id for row in page.rows if row.status in UNFINISHED_INSTANCE
    )
    rows = [
        {
            **row._asdict(),
            "partition": partitions.get(row.partition_id),
            "partition_name": partition_names.get(row.partition_id),
            "process_name": process_names.get(row.process_key),
            "titles": titles.get(row.version_id, {}),
            "started_by": starters.get(row.started_by_id),
            "child_incidents": incidents.get(row.id, []),
        }
        for row in page.rows
    ]
    return KeysetPage(rows, page.newer, page.older)


def matching_ids(user: User, filters: Filters, limit: int) -> list[int]:
    """Ids of the instances matching the filters now (at most `limit` + 1, to detect more)."""
    where, scanned = conditions(user, filters)
    query: Select = select(Instance.id).where(*where, *scanned)
    return list(db.session.scalars(query.order_by(Instance.id).limit(limit + 1)))


def filter_choices(user: User) -> dict[str, Any]:
    """Values for the filter form's lists: visible processes ("Name (key)"), the user's
    partitions as (key, name) by name, and the statuses."""
    processes = [process_label(key, name) for key, name in _visible_processes(user)]
    return {
        "processes": processes,
        "partitions": labels.visible_partitions(user),
        "statuses": INSTANCE_STATUSES,
    }
