"""ISO-8601 duration parsing and formatting for timers and due dates."""

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webapp.process.durations import format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("PT5M", timedelta(minutes=5)),
        ("P1DT2H", timedelta(days=1, hours=2)),
        ("P2W", timedelta(weeks=2)),
        ("P1D", timedelta(days=1)),
        ("PT1H30M15S", timedelta(hours=1, minutes=30, seconds=15)),
        ("PT0S", timedelta(0)),
        ("P0D", timedelta(0)),
        ("PT1.5S", timedelta(seconds=1.5)),
        ("PT0,25S", timedelta(milliseconds=250)),
        ("PT0.5H", timedelta(minutes=30)),
        ("P1.5D", timedelta(days=1, hours=12)),
        ("PT0.000001S", timedelta(microseconds=1)),
        ("PT90M", timedelta(minutes=90)),
        ("pt5m", timedelta(minutes=5)),
        ("  PT10S\n", timedelta(seconds=10)),
        ("P999999999D", timedelta(days=999_999_999)),
    ],
)
def test_parse_valid(text, expected):
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("P1Y", "months and years are not supported; use days"),
        ("P1M", "months and years are not supported; use days"),
        ("P1Y2M3D", "months and years are not supported"),
        ("-PT5M", "negative durations are not supported"),
        ("", "duration is empty"),
        ("   ", "duration is empty"),
        ("P", "has no values"),
        ("PT", "has no values"),
        ("P1DT", "'T' in duration"),
        ("5M", "must start with 'P'"),
        ("1 day", "must start with 'P'"),
        ("P1W2D", "weeks cannot be combined"),
        ("PT1.5H30M", "only the last value"),
        ("PT1M1H", "invalid duration"),
        ("P1D2H", "invalid duration"),
        ("PT-5M", "invalid duration"),
        ("PT5", "invalid duration"),
        ("P٣D", "invalid duration"),
        ("P" + "9" * 30 + "D", "is too long"),
        ("PT" + "1" * 80 + "S", "is too long"),
    ],
)
def test_parse_invalid(text, message):
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


def test_month_hint_suggests_minutes():
    with pytest.raises(ValueError, match="PT5M"):
        parse_duration("P5M")


@pytest.mark.parametrize("value", [None, 5, 1.5, b"PT5M"])
def test_parse_non_text(value):
    with pytest.raises(ValueError, match="duration must be text"):
        parse_duration(value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (timedelta(0), "PT0S"),
        (timedelta(minutes=5), "PT5M"),
        (timedelta(days=1, hours=2), "P1DT2H"),
        (timedelta(weeks=2), "P14D"),
        (timedelta(hours=1, minutes=30, seconds=15), "PT1H30M15S"),
        (timedelta(seconds=1, microseconds=500_000), "PT1.5S"),
        (timedelta(microseconds=1), "PT0.000001S"),
        (timedelta(days=3, seconds=7), "P3DT7S"),
    ],
)
def test_format(value, expected):
    assert format_duration(value) == expected


def test_format_rejects_negative():
    with pytest.raises(ValueError, match="negative"):
        format_duration(timedelta(seconds=-1))


@given(st.timedeltas(min_value=timedelta(0)))
def test_format_round_trips(value):
    assert parse_duration(format_duration(value)) == value


@given(st.text(max_size=80))
def test_parse_any_text_returns_or_raises_value_error(text):
    try:
        result = parse_duration(text)
    except ValueError as exc:
        assert str(exc)
    else:
        assert result >= timedelta(0)
