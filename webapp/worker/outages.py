"""Riding out Redis outages: what one raises, growing pauses, waiting until Redis answers."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from webapp.extensions import db
from webapp.infra.database import is_unavailable

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


class DatabaseOutage:
    """What a worker thread says about a database outage: one line when it begins and one when
    it is over; anything else that fails (a bug) is a traceback each time."""

    def __init__(self, logger: logging.Logger, *, failed: str, waiting: str, back: str) -> None:
        self.log = logger
        self.messages = (failed, waiting, back)
        self.down = False

    def failed(self, error: Exception, *, rollback: bool = True) -> None:
        """Note `error`; `rollback` ends the session's transaction (a lost connection may
        refuse even that)."""
        failed, waiting, _ = self.messages
        if not is_unavailable(error):
            self.log.exception(failed)
        elif not self.down:
            self.log.warning("%s: %s", waiting, error)
            self.down = True
        if rollback:
            try:
                db.session.rollback()
            except Exception as rollback_error:  # the connection is gone with the database
                self.log.debug("rollback after a failure: %s", rollback_error)

    def passed(self) -> None:
        """The work went through: say so once if the database had been away."""
        if self.down:
            self.log.info(self.messages[2])
            self.down = False
