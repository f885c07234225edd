"""The panel's timer start: read its date or schedule and time zone, and preview its next runs.

The schedule itself (ISO repeating intervals, cron, time zones) is `webapp.process.schedules`,
the module the workers use, so the preview shows the times the process will really start.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from webapp.designer.missing import Missing
from webapp.process.schedules import ScheduleError, next_runs

PREVIEW_RUNS = 5
# A schedule whose times fall outside what dates can hold (year 1 to 9999) in its time zone.
OUT_OF_RANGE = "Its times fall outside the years 1 to 9999; choose other dates."


@cache
def zone_names() -> tuple[str, ...]:
    """IANA time zone names for the time zone field's suggestions."""
    return tuple(sorted(available_timezones()))


def _settings(form: Any) -> dict[str, str]:
    key = "date" if form.timer_type.data == "date" else "cycle"
    config = {key: (getattr(form, key).data or "").strip()}
    timezone = (form.timezone.data or "").strip()
    if timezone:
        config["timezone"] = timezone
    return config


def read(form: Any) -> dict[str, str]:
    """A timer start's config from the panel; an invalid setting is marked on its field."""
    config = _settings(form)
    key = "date" if "date" in config else "cycle"
    if not config[key]:
        what = "a date" if key == "date" else "a schedule"
        form[key].errors.append(Missing(f"Enter {what} for the timer start."))
        del config[key]
        return config
    try:
        next_runs(config, datetime.now(UTC), 1)
    except ScheduleError as error:
        name = error.field if error.field in ("date", "cycle", "timezone") else "cycle"
        form[name].errors.append(error.message[:1].upper() + error.message[1:] + ".")
    except (OverflowError, ValueError):
        name = "date" if "date" in config else "cycle"
        form[name].errors.append(OUT_OF_RANGE)
    return config


def preview(config: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The next five runs of a timer start's config, or why there are none."""
    settings = {k: config[k] for k in ("date", "cycle", "timezone") if config.get(k)}
    try:
        runs = next_runs(settings, now or datetime.now(UTC), PREVIEW_RUNS)
    except ScheduleError as error:
        return {"runs": [], "error": error.message}
    except (OverflowError, ValueError):
        return {"runs": [], "error": OUT_OF_RANGE[:-1]}
    name = (settings.get("timezone") or "UTC").strip()
    zone = UTC if name.upper() in ("UTC", "Z") else ZoneInfo(name)
    shown = []
    for run in runs:
        local = run.astimezone(zone)
        text = local.strftime("%a %Y-%m-%d %H:%M")
        if zone is not UTC:
            text += f" {name} ({run.strftime('%H:%M')} UTC)"
        else:
            text += " UTC"
        shown.append({"iso": run.isoformat(), "text": text})
    return {"runs": shown, "error": ""}
