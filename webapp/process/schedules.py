"""Timer start schedules: parse a process-level timer start's settings and list its run times.

A timer start has exactly one of ``date`` (an ISO date-time: one run) or ``cycle``: an ISO-8601
repeating interval (``R/2027-01-01T08:00:00Z/P1D``, ``R5/...``, ``R/PT1H``) or a five-field cron
expression. ``timezone`` (an IANA name, default UTC) reads dates written without an offset and
the cron expression's wall clock.

Time zone rules (documented in docs/process-format.md, "Timer start events"):
- cron runs on the zone's wall clock; a wall time skipped by a DST jump runs at the same time
  after the jump (02:30 becomes 03:30), and a repeated wall time runs once, the first time;
- a cycle of whole days or weeks keeps its wall-clock time across DST (08:00 stays 08:00); other
  intervals are exact elapsed time;
- a cycle with no first date starts one interval after its anchor (the moment it was published).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadCronError, CroniterBadDateError, croniter

from webapp.process.durations import Cycle, parse_cycle

MIN_INTERVAL = timedelta(seconds=1)
MAX_EXPRESSION = 120
_DAY = timedelta(days=1)
_ISO_CYCLE = re.compile(r"\s*R[0-9]{0,9}\s*/", re.IGNORECASE)
_CRON_FIELDS = 5
_NEAR = timedelta(hours=3)
_CRON_STEPS = 2_000


class ScheduleError(ValueError):
    """A timer start's settings are invalid; ``field`` names the config key at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Schedule:
    """When a timer start runs: all run times are aware UTC datetimes, strictly increasing."""

    kind: Literal["date", "cycle", "cron"]
    expression: str
    timezone: str
    anchor: datetime
    date: datetime | None = None
    cycle: Cycle | None = None

    @property
    def zone(self) -> tzinfo:
        return UTC if self.timezone == "UTC" else ZoneInfo(self.timezone)

    def describe(self) -> str:
        """The expression with its time zone, for people."""
        return f"{self.expression} ({self.timezone})"

    def next_after(self, moment: datetime) -> datetime | None:
        """The first run strictly after `moment` (None: there is no further run)."""
        moment = _aware(moment)
        if self.kind == "date":
            assert self.date is not None
            return self.date if self.date > moment else None
        if self.kind == "cron":
            return self._cron_after(moment)
        index = self._index_at_or_before(moment)
        return self._occurrence(0 if index is None else index + 1)

    def latest_at_or_before(self, moment: datetime) -> datetime | None:
        """The last run at or before `moment` (None: none is due yet)."""
        moment = _aware(moment)
        if self.kind == "date":
            assert self.date is not None
            return self.date if self.date <= moment else None
        if self.kind == "cron":
            return self._cron_at_or_before(moment)
        index = self._index_at_or_before(moment)
        return None if index is None else self._occurrence(index)

    def first(self) -> datetime | None:
        """The first run of all."""
        if self.kind == "date":
            return self.date
        if self.kind == "cycle":
            return self._occurrence(0)
        return self._cron_after(self.anchor)

    def runs_after(self, moment: datetime, count: int) -> list[datetime]:
        """Up to `count` runs strictly after `moment`."""
        runs: list[datetime] = []
        current: datetime | None = _aware(moment)
        while len(runs) < count and current is not None:
            current = self.next_after(current)
            if current is not None:
                runs.append(current)
        return runs

    # --- ISO cycles -------------------------------------------------------------------------

    def _first_local(self) -> datetime:
        assert self.cycle is not None
        if self.cycle.start is not None:
            return self.cycle.start.astimezone(self.zone)
        return (self.anchor + self.cycle.interval).astimezone(self.zone)

    def _wall_clock(self) -> bool:
        assert self.cycle is not None
        return self.cycle.interval % _DAY == timedelta(0)

    def _occurrence(self, index: int) -> datetime | None:
        """The `index`-th run (0 is the first), None past the last repetition."""
        assert self.cycle is not None
        if index < 0 or (self.cycle.repeat is not None and index >= self.cycle.repeat):
            return None
        first = self._first_local()
        try:
            if self._wall_clock():
                local = first.replace(tzinfo=None) + self.cycle.interval * index
                return _resolve(local, self.zone)
            return (first + self.cycle.interval * index).astimezone(UTC)
        except OverflowError:
            return None

    def _index_at_or_before(self, moment: datetime) -> int | None:
        """The index of the last run at or before `moment` (ignoring the repeat limit)."""
        assert self.cycle is not None
        first = self._first_local().astimezone(UTC)
        if moment < first:
            return None
        index = (moment - first) // self.cycle.interval
        if self.cycle.repeat is not None:
            index = min(index, self.cycle.repeat - 1)
        while index > 0 and _after(self._occurrence(index), moment):
            index -= 1
        while True:
            following = self._occurrence(index + 1)
            if following is None or following > moment:
                return index
            index += 1

    # --- cron ---------------------------------------------------------------------------------

    def _cron_after(self, moment: datetime) -> datetime | None:
        start = self._cron_wall(moment, min) - timedelta(minutes=1)
        iterator = croniter(self.expression, start)
        try:
            for _ in range(_CRON_STEPS):
                candidate = _resolve(iterator.get_next(datetime), self.zone)
                if candidate > moment:
                    return candidate
        except (CroniterBadDateError, OverflowError):
            return None
        return None

    def _cron_at_or_before(self, moment: datetime) -> datetime | None:
        start = self._cron_wall(moment, max) + timedelta(minutes=1)
        iterator = croniter(self.expression, start)
        try:
            for _ in range(_CRON_STEPS):
                candidate = _resolve(iterator.get_prev(datetime), self.zone)
                if candidate <= moment:
                    return candidate
        except (CroniterBadDateError, OverflowError):
            return None
        return None

    def _cron_wall(self, moment: datetime, pick: Any) -> datetime:
        """`moment` on the wall clock, read with the smallest (min) or largest (max) UTC offset
        in force within three hours of it, so that no run near a DST jump is missed."""
        offsets = [
            (moment + shift).astimezone(self.zone).utcoffset() or timedelta(0)
            for shift in (-_NEAR, timedelta(0), _NEAR)
        ]
        return (moment + pick(offsets)).replace(tzinfo=None, second=0, microsecond=0)


