"""Timer start schedules: dates, ISO repeating intervals and cron with time zones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from croniter import croniter

from webapp.process.schedules import ScheduleError, next_runs, parse_schedule

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2027, 1, 10, 12, 0, tzinfo=UTC)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def test_date_runs_once_and_reads_naive_dates_in_the_time_zone() -> None:
    schedule = parse_schedule({"date": "2027-02-01T09:00:00", "timezone": "Europe/Berlin"})
    assert schedule.next_after(NOW) == utc(2027, 2, 1, 8)
    assert schedule.next_after(utc(2027, 2, 1, 8)) is None
    assert schedule.latest_at_or_before(utc(2027, 2, 1, 7, 59)) is None
    assert schedule.latest_at_or_before(utc(2027, 3, 1)) == utc(2027, 2, 1, 8)
    assert next_runs({"date": "2027-02-01T09:00:00Z"}, NOW) == [utc(2027, 2, 1, 9)]


def test_cycle_with_first_date_counts_from_it_and_r5_ends_after_five_runs() -> None:
    config = {"cycle": "R5/2027-01-11T08:00:00Z/P1D"}
    runs = next_runs(config, NOW, count=10)
    assert runs == [utc(2027, 1, day, 8) for day in range(11, 16)]
    schedule = parse_schedule(config)
    assert schedule.next_after(utc(2027, 1, 15, 8)) is None
    assert schedule.latest_at_or_before(utc(2027, 6, 1)) == utc(2027, 1, 15, 8)
    assert schedule.latest_at_or_before(utc(2027, 1, 13, 7, 59)) == utc(2027, 1, 12, 8)
    assert schedule.latest_at_or_before(utc(2027, 1, 13, 8)) == utc(2027, 1, 13, 8)


def test_cycle_without_first_date_starts_one_interval_after_its_anchor() -> None:
    schedule = parse_schedule({"cycle": "R/PT1H"}, anchor=NOW)
    assert schedule.first() == NOW + timedelta(hours=1)
    assert schedule.latest_at_or_before(NOW + timedelta(minutes=59)) is None
    assert schedule.latest_at_or_before(NOW + timedelta(hours=5, minutes=3)) == NOW + timedelta(
        hours=5
    )
    assert next_runs({"cycle": "R2/PT30M"}, NOW, count=5) == [
        NOW + timedelta(minutes=30),
        NOW + timedelta(hours=1),
    ]


def test_daily_cycle_keeps_its_wall_clock_time_across_dst_in_berlin() -> None:
    config = {"cycle": "R/2027-03-26T08:00:00/P1D", "timezone": "Europe/Berlin"}
    runs = next_runs(config, utc(2027, 3, 25), count=4)
    assert [run.astimezone(BERLIN).hour for run in runs] == [8, 8, 8, 8]
    assert runs[:3] == [utc(2027, 3, 26, 7), utc(2027, 3, 27, 7), utc(2027, 3, 28, 6)]
    autumn = next_runs(config, utc(2027, 10, 29), count=3)
    assert autumn == [utc(2027, 10, 29, 6), utc(2027, 10, 30, 6), utc(2027, 10, 31, 7)]


def test_hourly_cycle_is_exact_elapsed_time_across_dst() -> None:
    config = {"cycle": "R/2027-03-28T00:00:00Z/PT1H", "timezone": "Europe/Berlin"}
    runs = next_runs(config, utc(2027, 3, 27, 23, 30), count=4)
    assert [b - a for a, b in pairwise(runs)] == [timedelta(hours=1)] * 3


def test_cron_runs_on_berlin_wall_clock_across_dst() -> None:
    config = {"cycle": "0 8 * * *", "timezone": "Europe/Berlin"}
    spring = next_runs(config, utc(2027, 3, 27), count=2)
    assert spring == [utc(2027, 3, 27, 7), utc(2027, 3, 28, 6)]
    autumn = next_runs(config, utc(2027, 10, 30), count=2)
    assert autumn == [utc(2027, 10, 30, 6), utc(2027, 10, 31, 7)]


def test_cron_time_skipped_by_spring_forward_runs_after_the_jump() -> None:
    runs = next_runs({"cycle": "30 2 * * *", "timezone": "Europe/Berlin"}, utc(2027, 3, 27, 12))
    assert runs[0] == utc(2027, 3, 28, 1, 30)  # 03:30 CEST: 02:30 does not exist that day
    assert runs[1] == utc(2027, 3, 29, 0, 30)


def test_cron_time_repeated_by_fall_back_runs_once() -> None:
    runs = next_runs({"cycle": "30 2 * * *", "timezone": "Europe/Berlin"}, utc(2027, 10, 30, 12))
    assert runs[:2] == [utc(2027, 10, 31, 0, 30), utc(2027, 11, 1, 1, 30)]


@pytest.mark.parametrize(
    "expression", ["*/20 * * * *", "0 * * * *", "30 2 * * *", "15 1-4 * * *", "0 2 * * 0"]
)
@pytest.mark.parametrize("day", [datetime(2027, 3, 28), datetime(2027, 10, 31)])
def test_cron_matches_a_minute_by_minute_reference_around_dst(
    expression: str, day: datetime
) -> None:
    """Every run is the first instant at which a wall-clock match happens (skipped times move
    forward by the jump), listed once and in order; latest_at_or_before agrees with next_after."""
    schedule = parse_schedule({"cycle": expression, "timezone": "Europe/Berlin"})
    start = day.replace(tzinfo=UTC) - timedelta(hours=6)
    expected = []
    for minute in range(0, 36 * 60):
        wall = (start + timedelta(minutes=minute)).replace(tzinfo=None)
        if croniter.match(expression, wall):
            instant = wall.replace(tzinfo=BERLIN, fold=0).astimezone(UTC)
            if instant not in expected:
                expected.append(instant)
    expected.sort()
    first = expected[0] - timedelta(seconds=1)
    got = schedule.runs_after(first, len(expected))
    assert got == expected
    for earlier, later in pairwise(got):
        assert schedule.latest_at_or_before(later - timedelta(seconds=1)) == earlier
        assert schedule.latest_at_or_before(later) == later


@pytest.mark.parametrize(
    ("config", "field", "words"),
    [
        ({}, "cycle", "needs a date"),
        ({"date": "tomorrow"}, "date", "not an ISO date-time"),
        ({"date": 5}, "date", "must be text"),
        ({"date": "2027-01-01T00:00:00Z", "cycle": "R/PT1H"}, "cycle", "not both"),
        ({"cycle": "R0/PT1H"}, "cycle", "at least once"),
        ({"cycle": "R/PT0S"}, "cycle", "longer than zero"),
        ({"cycle": "R/PT0.5S"}, "cycle", "at least one second"),
        ({"cycle": "R/P1M"}, "cycle", "months and years"),
        ({"cycle": "R/yesterday/P1D"}, "cycle", "not an ISO date-time"),
        ({"cycle": "every day"}, "cycle", "five fields"),
        ({"cycle": "0 8 * *"}, "cycle", "five fields"),
        ({"cycle": "0 0 8 * * *"}, "cycle", "five fields"),
        ({"cycle": "61 8 * * *"}, "cycle", "invalid cron"),
        ({"cycle": "0 0 31 2 *"}, "cycle", "never runs"),
        ({"cycle": "R/PT1H", "timezone": "Mars/Olympus"}, "timezone", "unknown time zone"),
        ({"cycle": "R/PT1H", "timezone": "../etc/passwd"}, "timezone", "not an IANA"),
        ({"cycle": "R/PT1H", "timezone": 3}, "timezone", "IANA"),
        ({"duration": "PT5M"}, "duration", "not a duration"),
        ({"cycle": "R/PT1H" + " " * 200}, "cycle", "too long"),
    ],
)
def test_bad_settings_name_the_field(config: dict[str, object], field: str, words: str) -> None:
    with pytest.raises(ScheduleError) as caught:
        parse_schedule(config, anchor=NOW)
    assert caught.value.field == field
    assert words in caught.value.message


def test_time_zone_defaults_to_utc_and_describe_names_it() -> None:
    schedule = parse_schedule({"cycle": " 0  8 * * MON-FRI "})
    assert schedule.timezone == "UTC"
    assert schedule.describe() == "0 8 * * MON-FRI (UTC)"
    assert parse_schedule({"cycle": "0 8 * * *", "timezone": "Europe/Berlin"}).describe() == (
        "0 8 * * * (Europe/Berlin)"
    )
