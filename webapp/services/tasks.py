"""User tasks: who may see and work a task, the inbox lists, and the task actions.

Claim, release, reassign and complete are each one transaction that first locks the task's
instance row as engine steps do (`engine.locking.begin_write`, then FOR UPDATE), re-reads the
task, changes it and appends history with the actor. Completing and reporting open the engine
step first (it locks the instance and reads it and its tokens once), check the task and the form
in that step, run it, commit, then enqueue the step's jobs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    UnaryExpression,
    and_,
    any_,
    case,
    func,
    or_,
    select,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import defer, joinedload, lazyload, selectinload

from webapp.engine import EngineError, definitions, history, steps
from webapp.engine.definitions import Definition
from webapp.engine.runtime import Step
from webapp.extensions import db
from webapp.infra.database import begin_write, is_sqlite
from webapp.models import HistoryEntry, Instance, Role, Task, TaskCandidate, User
from webapp.models.base import utcnow
from webapp.models.session import db_session
from webapp.models.statuses import HistoryKind, InstanceStatus, TaskStatus
from webapp.permissions import can, partition_filter
from webapp.process import forms
from webapp.services.instances import InstanceError
from webapp.services.jobs import commit

MAX_NOTE = 500


class TaskError(InstanceError):
    """A refused task action (409 unless said); `by_self`: the user had already completed it."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 409,
        fields: dict[str, str] | None = None,
        by_self: bool = False,
    ) -> None:
        super().__init__(code, message, status=status, fields=fields)
        self.by_self = by_self


def _not_found(task_id: int) -> TaskError:
    return TaskError("not_found", f"There is no task {task_id} you may see.", status=404)


def _name(user: User | None) -> str:
    return user.name if user is not None else "someone"


# --- who may do what --------------------------------------------------------------------------


def role_ids(user: User) -> list[int]:
    return sorted(role.id for role in user.roles)


def may_manage(user: User, task: Task) -> bool:
    """Operators (instances.manage in the task's partition) may see and reassign any task."""
    return can(user, "instances.manage", task.partition_id)


def _offered_to(user: User, task: Task) -> bool:
    """The task is offered to `user`: they hold its candidate role or another role it is offered
    to, are one of its candidate users, or it is open to everyone who may work tasks in its
    partition (a model task with no assignee)."""
    if task.open_to_partition:
        return True
    roles = set(role_ids(user))
    if task.candidate_role_id is not None and task.candidate_role_id in roles:
        return True
    return any(c.user_id == user.id or c.role_id in roles for c in task.candidates)


def is_offered(task: Task) -> bool:
    """Someone besides an assignee may take the task: a role, candidates, or everyone."""
    return task.candidate_role_id is not None or task.open_to_partition or bool(task.candidates)


def offered_to(task: Task) -> str:
    """Whom an unclaimed task waits for, in words: its roles and users, or everyone."""
    if task.open_to_partition:
        return "everyone"
    roles = [task.candidate_role.name] if task.candidate_role is not None else []
    roles += [c.role.name for c in task.candidates if c.role is not None]
    users = [c.user.username for c in task.candidates if c.user is not None]
    parts = []
    if roles:
        parts.append(f"role{'s' if len(roles) > 1 else ''} {', '.join(roles)}")
    if users:
        parts.append(f"user{'s' if len(users) > 1 else ''} {', '.join(users)}")
    return " and ".join(parts) or "nobody"


def may_work(user: User, task: Task) -> bool:
    """The assignee, or a member of the candidate role (everyone, for an open task) while nobody
    has claimed the task."""
    if task.status != TaskStatus.OPEN or not can(user, "tasks.work", task.partition_id):
        return False
    if task.assignee_id is not None:
        return task.assignee_id == user.id
    return _offered_to(user, task)


def may_see(user: User, task: Task, *, acting: bool = False) -> bool:
    """Who may open a task; `acting` also lets candidate-role members hear why they are late."""
    if may_manage(user, task):
        return True
    if not can(user, "tasks.work", task.partition_id):
        return False
    if user.id in (task.assignee_id, task.completed_by_id):
        return True
    unclaimed = task.status == TaskStatus.OPEN and task.assignee_id is None
    return _offered_to(user, task) and (unclaimed or acting)


