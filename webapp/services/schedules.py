"""Timer start schedules: kept in step with publishing, fired by workers, paused by operators.

Publishing moves a process's schedules to the new version (see `move_on_publish` for the rule);
every worker calls `run_due` from its sweep thread; operations lists, pauses and resumes them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.exc import IntegrityError

from webapp.engine import timer_starts
from webapp.engine.errors import EngineError
from webapp.extensions import db
from webapp.infra.database import begin_write
from webapp.models import Process, ProcessVersion, User
from webapp.models.base import utcnow
from webapp.models.schedules import Schedule
from webapp.models.session import db_session
from webapp.permissions import can, partition_filter
from webapp.process import naming
from webapp.process.schedules import ScheduleError, parse_schedule
from webapp.services.jobs import commit

log = logging.getLogger(__name__)

UPCOMING = 3


class InvalidTimerStart(ScheduleError):
    """A timer start whose settings do not parse; names the field and the start event as people
    see it (`named`, see process.naming), keeping its id in `node_id`."""

    def __init__(self, node_id: str, error: ScheduleError, named: str) -> None:
        super().__init__(error.field, f"{named}: {error.message}")
        self.node_id = node_id


class ScheduleRefused(Exception):
    """A pause or resume that cannot be done; `status` is the HTTP status that fits."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def move_on_publish(process: Process, version: ProcessVersion, now: datetime | None = None) -> None:
    """Point the process's schedules at `version`, inside the publishing transaction.

    Each process-level timer start of `version` gets a schedule; a start node id that continues
    keeps its schedule's state (paused or not, last run, and its next run unless its date, cycle
    or time zone changed, which starts counting afresh from now); schedules of start nodes the
    new version no longer has are deleted. Raises InvalidTimerStart for settings that do not
    parse.
    """
    now = now or utcnow()
    starts = timer_starts.timer_starts(version.document)
    existing = {
        row.node_id: row
        for row in db.session.scalars(select(Schedule).where(Schedule.process_id == process.id))
    }
    for node_id, schedule in existing.items():
        if node_id not in starts:
            db.session.delete(schedule)
    for node_id, settings in starts.items():
        try:
            parse_schedule(settings, anchor=now)
        except ScheduleError as error:
            named = naming.describe(version.document, node_id)
            raise InvalidTimerStart(node_id, error, named) from None
        row = existing.get(node_id)
        if row is None:
            row = Schedule(process_id=process.id, node_id=node_id, paused=False)
            db.session.add(row)
        elif row.settings == settings:
            row.version_id = version.id
            row.updated_at = now
            continue
        row.version_id = version.id
        row.settings = settings
        row.anchor_at = now
        row.next_run_at = timer_starts.first_run(settings, now)
        row.last_error = None
        row.updated_at = now
    db.session.flush()


def run_due(now: datetime | None = None) -> int:
    """Start one instance per due schedule (each in its own transaction); the number started.

    Safe to run in every worker at once: see webapp/engine/timer_starts.py.
    """
    now = now or utcnow()
    started = 0
    for row in timer_starts.due(db_session(), now):
        try:
            result = timer_starts.fire(db_session(), row, now)
            if result is None:
                log.debug("schedule %s changed before this worker fired it", row.id)
                continue
            commit(result)
            started += 1
        except IntegrityError:
            db.session.rollback()
            log.debug("schedule %s: another worker started this tick first", row.id)
            timer_starts.skip(db_session(), row, now)
            db.session.commit()
        except (EngineError, ValueError) as error:
            db.session.rollback()
            log.warning("timer start %s of version %s: %s", row.node_id, row.version_id, error)
            timer_starts.skip(db_session(), row, now, error=str(error))
            db.session.commit()
    return started


# --- operations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleView:
    """A schedule as the operations page shows it."""

    schedule: Schedule
    expression: str
    upcoming: list[datetime]
    may_manage: bool


def visible(user: User) -> Select:
    """The schedules of processes in the user's partitions, by process key and start node."""
    return (
        select(Schedule)
        .join(Process, Process.id == Schedule.process_id)
        .where(partition_filter(Process.partition_id, user))
        .order_by(Process.key, Schedule.node_id)
    )


def describe(row: Schedule, user: User, now: datetime | None = None) -> ScheduleView:
    now = now or utcnow()
    try:
        expression = parse_schedule(row.settings, anchor=row.anchor_at).describe()
    except ScheduleError:
        expression = str(row.settings.get("cycle") or row.settings.get("date") or "")
    upcoming: list[datetime] = []
    if row.next_run_at is not None and not row.paused:
        after = max(row.next_run_at, now)
        upcoming = timer_starts.upcoming(row.settings, row.anchor_at, after, UPCOMING)
    return ScheduleView(
        row,
        expression,
        upcoming,
        can(user, "instances.manage", row.process.partition_id),
    )


def _manageable(user: User, schedule_id: int) -> Schedule:
    begin_write(db_session())
    row = db.session.scalar(
        select(Schedule).where(Schedule.id == schedule_id).with_for_update(of=Schedule)
    )
    if row is None or not can(user, "instances.read", row.process.partition_id):
        raise ScheduleRefused("No such schedule.")
    if not can(user, "instances.manage", row.process.partition_id):
        raise ScheduleRefused("You may not change this schedule.", status=403)
    return row


def pause(user: User, schedule_id: int) -> Schedule:
    """Stop a schedule from starting instances until it is resumed; commits."""
    row = _manageable(user, schedule_id)
    row.paused = True
    row.updated_at = utcnow()
    db.session.commit()
    return row


def resume(user: User, schedule_id: int, now: datetime | None = None) -> Schedule:
    """Start a paused schedule again from its next run after now: ticks that fell while it was
    paused are skipped (a date that passed meanwhile does not run). Commits."""
    now = now or utcnow()
    row = _manageable(user, schedule_id)
    if row.paused:
        row.paused = False
        try:
            if row.next_run_at is not None:
                schedule = parse_schedule(row.settings, anchor=row.anchor_at)
                row.next_run_at = schedule.next_after(now)
        except ScheduleError as error:
            row.last_error = str(error)[:500]
        row.updated_at = now
    db.session.commit()
    return row
