"""Timer start events: schedules kept by publishing, fired by workers once per tick, paused."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from rq import Worker
from sqlalchemy import func, select

from tests.engine.timer_start_docs import iso, soon, timed
from tests.helpers.documents import document, flow, node
from tests.helpers.instances import history
from tests.helpers.processes import publish_document
from tests.helpers.workers import FAST, run_burst, wait_for
from webapp.models import HistoryEntry, Instance, Process, ProcessVersion
from webapp.models.base import utcnow
from webapp.models.schedules import Schedule, ScheduleTick
from webapp.services import schedules
from webapp.services.processes import ProcessError


def schedule_rows(session, key: str = "proc") -> list[Schedule]:
    session.rollback()
    return list(
        session.scalars(
            select(Schedule)
            .join(Process, Process.id == Schedule.process_id)
            .where(Process.key == key)
            .order_by(Schedule.node_id)
        )
    )


def ticks(session) -> list[ScheduleTick]:
    session.rollback()
    return list(session.scalars(select(ScheduleTick).order_by(ScheduleTick.tick_at)))


def scheduled_instances(session) -> list[Instance]:
    session.rollback()
    return list(
        session.scalars(select(Instance).where(Instance.started_via == "schedule").order_by("id"))
    )


def test_three_workers_start_exactly_one_instance_per_tick_with_one_killed(
    engine, workers, redis_client
):
    """Workers race for every tick (each checks every 50 ms); one is SIGKILLed mid-way. Each tick
    started exactly one instance, every instance belongs to a tick, and ticks kept coming."""
    group = workers.start(3, SCHEDULE_INTERVAL=0.05, **FAST)
    wait_for(lambda: len(Worker.all(connection=redis_client)) == 3, what="three workers")
    begin = utcnow().replace(microsecond=0) + timedelta(seconds=2)
    publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    (row,) = schedule_rows(engine)
    assert row.next_run_at == begin
    wait_for(lambda: len(ticks(engine)) >= 3, what="three ticks", timeout=30)
    workers.kill(group[0])
    seen = len(ticks(engine))
    wait_for(lambda: len(ticks(engine)) >= seen + 3, what="three more ticks", timeout=30)
    schedules.pause(_admin(engine), row.id)
    wait_for(
        lambda: all(i.status == "completed" for i in scheduled_instances(engine)),
        what="every instance to finish",
    )
    made = ticks(engine)
    instances = scheduled_instances(engine)
    assert [tick.instance_id for tick in made] == [instance.id for instance in instances]
    assert len({tick.tick_at for tick in made}) == len(made) >= 6
    assert all((tick.tick_at - begin) % timedelta(seconds=1) == timedelta(0) for tick in made)
    assert all(instance.version_id == row.version_id for instance in instances)
    assert "timer starts failed" not in workers.logs()


def test_a_worker_started_after_downtime_starts_one_instance_for_the_missed_ticks(
    engine, app_config
):
    """No worker ran during three ticks: the first worker to start runs one instance, for the
    latest of them, and the schedule's next run is in the future."""
    begin = utcnow().replace(microsecond=0) + timedelta(seconds=2)
    publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    time.sleep(max(0.0, (begin + timedelta(seconds=3.2) - utcnow()).total_seconds()))
    run_burst(app_config)
    (tick,) = ticks(engine)
    assert tick.tick_at >= begin + timedelta(seconds=3)
    assert [i.id for i in scheduled_instances(engine)] == [tick.instance_id]
    (row,) = schedule_rows(engine)
    assert row.next_run_at > tick.tick_at


def test_missed_ticks_after_downtime_start_one_instance_for_the_latest(engine):
    begin = soon()
    publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    later = begin + timedelta(seconds=10, milliseconds=500)
    assert schedules.run_due(now=later) == 1
    assert schedules.run_due(now=later) == 0
    (tick,) = ticks(engine)
    assert tick.tick_at == begin + timedelta(seconds=10)
    (row,) = schedule_rows(engine)
    assert row.next_run_at == begin + timedelta(seconds=11)
    assert row.last_tick_at == tick.tick_at and row.last_instance_id == tick.instance_id
    assert [i.id for i in scheduled_instances(engine)] == [tick.instance_id]


def test_a_limited_cycle_ends_and_a_date_start_fires_once(engine):
    begin = soon()
    publish_document(timed(cycle=f"R2/{iso(begin)}/PT1S"), key="twice")
    publish_document(timed(date=iso(begin)), key="once")
    assert schedules.run_due(now=begin - timedelta(seconds=1)) == 0
    assert schedules.run_due(now=begin) == 2
    assert schedules.run_due(now=begin + timedelta(seconds=1)) == 1
    for moment in range(2, 30, 7):
        assert schedules.run_due(now=begin + timedelta(seconds=moment)) == 0
    assert schedule_rows(engine, "once")[0].next_run_at is None
    assert schedule_rows(engine, "twice")[0].next_run_at is None
    keys = [i.process_key for i in scheduled_instances(engine)]
    assert sorted(keys) == ["once", "twice", "twice"]