def get_task(user: User, task_id: int) -> Task:
    """The task if `user` may see it; TaskError 404 otherwise (so ids reveal nothing)."""
    task = db.session.get(Task, task_id)
    if task is None or not may_see(user, task):
        raise _not_found(task_id)
    return task


# --- lists ------------------------------------------------------------------------------------


def _among(column: Any, values: Select, *, bitmap: bool) -> ColumnElement[bool]:
    """`column` is one of the values `values` selects: `IN (...)`, which PostgreSQL checks with a
    hash, row by row; with `bitmap`, on PostgreSQL `= ANY(ARRAY(...))`, which it can combine with
    other conditions' indexes in a bitmap OR but checks by going through the array, so only for
    a query that reads no more rows than those indexes give (a count). SQLite keeps `IN`."""
    if not bitmap or is_sqlite(db_session()):
        return column.in_(values)
    return column == any_(func.array(values.scalar_subquery(), type_=ARRAY(Integer)))


def _tab(user: User, tab: str, *, counting: bool = False) -> ColumnElement[bool]:
    """The condition of one tab; `counting` for a count, which PostgreSQL then takes from a
    bitmap scan of the indexes of each way a task is offered."""
    if tab == "done":
        return and_(Task.completed_by_id == user.id, Task.status == TaskStatus.COMPLETED)
    if tab == "claimable":
        roles = role_ids(user)
        mine = TaskCandidate.user_id == user.id
        if roles:
            mine = or_(mine, TaskCandidate.role_id.in_(roles))
        # Cheapest first: PostgreSQL checks these in order on each row of the bitmap scan.
        offers: list[ColumnElement[bool]] = [Task.candidate_role_id.in_(roles)] if roles else []
        offers += [
            Task.open_to_partition.is_(True),
            _among(Task.id, select(TaskCandidate.task_id).where(mine), bitmap=counting),
        ]
        return and_(or_(*offers), Task.status == TaskStatus.OPEN, Task.assignee_id.is_(None))
    return and_(Task.assignee_id == user.id, Task.status == TaskStatus.OPEN)


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def due_window(due: str, now: datetime) -> tuple[datetime | None, datetime | None] | None:
    """The [start, end) of due times a due filter keeps; None when it keeps every task.

    "today" and "week" run from now to the end of the UTC day, or of Sunday; "overdue" is
    everything due before now. "none" (no due time) is a separate condition of the query.
    """
    today = datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)
    if due == "overdue":
        return None, now
    if due == "today":
        return now, today + timedelta(days=1)
    if due == "week":
        return now, today + timedelta(days=7 - now.weekday())
    return None


def inbox_query(
    user: User,
    *,
    tab: str = "mine",
    process: str = "",
    due: str = "",
    q: str = "",
    sort: str = "due",
    now: datetime | None = None,
) -> Select:
    """The tasks of one inbox tab (mine, claimable, done), narrowed and ordered."""
    now = now or utcnow()
    query = select(Task).where(_tab(user, tab), partition_filter(Task.partition_id, user))
    if process:
        query = query.join(Instance, Instance.id == Task.instance_id)
        query = query.where(Instance.process_key == process)
    if q:
        like = f"%{_escape_like(q)}%"
        keyed = (
            select(Instance.id)
            .where(Instance.business_key.ilike(like, escape="\\"))
            .correlate(None)
        )
        matched = _among(Task.instance_id, keyed, bitmap=True)
        query = query.where(or_(Task.title.ilike(like, escape="\\"), matched))
    window = due_window(due, now)
    if due == "none":
        query = query.where(Task.due_at.is_(None))
    elif window is not None:
        start, end = window
        if start is not None:
            query = query.where(Task.due_at >= start)
        if end is not None:
            query = query.where(Task.due_at < end)
    order: tuple[UnaryExpression[Any], ...]
    if sort == "created":
        order = (Task.created_at.desc(), Task.id.desc())
    elif sort == "completed":
        order = (Task.completed_at.desc(), Task.id.desc())
    else:
        order = (Task.due_at.asc().nulls_last(), Task.id.asc())
    return query.order_by(*order).options(*LIST_LOADS)