def _after(value: datetime | None, moment: datetime) -> bool:
    return value is None or value > moment


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _resolve(local: datetime, zone: tzinfo) -> datetime:
    """A wall time in `zone` as UTC: a time skipped by a DST jump is read with the offset before
    the jump (02:30 becomes 03:30), a repeated one is its first occurrence (fold=0)."""
    return local.replace(tzinfo=zone, fold=0).astimezone(UTC)


def _zone(config: Mapping[str, Any]) -> str:
    name = config.get("timezone")
    if name is None or name == "":
        return "UTC"
    if not isinstance(name, str):
        raise ScheduleError("timezone", "must be an IANA time zone name such as Europe/Berlin")
    name = name.strip()
    if name.upper() == "UTC" or name == "Z":
        return "UTC"
    if len(name) > 64 or not re.fullmatch(r"[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*", name):
        raise ScheduleError("timezone", f"{name[:64]!r} is not an IANA time zone name")
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(
            "timezone", f"unknown time zone {name!r}; use an IANA name such as Europe/Berlin"
        ) from None
    return name


def _parse_date(text: str, zone: tzinfo) -> datetime:
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ScheduleError(
            "date", f"{text[:64]!r} is not an ISO date-time such as 2027-01-01T08:00:00Z"
        ) from None
    if value.tzinfo is None:
        return _resolve(value, zone)
    return value.astimezone(UTC)


def _parse_iso_cycle(text: str, zone: tzinfo) -> Cycle:
    try:
        cycle = parse_cycle(text)
    except ValueError as error:
        raise ScheduleError("cycle", str(error)) from None
    if cycle.interval < MIN_INTERVAL:
        raise ScheduleError("cycle", "the interval must be at least one second (PT1S)")
    if cycle.start is not None:
        written = text.strip().split("/")[1].strip()
        if re.search(r"(Z|[+-][0-9]{2}(:?[0-9]{2})?)$", written, re.IGNORECASE) is None:
            naive = cycle.start.replace(tzinfo=None)
            cycle = Cycle(cycle.repeat, cycle.interval, _resolve(naive, zone))
    return cycle


def _check_cron(text: str) -> str:
    expression = " ".join(text.split())
    if len(expression.split(" ")) != _CRON_FIELDS:
        raise ScheduleError(
            "cycle",
            f"{text[:64]!r} is neither an ISO repeating interval (R/PT1H, "
            "R5/2027-01-01T08:00:00Z/P1D) nor a cron expression of five fields "
            "(minute hour day-of-month month day-of-week, e.g. 0 8 * * MON-FRI)",
        )
    try:
        valid = croniter.is_valid(expression)
    except (CroniterBadCronError, ValueError, TypeError, KeyError):
        valid = False
    if not valid:
        raise ScheduleError("cycle", f"invalid cron expression {expression!r}")
    try:
        croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        raise ScheduleError("cycle", f"cron expression {expression!r} never runs") from None
    except (CroniterBadCronError, ValueError, TypeError, KeyError):
        raise ScheduleError("cycle", f"invalid cron expression {expression!r}") from None
    return expression


def parse_schedule(config: Mapping[str, Any], anchor: datetime | None = None) -> Schedule:
    """Read a timer start's ``date`` or ``cycle`` and ``timezone``.

    `anchor` (default: now) is when a cycle without a first date starts counting. Raises
    ScheduleError naming the field at fault.
    """
    timezone = _zone(config)
    zone: tzinfo = UTC if timezone == "UTC" else ZoneInfo(timezone)
    anchor = _aware(anchor or datetime.now(UTC))
    date, cycle = config.get("date"), config.get("cycle")
    if config.get("duration"):
        raise ScheduleError("duration", "a timer start takes a date or a cycle, not a duration")
    for field, value in (("date", date), ("cycle", cycle)):
        if value is not None and not isinstance(value, str):
            raise ScheduleError(field, f"must be text, not {type(value).__name__}")
        if isinstance(value, str) and len(value) > MAX_EXPRESSION:
            raise ScheduleError(field, f"is too long (more than {MAX_EXPRESSION} characters)")
    date = (date or "").strip()
    cycle = (cycle or "").strip()
    if date and cycle:
        raise ScheduleError("cycle", "a timer start takes either a date or a cycle, not both")
    if date:
        return Schedule("date", date, timezone, anchor, date=_parse_date(date, zone))
    if not cycle:
        raise ScheduleError(
            "cycle",
            "a timer start needs a date (2027-01-01T08:00:00Z), a repeating interval "
            "(R/PT1H) or a cron expression (0 8 * * MON-FRI)",
        )
    if _ISO_CYCLE.match(cycle):
        return Schedule("cycle", cycle, timezone, anchor, cycle=_parse_iso_cycle(cycle, zone))
    return Schedule("cron", _check_cron(cycle), timezone, anchor)


def next_runs(config: Mapping[str, Any], now: datetime, count: int = 5) -> list[datetime]:
    """The next `count` run times after `now` of a timer start (for the designer's preview)."""
    schedule = parse_schedule(config, anchor=now)
    return schedule.runs_after(now, count)
