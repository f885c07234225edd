"""Riding out Redis outages: what one raises, growing pauses, waiting until Redis answers."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

# What a Redis outage raises: a dropped or refused connection, a timeout, a server still loading.
REDIS_DOWN = (RedisConnectionError, RedisTimeoutError)
# The longest pause between two tries to reach Redis again (RQ's own default is 60 s).
MAX_REDIS_WAIT = 10.0


def pauses(first: float = 1.0) -> Iterator[float]:
    """Pauses doubling from `first` up to MAX_REDIS_WAIT."""
    pause = first
    while True:
        yield pause
        pause = min(pause * 2, MAX_REDIS_WAIT)


def sleep_unless(stop: Callable[[], bool], seconds: float) -> None:
    """Sleep `seconds`, or less as soon as `stop()` is true."""
    deadline = time.monotonic() + seconds
    while not stop() and time.monotonic() < deadline:
        time.sleep(min(0.1, seconds))


def wait_for_redis(
    connection: Redis, who: str = "Worker", stopping: Callable[[], bool] = lambda: False
) -> None:
    """Try Redis with growing pauses until it answers (or `stopping()`), logging each miss."""
    for attempt, pause in enumerate(pauses()):
        if stopping():
            return
        try:
            connection.ping()
        except REDIS_DOWN as error:
            log.warning("%s: Redis unavailable (%s); trying again in %.0f s", who, error, pause)
            sleep_unless(stopping, pause)
            continue
        if attempt:
            log.info("%s: Redis is back", who)
        return