# What a list row shows: the candidate role (not its permissions) in the list's own query; the
# instances' key, version and business key (not their variables) in a second one, so PostgreSQL
# sorts and cuts the page from the tasks alone before reading any instance; and the names of the
# further roles and users a task is offered to (not those users' own roles). Not the task's form
# or submitted values.
LIST_LOADS = (
    defer(Task.form),
    defer(Task.result),
    selectinload(Task.instance).load_only(
        Instance.process_key, Instance.version, Instance.version_id, Instance.business_key
    ),
    joinedload(Task.candidate_role).lazyload(Role.grants),
    selectinload(Task.candidates).options(
        joinedload(TaskCandidate.role).lazyload(Role.grants),
        joinedload(TaskCandidate.user).options(lazyload(User.roles), lazyload(User.partitions)),
    ),
)


def _counted_query(user: User, tab: str) -> Select:
    return select(func.count(Task.id)).where(
        _tab(user, tab, counting=True), partition_filter(Task.partition_id, user)
    )


def open_counts(user: User) -> dict[str, int]:
    """Open tasks assigned to the user and open for their roles (the navigation badge), both
    counted in one statement."""
    mine, claimable = db.session.execute(
        select(
            _counted_query(user, "mine").scalar_subquery(),
            _counted_query(user, "claimable").scalar_subquery(),
        )
    ).one()
    return {"mine": mine or 0, "claimable": claimable or 0}


def next_task(user: User, instance_id: int) -> Task | None:
    """The user's next open task in this instance (assigned to them or open for their roles):
    where they go after starting it or completing a step of it."""
    workable = or_(_tab(user, "mine"), _tab(user, "claimable"))
    query = select(Task).where(
        workable, partition_filter(Task.partition_id, user), Task.instance_id == instance_id
    )
    return db.session.scalar(query.order_by(Task.id).limit(1))


def where_now(instance: Any) -> str:
    """One sentence on where an instance (id, status) is now, said after completing a task."""
    if instance.status == InstanceStatus.COMPLETED:
        return f"Instance {instance.id} is complete."
    if instance.status == InstanceStatus.FAILED:
        return f"Instance {instance.id} stopped with an error; operators can see it."
    titles = db.session.scalars(
        select(Task.title)
        .where(Task.instance_id == instance.id, Task.status == TaskStatus.OPEN)
        .order_by(Task.id)
    ).all()
    if titles:
        return f"Instance {instance.id} moved on to: {_counted(titles)}."
    return f"Instance {instance.id} is {instance.status}."


def _counted(titles: Sequence[str]) -> str:
    """Titles in first-seen order, a repeated one said once with its count ("Review (2 tasks)")."""
    counts = Counter(titles)
    return ", ".join(
        f"{title} ({counts[title]} tasks)" if counts[title] > 1 else title for title in counts
    )


# --- actions ----------------------------------------------------------------------------------


def _locked(user: User, task_id: int) -> Task:
    """Begin the write, lock the task's instance row as engine steps do, read the task fresh.

    SQLite: `begin_write` holds the database write lock; PostgreSQL: the row is FOR UPDATE.
    """
    begin_write(db_session())
    of_task = select(Task.instance_id).where(Task.id == task_id).scalar_subquery()
    locked = db.session.scalar(select(Instance.id).where(Instance.id == of_task).with_for_update())
    if locked is None:
        raise _not_found(task_id)
    task = db.session.get(Task, task_id, populate_existing=True)
    if task is None or not may_see(user, task, acting=True):
        raise _not_found(task_id)
    return task


def _role_name(task: Task) -> str | None:
    """The candidate role's name for history (None for a task open to everyone)."""
    return task.candidate_role.name if task.candidate_role is not None else None


