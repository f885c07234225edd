"""ISO-8601 durations for timers and due dates: weeks, days, hours, minutes and seconds.

Years and months are rejected rather than approximated (their length depends on the calendar);
negative durations are rejected; zero (``PT0S``) is allowed. Parsing is exact to the microsecond.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

MAX_LENGTH = 64

_NUMBER = r"([0-9]+(?:[.,][0-9]+)?)"
_PATTERN = re.compile(
    rf"P(?:{_NUMBER}W|(?:{_NUMBER}D)?(?:T(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?)"
)
# Microseconds per unit, in the order of the pattern's groups.
_UNITS = (604_800_000_000, 86_400_000_000, 3_600_000_000, 60_000_000, 1_000_000)
_EXAMPLES = "use ISO-8601 such as PT30M (30 minutes), P1DT2H (1 day 2 hours) or P2W (2 weeks)"


def parse_duration(text: str) -> timedelta:
    """Parse ``PnW`` or ``PnDTnHnMnS`` (case-insensitive) into a timedelta.

    Raises ValueError with a message a process modeller understands.
    """
    if not isinstance(text, str):
        raise ValueError(f"duration must be text like PT5M, not {type(text).__name__}")
    source = text.strip().upper()
    if not source:
        raise ValueError(f"duration is empty; {_EXAMPLES}")
    if len(source) > MAX_LENGTH:
        raise ValueError(f"duration is too long (more than {MAX_LENGTH} characters)")
    if source.startswith("-"):
        raise ValueError("negative durations are not supported")
    if not source.startswith("P"):
        raise ValueError(f"duration {text!r} must start with 'P'; {_EXAMPLES}")
    date_part = source.partition("T")[0]
    if "Y" in date_part or "M" in date_part:
        hint = " (for minutes put a 'T' before them, e.g. PT5M)" if "M" in date_part else ""
        raise ValueError(f"months and years are not supported; use days{hint}")
    match = _PATTERN.fullmatch(source)
    if match is None:
        if "W" in source:
            raise ValueError("weeks cannot be combined with other units; use days")
        raise ValueError(f"invalid duration {text!r}; {_EXAMPLES}")
    values = match.groups()
    present = [index for index, value in enumerate(values) if value is not None]
    if not present:
        raise ValueError(f"duration {text!r} has no values; {_EXAMPLES}")
    if "T" in source and present[-1] < 2:
        raise ValueError(f"'T' in duration {text!r} must be followed by hours, minutes or seconds")
    if any(not values[index].isdigit() for index in present[:-1]):
        raise ValueError(f"only the last value of duration {text!r} may have a fraction")
    total = sum(
        (Decimal(values[index].replace(",", ".")) * _UNITS[index] for index in present),
        Decimal(0),
    ).to_integral_value(ROUND_HALF_EVEN)
    try:
        return timedelta(microseconds=int(total))
    except OverflowError:
        raise ValueError(f"duration {text!r} is too long") from None


def format_duration(value: timedelta) -> str:
    """Format a non-negative timedelta as canonical ISO-8601, e.g. ``P1DT2H30M``, ``PT0S``."""
    if value < timedelta(0):
        raise ValueError("negative durations are not supported")
    days, micros = value.days, value.seconds * 1_000_000 + value.microseconds
    hours, micros = divmod(micros, 3_600_000_000)
    minutes, micros = divmod(micros, 60_000_000)
    seconds, micros = divmod(micros, 1_000_000)
    time_part = (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or micros:
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        time_part += f"{seconds}{fraction}S"
    result = "P" + (f"{days}D" if days else "") + (f"T{time_part}" if time_part else "")
    return result if result != "P" else "PT0S"


@dataclass(frozen=True)
class Cycle:
    """A repeating timer: ``repeat`` times (None: no end), every ``interval``, from ``start``."""

    repeat: int | None
    interval: timedelta
    start: datetime | None = None


def parse_cycle(text: str) -> Cycle:
    """Parse an ISO-8601 repeating interval: ``R3/PT1H``, ``R/P1D`` or ``R5/<start>/P1D``.

    Raises ValueError with a message a modeller understands; the interval must be longer than
    zero, and a start without a time zone is UTC.
    """
    if not isinstance(text, str):
        raise ValueError(f"cycle must be text like R3/PT1H, not {type(text).__name__}")
    parts = text.strip().split("/")
    if len(parts) not in (2, 3) or not re.fullmatch(r"R[0-9]{0,9}", parts[0].upper()):
        raise ValueError(
            f"invalid cycle {text!r}; use R<times>/<duration> such as R3/PT1H, R/P1D for ever, "
            "or R5/2027-01-01T08:00:00Z/P1D with a first date"
        )
    count = int(parts[0][1:]) if parts[0][1:] else None
    if count == 0:
        raise ValueError("a cycle must repeat at least once (R1 or more, or R for ever)")
    start = None
    if len(parts) == 3:
        try:
            start = datetime.fromisoformat(parts[1].strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"the cycle's first date {parts[1]!r} is not an ISO date-time"
            ) from None
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
    interval = parse_duration(parts[-1])
    if interval <= timedelta(0):
        raise ValueError("the cycle's interval must be longer than zero")
    return Cycle(count, interval, start)
