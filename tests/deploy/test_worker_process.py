"""A worker process as an operator sees it: its log lines, and no child process left behind when
the worker dies without any clean-up."""

from __future__ import annotations

import logging
import os
import re
import signal
import time
import uuid
from pathlib import Path

from tests.helpers.documents import chain, node
from tests.helpers.instances import load
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp import create_app
from webapp.engine import steps
from webapp.worker.sweeper import Sweeper


def _children(pid: int) -> list[int]:
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(child) for child in listed.split()]


def _log(folder: Path) -> str:
    """The first worker's log so far."""
    return (folder / "worker-0.log").read_text()


def test_a_job_s_lines_name_its_instance_and_job_and_it_is_logged_ok_once(
    engine, workers, tmp_path
):
    version = publish_document(chain(("a", node("serviceTask", tool="noop", saveTo="a"))))
    result = steps.start_instance(engine, version)
    engine.commit()  # not enqueued: the worker's start-up sweep delivers it
    instance_id = result.instance.id
    workers.start(1)
    wait_for(lambda: load(engine, instance_id).status == "completed", 60, "the instance")
    wait_for(lambda: "Job OK" in (tmp_path / "worker-0.log").read_text(), 10, "the OK line")
    ok_lines = [
        line for line in (tmp_path / "worker-0.log").read_text().splitlines() if "Job OK" in line
    ]
    assert len(ok_lines) == 1, ok_lines
    assert re.search(rf"\[instance={instance_id} job=\d+\]", ok_lines[0]), ok_lines[0]


def test_a_worker_runs_no_scheduler_process_so_a_killed_one_leaves_nothing_behind(
    engine, workers, tmp_path
):
    """Timers wait in the database for the worker's clock thread: no RQ scheduler child runs,
    and none is left holding a lock when the worker is killed."""
    version = publish_document(chain(("wait", node("timerCatch", duration="PT1S"))))
    result = steps.start_instance(engine, version)
    engine.commit()
    worker = workers.start(1)[0]
    wait_for(lambda: load(engine, result.instance.id).status == "completed", 60, "the timer")
    assert _children(worker.pid) == [], "the worker started a child process"
    assert "Scheduler" not in _log(tmp_path)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait(timeout=10)


def test_the_sweep_logs_a_database_outage_in_one_line_not_a_traceback(app_config, caplog):
    unreachable = dict(
        app_config,
        SQLALCHEMY_DATABASE_URI="postgresql://flowdesk:pw@127.0.0.1:9/flowdesk",
        RQ_QUEUE=f"outage-{uuid.uuid4().hex[:8]}",
        SWEEP_INTERVAL=0.05,
        RETENTION_INTERVAL=0.05,
    )
    sweeper = Sweeper(create_app(unreachable))
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            sweeper.sweep_once()
            time.sleep(0.1)
    flowdesk = [r for r in caplog.records if r.name.startswith("webapp")]
    assert not [r for r in flowdesk if r.exc_info], "a traceback for an outage"
    waiting = [r for r in flowdesk if "sweeps wait until the database is back" in r.message]
    assert len(waiting) == 1, [r.message for r in flowdesk]