def _record(task: Task, kind: HistoryKind, actor: User, **details: Any) -> None:
    """Append one history line for a task action, with who did it."""
    history.append(
        db_session(),
        task.instance_id,
        kind,
        actor=actor.username,
        now=utcnow(),
        token_id=task.token_id,
        node_id=task.node_id,
        task=task.id,
        **details,
    )


def _cancellation(task: Task) -> str:
    entry = db.session.scalar(
        select(HistoryEntry)
        .where(
            HistoryEntry.instance_id == task.instance_id, HistoryEntry.kind == HistoryKind.CANCELLED
        )
        .order_by(HistoryEntry.id.desc())
        .limit(1)
    )
    details = entry.details if entry is not None else {}
    who = f" by {entry.actor}" if entry is not None and entry.actor else ""
    why = f" ({details['reason']})" if details.get("reason") else ""
    return f"Instance {task.instance_id} was cancelled{who}{why}."


def _ensure_open(user: User, task: Task) -> None:
    """Refuse with a message that says who got there first, or that the instance stopped."""
    if task.status == TaskStatus.COMPLETED:
        by = db.session.get(User, task.completed_by_id) if task.completed_by_id else None
        when = task.completed_at.strftime("%Y-%m-%d %H:%M UTC") if task.completed_at else ""
        if by is not None and by.id == user.id:
            message = f"You already completed this task ({when}); nothing was changed."
        else:
            message = f"This task was already completed by {_name(by)} ({when}); nothing changed."
        raise TaskError("already_completed", message, by_self=by is not None and by.id == user.id)
    if task.status != TaskStatus.OPEN:
        reason = _cancellation(task) if task.instance.status == InstanceStatus.CANCELLED else ""
        raise TaskError("task_closed", f"{reason} This task is closed; nothing was saved.".strip())
    if task.assignee_id not in (None, user.id):
        raise TaskError(
            "claimed", f"{_name(task.assignee)} has claimed this task; nothing was changed."
        )


def _ensure_workable(user: User, task: Task) -> None:
    """Operators may see a task without working it: they hear so (403) instead of a 404."""
    if may_work(user, task):
        return
    if not may_manage(user, task):
        raise _not_found(task.id)
    raise TaskError(
        "not_workable",
        "Only the assignee, or a member of its role, can work this task.",
        status=403,
    )


def claim(user: User, task_id: int) -> Task:
    """A role task becomes the user's; claiming one's own task again changes nothing."""
    task = _locked(user, task_id)
    _ensure_open(user, task)
    if task.assignee_id == user.id:
        db.session.rollback()
        return task
    _ensure_workable(user, task)
    task.assignee_id = user.id
    task.claimed_at = utcnow()
    _record(task, HistoryKind.TASK_CLAIMED, user, role=_role_name(task))
    db.session.commit()
    return task


def release(user: User, task_id: int) -> Task:
    """A claimed task goes back to its candidate role."""
    task = _locked(user, task_id)
    _ensure_open(user, task)
    if task.assignee_id != user.id:
        raise TaskError("not_claimed", "You do not hold this task; nothing was changed.")
    if not is_offered(task):
        raise TaskError(
            "no_role",
            "This task was assigned to you directly and has no role to go back to; "
            "ask an operator to reassign it.",
        )
    task.assignee_id = None
    task.claimed_at = None
    _record(task, HistoryKind.TASK_RELEASED, user, role=_role_name(task))
    db.session.commit()
    return task


