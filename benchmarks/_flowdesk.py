"""What the engine benchmarks share: a Flowdesk app on a scratch database with its own RQ queue
and embedded Redis, `python worker.py` processes, completion polling and CPU metering."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine, select, text  # noqa: E402

from tests.helpers.scratch import is_postgres  # noqa: E402

SECRET = "benchmark-secret-key-that-is-long-enough-to-pass"


@dataclass(frozen=True)
class Database:
    url: str

    @property
    def kind(self) -> str:
        return "PostgreSQL" if is_postgres(self.url) else "SQLite"


def start_workers(count: int, env: dict, workdir: Path) -> list[subprocess.Popen]:
    processes = []
    for index in range(count):
        log = open(workdir / f"worker-{index}.log", "w")  # noqa: SIM115
        processes.append(
            subprocess.Popen(
                [sys.executable, "worker.py"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    return processes


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stop_workers(processes: list[subprocess.Popen]) -> None:
    import signal

    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


class Completions(threading.Thread):
    """Polls for completed instances and records each one's start-to-complete seconds (those
    with ids above `floor` only)."""

    def __init__(self, url: str, floor: int = 0, pause: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.engine = create_engine(url)
        self.done: dict[int, float] = {}
        self.stop = threading.Event()
        self.floor = floor
        self.pause = pause

    def run(self) -> None:
        from webapp.models import Instance

        floor = self.floor  # every instance up to here has completed
        while not self.stop.is_set():
            with self.engine.connect() as conn:
                rows = conn.execute(
                    select(Instance.id, Instance.created_at, Instance.ended_at).where(
                        Instance.status == "completed", Instance.id > floor
                    )
                ).all()
            for row in rows:
                self.done.setdefault(row.id, (row.ended_at - row.created_at).total_seconds())
            while floor + 1 in self.done:
                floor += 1
            time.sleep(self.pause)


def machine_busy() -> float:
    """CPU seconds the whole machine spent busy so far (all cores, /proc/stat)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU used by the processes of the run, by group (workers, Redis, database, this one)."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = {**groups, "starter": [os.getpid()]}
        self.start = self._sample()

    def _sample(self) -> dict[str, float]:
        sample = {name: sum(cpu_seconds(pid) for pid in pids) for name, pids in self.groups.items()}
        sample["machine"] = machine_busy()
        return sample

    def stop(self) -> dict[str, float]:
        end = self._sample()
        return {name: end[name] - self.start[name] for name in end}


def backend_pids(app) -> list[int]:
    from webapp.extensions import db

    with app.app_context(), db.engine.connect() as conn:
        if conn.dialect.name != "postgresql":
            return []
        query = "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        return [row[0] for row in conn.execute(text(query))]


def bench_app(
    database: Database, workdir: Path
) -> tuple[Any, Any]:  # (Flask, EmbeddedRedis | None)
    """The app a benchmark runs (own RQ queue) and the embedded Redis it started (None when
    REDIS_URL is set)."""
    from webapp import create_app

    redis_url = os.environ.get("REDIS_URL")
    embedded = None
    if not redis_url:
        from webapp.infra.redis_server import EmbeddedRedis

        embedded = EmbeddedRedis(workdir / "redis")
        embedded.ensure_running()
        redis_url = embedded.url
    config = {
        "SQLALCHEMY_DATABASE_URI": database.url,
        "REDIS_URL": redis_url,
        "SECRET_KEY": SECRET,
        "RQ_QUEUE": f"flowdesk-bench-{uuid.uuid4().hex[:6]}",
        "INSTANCE_PATH": str(workdir),
    }
    return create_app(config), embedded