def test_a_scheduled_instance_starts_at_its_timer_start_in_the_process_partition(engine, demo):
    begin = soon()
    publish_document(timed(cycle=f"R/{iso(begin)}/PT1M"), partition="hr")
    assert schedules.run_due(now=begin) == 1
    (instance,) = scheduled_instances(engine)
    assert instance.partition_id is not None and instance.partition.key == "hr"
    assert instance.started_by_id is None
    assert instance.status == "completed"
    started = engine.scalar(
        select(HistoryEntry).where(
            HistoryEntry.instance_id == instance.id, HistoryEntry.kind == "started"
        )
    )
    assert started.details.get("via") == "schedule"
    assert ("completed", None) in history(engine, instance.id)


def test_publishing_moves_the_schedule_and_keeps_a_pause(engine):
    begin = soon()
    first = publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    (row,) = schedule_rows(engine)
    schedules.pause(_admin(engine), row.id)
    second = publish_document(timed(cycle=f"R/{iso(begin)}/PT2S"))
    (row,) = schedule_rows(engine)
    assert (row.version_id, row.paused) == (second.id, True)
    assert row.version_id != first.id
    assert schedules.run_due(now=begin + timedelta(seconds=5)) == 0
    schedules.resume(_admin(engine), row.id, now=begin + timedelta(seconds=5))
    (row,) = schedule_rows(engine)
    assert row.next_run_at == begin + timedelta(seconds=6)
    assert schedules.run_due(now=begin + timedelta(seconds=6)) == 1
    assert [i.version_id for i in scheduled_instances(engine)] == [second.id]

    # Same settings, new version: the schedule (next run, last run) carries on.
    third = publish_document(
        {**timed(cycle=f"R/{iso(begin)}/PT2S"), "name": "renamed", "description": "v3"}
    )
    (row,) = schedule_rows(engine)
    assert (row.version_id, row.next_run_at) == (third.id, begin + timedelta(seconds=8))
    assert row.last_tick_at == begin + timedelta(seconds=6)

    # Another start node id: a new, unpaused schedule; the old one is gone.
    publish_document(timed("nightly", cycle="0 2 * * *", timezone="Europe/Berlin"))
    (row,) = schedule_rows(engine)
    assert (row.node_id, row.paused) == ("nightly", False)
    assert row.next_run_at is not None and row.next_run_at > utcnow()

    # No timer start at all: no schedule.
    publish_document(_none_start_only())
    assert schedule_rows(engine) == []


def test_pause_stops_instances_and_resume_skips_the_paused_ticks(engine):
    begin = soon()
    publish_document(timed(cycle=f"R/{iso(begin)}/PT1S"))
    (row,) = schedule_rows(engine)
    assert schedules.run_due(now=begin) == 1
    schedules.pause(_admin(engine), row.id)
    for second in range(1, 6):
        assert schedules.run_due(now=begin + timedelta(seconds=second)) == 0
    schedules.resume(_admin(engine), row.id, now=begin + timedelta(seconds=5, milliseconds=10))
    assert schedules.run_due(now=begin + timedelta(seconds=5, milliseconds=20)) == 0
    assert schedules.run_due(now=begin + timedelta(seconds=6)) == 1
    assert [t.tick_at - begin for t in ticks(engine)] == [timedelta(0), timedelta(seconds=6)]


def test_bad_timer_settings_refuse_the_publish_and_write_nothing(engine):
    with pytest.raises(ProcessError) as refused:
        publish_document(timed(cycle="R/PT1S", timezone="Mars/Olympus"))
    engine.rollback()
    problem = refused.value.problems[0]
    assert problem.element_id == "tick"
    assert "timezone" in problem.message and "Mars/Olympus" in problem.message
    assert engine.scalar(select(func.count()).select_from(ProcessVersion)) == 0
    assert engine.scalar(select(func.count()).select_from(Schedule)) == 0


def _none_start_only() -> dict:
    return document(
        {"start": node("startEvent"), "end": node("endEvent")}, {"f1": flow("start", "end")}
    )


def _admin(session):
    from tests.helpers.app import make_user
    from webapp.models import User

    session.rollback()
    user = session.scalar(select(User).where(User.username == "sched-admin"))
    return user or make_user("sched-admin", ["admin"])
