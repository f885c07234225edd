"""A worker whose Redis drops while it starts up (writing its record and state) waits for Redis
and carries on, as it does at any other moment, instead of exiting with a traceback."""

from __future__ import annotations

import os
import signal
import time

from tests.helpers.documents import chain, node
from tests.helpers.instances import history, load
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import steps


def test_a_worker_that_loses_redis_while_starting_waits_for_it(
    engine, workers, private_redis, tmp_path
):
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))))
    log = tmp_path / "worker-0.log"
    log.touch()
    worker = workers.start(1, REDIS_URL=private_redis.url, SWEEP_GRACE=600)[0]
    deadline = time.monotonic() + 60
    while "started with PID" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.001)
    assert private_redis.process is not None
    os.kill(private_redis.process.pid, signal.SIGKILL)  # while RQ writes the worker's state
    private_redis.process.wait(timeout=10)
    private_redis.process = None
    time.sleep(3)
    assert worker.poll() is None, log.read_text()[-3000:]
    private_redis.ensure_running()
    result = steps.start_instance(engine, version)
    engine.commit()  # the timer waits in the database for the worker's clock
    wait_for(lambda: load(engine, result.instance.id).status == "completed", 30, "the timer")
    assert history(engine, result.instance.id).count(("timer", "wait")) == 1