def reassign(
    manager: User,
    task_id: int,
    *,
    username: str = "",
    role: str = "",
    note: str = "",
    confirmed: str = "",
) -> Task:
    """An operator gives an open task to a user, or offers it to a role (unclaimed).

    Giving it to someone outside the task's role, or to the instance's starter, needs
    `confirmed` to name that concern (see `concerns`); the history records what was confirmed.
    """
    if not can(manager, "instances.manage", scoped=False):
        raise TaskError("forbidden", "You may not reassign tasks.", status=403)
    note = (note or "").strip()
    fields = _target_problems(username, role, note)
    kept_note = note or None
    if fields:
        raise TaskError("invalid", "Some values need fixing.", status=422, fields=fields)
    task = _locked(manager, task_id)
    if not may_manage(manager, task):
        raise _not_found(task_id)
    if task.status != TaskStatus.OPEN:
        raise TaskError("task_closed", "This task is closed; it can no longer be reassigned.")
    before = {
        "from_user": task.assignee.username if task.assignee else None,
        "from_role": task.candidate_role.name if task.candidate_role else None,
    }
    if username:
        target = _assignable_user(username.strip().lower(), task)
        asked = concerns(target, task)
        if asked and (confirmed or "").strip() != ",".join(asked):
            db.session.rollback()
            raise TaskError(
                "unconfirmed",
                _concern_message(target, task, asked),
                fields={"confirm": ",".join(asked)},
            )
        task.assignee_id = target.id
        task.claimed_at = utcnow()
        extra = {"confirmed": ",".join(asked)} if asked else {}
        _record(
            task,
            HistoryKind.TASK_REASSIGNED,
            manager,
            to_user=target.username,
            note=kept_note,
            **before,
            **extra,
        )
    else:
        offered = _candidate_role(role.strip())
        task.assignee_id = None
        task.claimed_at = None
        task.candidate_role_id = offered.id
        task.open_to_partition = False
        task.candidates = []
        _record(
            task,
            HistoryKind.TASK_REASSIGNED,
            manager,
            to_role=offered.name,
            note=kept_note,
            **before,
        )
    db.session.commit()
    return task


def concerns(user: User, task: Task) -> list[str]:
    """What an operator must confirm before `user` gets `task`: "no_role" when the user does
    not hold the task's role, "starter" when the user started the instance (four eyes)."""
    found = []
    if (task.candidate_role_id is not None or task.candidates) and not _offered_to(user, task):
        found.append("no_role")
    if task.instance.started_by_id is not None and task.instance.started_by_id == user.id:
        found.append("starter")
    return found


def _concern_message(user: User, task: Task, asked: list[str]) -> str:
    parts = []
    if "no_role" in asked and task.candidate_role is not None and not task.candidates:
        parts.append(f"{user.name} does not hold the role {task.candidate_role.name}")
    elif "no_role" in asked:
        parts.append(f"{user.name} is not among those it is offered to ({offered_to(task)})")
    if "starter" in asked:
        parts.append(f"{user.name} started instance {task.instance_id}")
    return "; ".join(parts) + "."


def eligible_users(task: Task) -> list[User]:
    """Active users who may work `task` without a confirmation: they hold its role (any worker
    when it has none) in its partition, and did not start its instance."""
    query = select(User).where(User.active.is_(True)).order_by(User.username)
    if task.candidate_role_id is not None or task.candidates:
        role_ids_offered = [c.role_id for c in task.candidates if c.role_id is not None]
        if task.candidate_role_id is not None:
            role_ids_offered.append(task.candidate_role_id)
        user_ids = [c.user_id for c in task.candidates if c.user_id is not None]
        query = query.where(
            or_(User.roles.any(Role.id.in_(role_ids_offered)), User.id.in_(user_ids))
        )
    return [
        user
        for user in db.session.scalars(query)
        if can(user, "tasks.work", task.partition_id) and not concerns(user, task)
    ]


def _target_problems(username: str, role: str, note: str) -> dict[str, str]:
    fields = {}
    if bool((username or "").strip()) == bool((role or "").strip()):
        fields["target"] = "Give either a user or a role."
    if len(note) > MAX_NOTE:
        fields["note"] = f"Use at most {MAX_NOTE} characters."
    return fields


def _assignable_user(username: str, task: Task) -> User:
    user = db.session.scalar(select(User).where(User.username == username))
    if user is None or not user.active:
        raise _invalid("username", f"There is no active user '{username}'.")
    if not can(user, "tasks.work", task.partition_id):
        raise _invalid("username", f"{user.name} may not work tasks in this task's partition.")
    return user


