"""Tasks for the JSON API: the inbox's lists from query arguments, a task's JSON shape (with its
form and the data the task page shows), and completing a task from JSON form data.

Access and the actions themselves are `services.tasks`, shared with the inbox pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select
from sqlalchemy.orm import joinedload, lazyload

from webapp.engine.context import context as instance_context
from webapp.extensions import db
from webapp.inputs import text_problem
from webapp.models import Task, User
from webapp.models.statuses import TaskStatus
from webapp.process import forms
from webapp.services import instances, scopes, tasks
from webapp.services.tasks import TaskError

TABS = ("mine", "claimable", "done")
DUE = ("", "overdue", "today", "week", "none")
SORTS = ("due", "created", "completed")
DEFAULT_SORT = {"mine": "due", "claimable": "due", "done": "completed"}
MAX_QUERY = 200
# The list names each task's assignee: read in the list's query, without their roles.
ASSIGNEE = joinedload(Task.assignee).options(lazyload(User.roles), lazyload(User.partitions))


def _invalid(fields: dict[str, str]) -> TaskError:
    db.session.rollback()
    return TaskError(
        "invalid", f"Some values need fixing: {', '.join(fields)}.", status=422, fields=fields
    )


def list_query(user: User, args: Mapping[str, Any]) -> Select:
    """The inbox query for `tab`, `process`, `due`, `q` and `sort`; a wrong value is 422
    naming it (the API does not fall back silently as the page does)."""
    fields: dict[str, str] = {}

    def text(name: str) -> str:
        value = str(args.get(name) or "").strip()
        problem = text_problem(value)
        if problem:
            fields[name] = problem
            return ""
        return value

    def choice(name: str, allowed: tuple[str, ...], default: str) -> str:
        value = text(name) or default
        if value not in allowed:
            fields[name] = f"Use one of: {', '.join(a for a in allowed if a)}."
            return default
        return value

    tab = choice("tab", TABS, "mine")
    sort = choice("sort", SORTS, DEFAULT_SORT[tab])
    due = choice("due", DUE, "")
    q = " ".join(text("q").split())
    if len(q) > MAX_QUERY:
        fields["q"] = f"Use at most {MAX_QUERY} characters."
    process = text("process")
    if len(process) > 100:
        fields["process"] = "Use at most 100 characters."
    if fields:
        raise _invalid(fields)
    query = tasks.inbox_query(user, tab=tab, process=process, due=due, q=q, sort=sort)
    return query.options(ASSIGNEE)


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def offers(task: Task) -> dict[str, Any]:
    """Whom the task is offered to while unclaimed: role names, usernames, or everyone."""
    roles = [task.candidate_role.name] if task.candidate_role is not None else []
    roles += [c.role.name for c in task.candidates if c.role is not None]
    users = [c.user.username for c in task.candidates if c.user is not None]
    return {"roles": roles, "users": users, "everyone": task.open_to_partition}


def as_dict(task: Task) -> dict[str, Any]:
    """A task as a list row shows it: what, where, whose, and when."""
    instance = task.instance
    return {
        "id": task.id,
        "title": task.title,
        "node": task.node_id,
        "status": task.status,
        "instance": task.instance_id,
        "process_key": instance.process_key,
        "version": instance.version,
        "business_key": instance.business_key,
        "assignee": task.assignee.username if task.assignee is not None else None,
        "offered_to": offers(task),
        "created_at": _iso(task.created_at),
        "due_at": _iso(task.due_at),
        "claimed_at": _iso(task.claimed_at),
        "completed_at": _iso(task.completed_at),
    }


def detail_dict(user: User, task: Task) -> dict[str, Any]:
    """The task as its page shows it: the form spec with the values it starts from, the
    display fields, the instance's input and variables, what `user` may do, and the submitted
    values once completed."""
    instance = task.instance
    context = scopes.task_context(task, instance_context(instance))
    workable = tasks.may_work(user, task)
    completed_by = db.session.get(User, task.completed_by_id) if task.completed_by_id else None
    return {
        **as_dict(task),
        "partition": instance.partition.key if instance.partition is not None else None,
        "suspended": instance.suspended_at is not None,
        "completed_by": completed_by.username if completed_by is not None else None,
        "form": task.form,
        "values": forms.initial_values(task.form, context) if task.form else {},
        "display": [
            {"label": forms.field_label(field), "value": forms.display_value(field, context)}
            for field in forms.iter_fields(task.form)
            if field["type"] == "display"
        ],
        "input": instance.input or {},
        "vars": instance.vars or {},
        "result": task.result if task.status == TaskStatus.COMPLETED else None,
        "actions": {
            "claim": workable and task.assignee_id is None,
            "release": task.status == TaskStatus.OPEN
            and task.assignee_id == user.id
            and tasks.is_offered(task),
            "complete": workable and instance.suspended_at is None,
        },
    }


def _input_fields(spec: Any) -> dict[str, dict[str, Any]]:
    """The form's fields that take a value, by key."""
    return {
        field["key"]: field
        for field in forms.iter_fields(spec)
        if field["type"] != "display" and isinstance(field.get("key"), str)
    }


def complete(user: User, task_id: int, data: Mapping[str, Any]) -> tasks.Completed:
    """Complete the task with JSON form data, checked as the inbox checks a posted form.

    A field the form does not have, or a list for a single-value field, is 422 naming it (with
    the form's own problems) when the caller could otherwise complete the task; refusals (404,
    409) come first as in the inbox.
    """
    task = db.session.get(Task, task_id)
    spec = task.form if task is not None else None
    known = _input_fields(spec)
    if task is not None and tasks.may_work(user, task):
        fields = {}
        for name, value in data.items():
            field = known.get(name)
            if field is None:
                fields[name] = "Unknown field; the form has no such field."
            elif isinstance(value, list) and field["type"] != "multiselect":
                fields[name] = f"{forms.field_label(field)} takes one value, not a list."
        if fields:
            context = scopes.task_context(task, instance_context(task.instance))
            known_data = {name: value for name, value in data.items() if name not in fields}
            raw = instances.as_submission(known_data, spec or {})
            fields = {**forms.coerce_submission(spec, raw, context)[1], **fields}
            raise _invalid(dict(sorted(fields.items())))
    return tasks.complete(user, task_id, instances.as_submission(data, spec or {}))
