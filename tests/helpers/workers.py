"""Running jobs: in-process (`drain`), in `python worker.py --burst`, or in long-running worker
processes; their environment, and waiting for a condition."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

ROOT = Path(__file__).resolve().parents[2]


def worker_env(app_config: dict, **settings: object) -> dict[str, str]:
    """The environment a `python worker.py` process needs to join the suite's database and Redis,
    plus `settings` (such as SWEEP_GRACE) as environment variables."""
    env = dict(
        os.environ,
        DATABASE_URL=app_config["SQLALCHEMY_DATABASE_URI"],
        REDIS_URL=app_config["REDIS_URL"],
        SECRET_KEY=app_config["SECRET_KEY"],
        RQ_QUEUE=app_config["RQ_QUEUE"],
        FLOWDESK_ENV="testing",
        PYTHONPATH=str(ROOT),
    )
    env.update({key: str(value) for key, value in settings.items()})
    return env


TOOL_MODULE = "tests.engine.tools_for_tests"


# Short timings so recovery tests finish in seconds.
FAST = {"SWEEP_INTERVAL": 0.3, "SWEEP_GRACE": 0.3, "JOB_LEASE_GRACE": 0.5}


def drain(session, rounds: int = 200, wait: float = 1.0) -> int:
    """Run pending jobs in-process, as a worker would, until none is due within `wait` seconds."""
    from webapp.engine.runtime import entry_point
    from webapp.models import Job
    from webapp.models.base import utcnow
    from webapp.services import jobs

    ran = 0
    for _ in range(rounds):
        session.rollback()
        soon = session.scalar(
            select(func.min(Job.due_at)).where(
                Job.status == "pending", Job.due_at <= utcnow() + timedelta(seconds=wait)
            )
        )
        if soon is None:
            session.rollback()
            return ran
        time.sleep(max(0.0, (soon - utcnow()).total_seconds()))
        due = session.execute(
            select(Job.id, Job.instance_id, Job.kind, Job.tool)
            .where(Job.status == "pending", Job.due_at <= utcnow())
            .order_by(Job.id)
        ).all()
        session.rollback()
        for row in due:
            jobs.ENTRY_POINTS[entry_point(row.kind, row.tool)](row.id, row.instance_id)
            ran += 1
    raise AssertionError("jobs kept coming")


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def tool_worker_env(app_config: dict, **extra: Any) -> dict[str, str]:
    """A worker with the test tools and quick sweeps; `extra` settings override."""
    return worker_env(app_config, FLOWDESK_EXTRA_TOOL_MODULES=TOOL_MODULE, **{**FAST, **extra})


def run_burst(app_config: dict, **extra: Any) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env=tool_worker_env(app_config, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


class Workers:
    """Long-running `python worker.py` processes, each in its own process group."""

    def __init__(self, app_config: dict, tmp_path: Path) -> None:
        self.app_config = app_config
        self.tmp_path = tmp_path
        self.processes: list[subprocess.Popen] = []

    def start(self, count: int = 1, **extra: Any) -> list[subprocess.Popen]:
        started = []
        for _ in range(count):
            log = open(self.tmp_path / f"worker-{len(self.processes)}.log", "w")  # noqa: SIM115
            process = subprocess.Popen(
                [sys.executable, "worker.py"],
                cwd=ROOT,
                env=tool_worker_env(self.app_config, **extra),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.processes.append(process)
            started.append(process)
        return started

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the worker (its whole process group): no clean-up of any kind."""
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def logs(self) -> str:
        return "\n".join(
            path.read_text()[-3000:] for path in sorted(self.tmp_path.glob("worker-*.log"))
        )

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def deliveries(folder: Path, job_id: int) -> int:
    """How many times RQ ran a delivery of job `job_id` in the workers logging to `folder`."""
    pattern = re.compile(rf"Job OK .*\bjob={job_id}\]|job={job_id}\].*Job OK")
    return sum(
        1
        for path in folder.glob("worker-*.log")
        for line in path.read_text().splitlines()
        if pattern.search(line)
    )