def _candidate_role(name: str) -> Role:
    role = db.session.scalar(select(Role).where(Role.name == name))
    if role is None:
        raise _invalid("role", f"There is no role '{name}'.")
    if not role.permissions & {"tasks.work", "admin"}:
        raise _invalid("role", f"The role '{name}' does not grant working tasks.")
    return role


def _invalid(field: str, message: str) -> TaskError:
    db.session.rollback()
    return TaskError("invalid", message, status=422, fields={field: message})


@dataclass
class Completed:
    """A completed task (its title read before the commit), where its instance went, and the id
    of the next task to show (if any): what the page says and where it goes, without a reload."""

    task: Task
    title: str
    where: str
    next_task_id: int | None

    @property
    def next_task(self) -> Task | None:
        return db.session.get(Task, self.next_task_id) if self.next_task_id is not None else None


def complete(user: User, task_id: int, raw: Any) -> Completed:
    """Validate the submitted form under the instance lock, run the engine step, commit.

    The task and its instance are read once, in the step that completes the task."""
    step, task = _locked_step(user, task_id)
    _ensure_open(user, task)
    _ensure_workable(user, task)
    try:
        steps.refuse_if_suspended(step, task.id)
    except EngineError as error:
        db.session.rollback()
        raise TaskError(error.code, error.message, status=error.status) from None
    token = steps.waiting_at(step, task.status, task.token_id, task.node_id)
    inner = token is not None and step.is_inner(token)
    values, errors = forms.coerce_submission(task.form, raw, step.context(token if inner else None))
    if errors:
        db.session.rollback()
        raise TaskError("invalid", "Some values need fixing.", status=422, fields=errors)
    workable = _workable(user)
    try:
        result = steps.complete_locked_task(
            step, task.id, token, values, actor=user, claim=task.assignee_id is None
        )
    except EngineError as error:
        db.session.rollback()
        raise TaskError(error.code, error.message, status=error.status) from None
    title = task.title
    commit(result)
    return _completed(task, title, result.instance, workable)


def _locked_step(user: User, task_id: int) -> tuple[Step, Task]:
    """Open the engine step of the task's instance (which locks it, as `_locked` does) and read
    the task fresh under that lock; 404 unless `user` may see it."""
    step = steps.lock_task(db_session(), task_id)
    task = db.session.get(Task, task_id, populate_existing=True) if step is not None else None
    if step is None or task is None or not may_see(user, task, acting=True):
        raise _not_found(task_id)
    return step, task


def _workable(user: User) -> ColumnElement[bool]:
    """The user's open tasks (theirs or offered to them, in partitions they see); built before a
    commit, it needs no reload of their roles and partitions after it."""
    return and_(
        or_(_tab(user, "mine"), _tab(user, "claimable")),
        partition_filter(Task.partition_id, user),
    )


# At most this many titles of open tasks are named after a completion; the rest are counted.
NAMED_TITLES = 10


def _completed(task: Task, title: str, instance: Any, workable: ColumnElement[bool]) -> Completed:
    """Where the instance went and the user's next task in it, from one grouped read of its open
    tasks (`where_now` and `next_task` in one statement, whatever the number of tasks)."""
    if instance.status == InstanceStatus.COMPLETED:
        return Completed(task, title, where_now(instance), None)
    first = func.min(Task.id)
    rows = db.session.execute(
        select(
            Task.title,
            func.count(Task.id),
            func.min(func.min(case((workable, Task.id)))).over(),
            func.count().over(),
        )
        .where(Task.instance_id == instance.id, Task.status == TaskStatus.OPEN)
        .group_by(Task.title)
        .order_by(first)
        .limit(NAMED_TITLES)
    ).all()
    following = rows[0][2] if rows else None
    if instance.status == InstanceStatus.FAILED:
        where = where_now(instance)
    elif rows:
        named = ", ".join(f"{t} ({n} tasks)" if n > 1 else t for t, n, _, _ in rows)
        more = rows[0][3] - len(rows)
        if more > 0:
            named += f" and {more} more"
        where = f"Instance {instance.id} moved on to: {named}."
    else:
        where = f"Instance {instance.id} is {instance.status}."
    return Completed(task, title, where, following)


