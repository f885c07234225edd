"""Timer, message, signal and condition waits: what a token holds while it waits for an event.

Intermediate catches and receive tasks wait for their own event; a host for its boundary events,
a listener for its event sub-process's start, an event-based gateway for each of its targets. All
of them subscribe here: a timer is a `timer` job, a message, a signal or a condition a
subscription row, each carrying the event's node id so that one holder can hold several
(`conditional_events` evaluates the conditions).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from webapp.engine.context import jsonable
from webapp.engine.runtime import Step
from webapp.engine.store import TokenRow
from webapp.process.durations import parse_cycle, parse_duration
from webapp.process.expressions import ExpressionError, evaluate

MAX_CORRELATION_KEY = 500
# The events a token waits for through a timer job or a subscription (errors and escalations
# are thrown, not waited for): also the event sub-process starts that listen through a token.
EVENTS = ("timer", "message", "signal", "conditional")
#: The subscription kind of a conditional event (its row keeps whether the condition held).
CONDITION = "condition"


@dataclass(frozen=True)
class Wait:
    """One wait to place for the event node `node_id`: a timer's due time, or a name and key."""

    node_id: str
    event: str
    due: datetime | None = None
    name: str = ""
    key: str = ""


def prepare(step: Step, holder: TokenRow, node_id: str, event: str) -> Wait | None:
    """The wait `holder` would place for `event` of node `node_id`; None when the timer or the
    correlation key is unusable (then `holder` failed)."""
    config = step.definition.config(node_id)
    if event == "timer":
        try:
            due = first_due(config, step.context(holder), step.now)
        except (ValueError, ExpressionError, OverflowError) as error:
            at = step.definition.mentioned(node_id)
            step.fail(holder, "timer", f"The timer of {at} is invalid: {error}")
            return None
        return Wait(node_id, event, due=due)
    if event == "message":
        key = correlation_key(step, holder, config)
        if key is None:
            return None
        return Wait(node_id, event, name=str(config.get("message") or ""), key=key)
    if event == "conditional":
        return Wait(node_id, event)
    return Wait(node_id, event, name=str(config.get("signal") or ""))


def place(step: Step, holder: TokenRow, wait: Wait) -> None:
    """`holder` waits: a timer job, or a message or signal subscription, at the wait's node."""
    if wait.event == "timer":
        assert wait.due is not None
        step.add_job(holder, "timer", wait.due, node_id=wait.node_id)
        return
    if wait.event == "conditional":
        step.add_subscription(holder, "", "", wait.node_id, kind=CONDITION)
        return
    step.add_subscription(holder, wait.name, wait.key, wait.node_id, kind=wait.event)


def subscribe(step: Step, holder: TokenRow, node_id: str, event: str) -> bool:
    """`holder` waits for `event` of node `node_id` (other events need no wait); False when the
    timer or the correlation key failed it."""
    if event not in EVENTS:
        return True
    wait = prepare(step, holder, node_id, event)
    if wait is None:
        return False
    place(step, holder, wait)
    return True


def withdraw(step: Step, holder: TokenRow, node_ids: tuple[str, ...]) -> None:
    """`holder` no longer waits for the events of `node_ids` (saved or made in this step)."""
    step.close_waits([holder], node_ids)


# --- timers -----------------------------------------------------------------------------------


def due_time(config: dict[str, Any], context: dict[str, Any], now: datetime) -> datetime:
    """When a timer fires: now + `duration`, or the `date` expression's value (UTC if naive)."""
    if config.get("duration"):
        return now + parse_duration(config["duration"])
    value = evaluate(config.get("date") or "null", context)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{value!r} is not an ISO date and time") from None
    if not isinstance(value, datetime):
        raise ValueError(f"the date expression gave {json.dumps(jsonable(value))}, not a date")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def first_due(config: dict[str, Any], context: dict[str, Any], now: datetime) -> datetime:
    """When a timer first fires: its duration, date or cycle (a cycle's first occurrence, which
    is also when an intermediate catch with a cycle fires, once)."""
    if config.get("cycle"):
        cycle = parse_cycle(config["cycle"])
        if cycle.start is not None and cycle.start > now:
            return cycle.start
        return now + cycle.interval
    return due_time(config, context, now)


def next_due(config: dict[str, Any], fired: int, due: datetime) -> datetime | None:
    """After the `fired`-th firing at `due`, when a cycle fires again (None: it is over)."""
    if not config.get("cycle"):
        return None
    cycle = parse_cycle(config["cycle"])
    if cycle.repeat is not None and fired >= cycle.repeat:
        return None
    return due + max(cycle.interval, timedelta(seconds=1))


# --- messages ---------------------------------------------------------------------------------


def correlation_text(value: Any) -> str | None:
    """The text a correlation key is matched by: strings as they are, other values as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"))


def correlation_key(step: Step, token: TokenRow, config: dict[str, Any]) -> str | None:
    """The correlation key `config` gives at `token`; None (and the token fails) when unusable."""
    key, problem = evaluate_key(step, token, config)
    if key is None:
        failed = problem.startswith("failed")
        where = step.definition.mentioned(token.node_id)
        message = f"The correlation key of {where} {problem}" + ("" if failed else ".")
        step.fail(token, "expression" if failed else "correlation", message)
    return key


def evaluate_key(step: Step, token: TokenRow, config: dict[str, Any]) -> tuple[str | None, str]:
    """The correlation key `config` gives at `token`, or None and what is wrong with it."""
    try:
        key = correlation_text(
            evaluate(config.get("correlationKey") or "null", step.context(token))
        )
    except ExpressionError as error:
        return None, f"failed: {error}"
    if key is None:
        return None, "is empty"
    if len(key) > MAX_CORRELATION_KEY:
        return None, f"is over {MAX_CORRELATION_KEY} characters"
    return key, ""
