"""Timer start events: find the schedules that are due and start one instance per tick.

Every worker checks (one indexed query per pass); no lock decides who fires. A tick is claimed by
inserting its row in `schedule_ticks`, unique per (version, start node, tick), in the same
transaction that starts the instance and moves the schedule's `next_run_at` on (only if it still
holds the value read, so a worker that read a stale row, or a schedule paused or moved to a new
version meanwhile, starts nothing). Two workers claiming the same tick collide on the unique key
and one rolls back. After downtime only the latest due tick starts an instance; `next_run_at`
moves past now, so the missed ones are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.orm import Session

from webapp.engine import definitions, steps
from webapp.engine.runtime import StepResult
from webapp.engine.suspended_versions import check_startable
from webapp.infra.database import begin_write
from webapp.models import ProcessVersion
from webapp.models.schedules import Schedule, ScheduleTick
from webapp.process.schedules import Schedule as Timing
from webapp.process.schedules import parse_schedule

BATCH = 100
# Tick rows kept per (version, start node): the unique key only matters near `next_run_at`.
KEEP_TICKS = 100
SCHEDULE_SETTINGS = ("date", "cycle", "timezone")


@dataclass(frozen=True)
class DueSchedule:
    """A schedule row as read by the check, before any tick is claimed."""

    id: int
    version_id: int
    node_id: str
    settings: dict[str, Any]
    anchor_at: datetime
    next_run_at: datetime


def settings_of(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a timer start's config that decides when it runs."""
    return {key: config[key] for key in SCHEDULE_SETTINGS if config.get(key)}


def timer_starts(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The process-level timer start events of a document: node id -> schedule settings."""
    return {
        node_id: settings_of(node.get("config") or {})
        for node_id, node in (document.get("nodes") or {}).items()
        if node.get("kind") == "startEvent"
        and not node.get("parent")
        and (node.get("config") or {}).get("event") == "timer"
    }


def timing(settings: dict[str, Any], anchor: datetime) -> Timing:
    return parse_schedule(settings, anchor=anchor)


def first_run(settings: dict[str, Any], now: datetime) -> datetime | None:
    """When a schedule published (or changed) at `now` first runs: a date once, even if it has
    passed; a cycle or cron expression at its first run after now."""
    schedule = timing(settings, now)
    if schedule.kind == "date":
        return schedule.date
    return schedule.next_after(now)


def due(session: Session, now: datetime, limit: int = BATCH) -> list[DueSchedule]:
    """The unpaused schedules whose next run has come (ends the read transaction)."""
    rows = session.execute(
        select(
            Schedule.id,
            Schedule.version_id,
            Schedule.node_id,
            Schedule.settings,
            Schedule.anchor_at,
            Schedule.next_run_at,
        )
        .where(Schedule.paused.is_(False), Schedule.next_run_at <= now)
        .order_by(Schedule.next_run_at)
        .limit(limit)
    ).all()
    session.rollback()
    return [DueSchedule(*row) for row in rows]


def claim(row: DueSchedule, now: datetime) -> tuple[datetime, datetime | None]:
    """The tick `row` fires at now (the latest due one) and its next run after now."""
    schedule = timing(row.settings, row.anchor_at)
    tick = max(schedule.latest_at_or_before(now) or row.next_run_at, row.next_run_at)
    return tick, schedule.next_after(max(tick, now))


def fire(session: Session, row: DueSchedule, now: datetime) -> StepResult | None:
    """Start the instance of `row`'s tick; None when the schedule no longer holds what was read
    (another worker fired it, or it was paused or moved). Raises IntegrityError when another
    worker claimed the same tick first. The caller commits."""
    begin_write(session)
    tick, following = claim(row, now)
    session.execute(
        insert(ScheduleTick).values(
            version_id=row.version_id, node_id=row.node_id, tick_at=tick, created_at=now
        )
    )
    moved = session.execute(
        update(Schedule)
        .where(
            Schedule.id == row.id,
            Schedule.version_id == row.version_id,
            Schedule.next_run_at == row.next_run_at,
            Schedule.paused.is_(False),
        )
        .values(next_run_at=following, last_tick_at=tick, last_error=None, updated_at=now)
        .returning(Schedule.id)
    ).first()
    if moved is None:
        session.rollback()
        return None
    version = session.get(ProcessVersion, row.version_id)
    assert version is not None
    check_startable(version)
    result = steps.start_instance(
        session,
        definitions.for_version(version),
        partition_id=version.process.partition_id,
        via="schedule",
        start_node=row.node_id,
        now=now,
    )
    instance_id = result.instance.id
    session.execute(
        update(ScheduleTick)
        .where(
            ScheduleTick.version_id == row.version_id,
            ScheduleTick.node_id == row.node_id,
            ScheduleTick.tick_at == tick,
        )
        .values(instance_id=instance_id)
    )
    session.execute(
        update(Schedule).where(Schedule.id == row.id).values(last_instance_id=instance_id)
    )
    _prune(session, row)
    return result


def skip(session: Session, row: DueSchedule, now: datetime, error: str | None = None) -> None:
    """Move `row` past its due tick without starting anything (the tick was already started, or
    starting failed: `error` says why). The caller commits."""
    begin_write(session)
    _, following = claim(row, now)
    values: dict[str, Any] = {"next_run_at": following, "updated_at": now}
    if error is not None:
        values["last_error"] = error[:500]
    session.execute(
        update(Schedule)
        .where(Schedule.id == row.id, Schedule.next_run_at == row.next_run_at)
        .values(**values)
    )


def _prune(session: Session, row: DueSchedule) -> None:
    same = (ScheduleTick.version_id == row.version_id, ScheduleTick.node_id == row.node_id)
    oldest_kept = (
        select(ScheduleTick.tick_at)
        .where(*same)
        .order_by(ScheduleTick.tick_at.desc())
        .offset(KEEP_TICKS - 1)
        .limit(1)
        .scalar_subquery()
    )
    session.execute(delete(ScheduleTick).where(*same, ScheduleTick.tick_at < oldest_kept))


def upcoming(
    settings: dict[str, Any], anchor: datetime, after: datetime, count: int
) -> list[datetime]:
    """The next `count` runs after `after` (empty when the settings no longer parse)."""
    try:
        return timing(settings, anchor).runs_after(after, count)
    except ValueError:
        return []