@dataclass(frozen=True)
class Outcome:
    """A business error or escalation a person may report from a task: a boundary event on it."""

    event: str
    code: str
    label: str

    @property
    def value(self) -> str:
        return f"{self.event}:{self.code}"


def _catch_levels(task: Task) -> list[tuple[Definition, list[str], str]]:
    """Where a thrown error or escalation is looked for, nearest first, as the engine routes it
    (`engine.scopes.throw`): the boundary events of the task, the event sub-processes of its
    scope, the boundary events of the sub-process around it, and so on outwards; then, from a
    called instance, the same from its call activity in the calling instance. Each level is
    (definition, catcher node ids, where it sits in words; empty for the task itself)."""
    levels: list[tuple[Definition, list[str], str]] = []
    instance: Instance | None = task.instance
    node_id: str | None = task.node_id
    seen: set[int] = set()
    while instance is not None and node_id is not None and instance.id not in seen:
        seen.add(instance.id)
        definition = definitions.for_version(instance.process_version)
        own = not levels
        while node_id is not None:
            where = "" if own else f"on {definition.namer.label(node_id)}"
            levels.append((definition, list(definition.boundaries.get(node_id, [])), where))
            scope = definition.parent.get(node_id)
            starts = [
                definition.starts[sub]
                for sub in definition.event_subprocesses.get(scope, [])
                if sub in definition.starts
            ]
            scope_name = definition.namer.label(scope) if scope else "the process"
            levels.append((definition, starts, f"in {scope_name}"))
            node_id, own = scope, False
        node_id = instance.parent_node_id
        instance = db.session.get(Instance, instance.parent_id) if instance.parent_id else None
    return levels


def reportable(task: Task) -> list[Outcome]:
    """The errors and escalations a person may report from the task: those a boundary event of
    the task, or an enclosing sub-process, event sub-process or calling instance catches, each
    offered once, by the catcher the engine would route it to (a catch-all: the empty code)."""
    levels = _catch_levels(task)

    def route(event: str, code: str) -> tuple[int, str] | None:
        for index, (definition, catchers, _) in enumerate(levels):
            found = definition.catchers(catchers, event, code)
            if found is not None:
                return index, found
        return None

    found: list[Outcome] = []
    for index, (definition, catchers, where) in enumerate(levels):
        for node_id in catchers:
            config = definition.config(node_id)
            event = config.get("event")
            if event not in ("error", "escalation"):
                continue
            code = str(config.get("code") or "")
            if route(event, code) != (index, node_id):
                continue
            title = definition.node(node_id).get("title") or definition.namer.label(
                definition.parent.get(node_id) or node_id
            )
            place = f", {where}" if where else ""
            label = f"{title} ({event} {code or 'of any code'}{place})"
            found.append(Outcome(event, code, label))
    return found


def report(user: User, task_id: int, choice: str) -> Completed:
    """Report one of the task's `reportable` outcomes instead of completing it (as the
    assignee would complete it), under the instance lock."""
    step, task = _locked_step(user, task_id)
    _ensure_open(user, task)
    _ensure_workable(user, task)
    outcome = next((o for o in reportable(task) if o.value == choice), None)
    if outcome is None:
        raise _invalid("outcome", "Choose one of the listed errors or escalations.")
    token = steps.waiting_at(step, task.status, task.token_id, task.node_id)
    workable = _workable(user)
    try:
        result = steps.report_locked_task(
            step,
            task.id,
            token,
            outcome.event,
            outcome.code,
            actor=user,
            claim=task.assignee_id is None,
        )
    except EngineError as error:
        db.session.rollback()
        raise TaskError(error.code, error.message, status=error.status) from None
    title = task.title
    commit(result)
    return _completed(task, title, result.instance, workable)
