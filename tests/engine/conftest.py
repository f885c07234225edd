"""Engine test helpers: documents, publishing, running jobs in-process, real worker processes."""

from __future__ import annotations

import base64
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from tests.conftest import make_user
from tests.conftest import worker_env as base_worker_env
from tests.engine.documents import chain, document, flow, node, sample_document  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
TOOL_MODULE = "tests.engine.tools_for_tests"

# Short timings so recovery tests finish in seconds.
FAST = {"SWEEP_INTERVAL": 0.3, "SWEEP_GRACE": 0.3, "JOB_LEASE_GRACE": 0.5}


def publish_document(
    doc: dict[str, Any], key: str = "proc", partition: str | None = None, *, name: str | None = None
):
    """Create (or update) process `key` (called `name`) with `doc` and publish it; needs an app
    context."""
    from webapp.extensions import db
    from webapp.models import Partition, Process
    from webapp.services import processes

    partition_id = None
    if partition:
        partition_id = db.session.scalar(select(Partition.id).where(Partition.key == partition))
        assert partition_id, f"no partition {partition}"
    process = db.session.scalar(select(Process).where(Process.key == key))
    if process is None:
        process = processes.create_process(
            key, name or key, partition_id=partition_id, actor=None, document=doc
        )
    else:
        processes.save_draft(process, doc, base_revision=process.draft_revision, actor=None)
    db.session.flush()
    version = processes.publish(process, actor=None)
    db.session.commit()
    return version


FORM = {
    "fields": [
        {"key": "amount", "label": "Amount", "type": "number", "required": True, "min": 1},
        {
            "key": "kind",
            "label": "Kind",
            "type": "select",
            "options": [{"value": "travel", "label": "Travel"}, {"value": "food", "label": "Food"}],
        },
        {"key": "venue", "label": "Venue", "type": "text", "visibleIf": "$form.kind == 'food'"},
    ]
}


def basic(username: str, password: str = "flowdesk-demo") -> dict[str, str]:
    token = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


@pytest.fixture
def published(app, demo):
    """Processes: open (no partition, waits at a task), finance, hr, a start form, a message,
    and one that fails; and `finance-op`, an operator in finance only."""
    with app.app_context():
        make_user(
            "finance-op",
            ["instances.read", "instances.manage"],
            ["finance"],
            role="manager",
            password="flowdesk-demo",
        )
        wait = (
            "review",
            node("userTask", "Review", assignee={"type": "role", "value": "approver"}),
        )
        publish_document(chain(wait), key="open")
        publish_document(chain(wait), key="fin", partition="finance")
        publish_document(chain(wait), key="hr-only", partition="hr")
        form = chain(wait)
        form["nodes"]["start"]["config"]["form"] = FORM
        publish_document(form, key="form")
        publish_document(
            chain(("paid", node("messageCatch", message="paid", correlationKey="$input.order"))),
            key="msg",
        )
        publish_document(chain(("boom", node("serviceTask", tool="fail", retries=0))), key="fail")
    return True


@pytest.fixture
def engine(app):
    """An app context for calling the engine in-process; yields the session."""
    from webapp.extensions import db

    with app.app_context():
        yield db.session
        db.session.remove()


@pytest.fixture
def test_tools() -> Iterator[None]:
    from tests.engine import tools_for_tests

    tools_for_tests.register()
    yield
    tools_for_tests.unregister()


@pytest.fixture
def redis_client(app):
    from webapp.infra.queue import redis_connection

    return redis_connection(app)


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


def history(session, instance_id: int) -> list[tuple[str, str | None]]:
    from webapp.models import HistoryEntry

    session.rollback()
    rows = session.execute(
        select(HistoryEntry.kind, HistoryEntry.node_id)
        .where(HistoryEntry.instance_id == instance_id)
        .order_by(HistoryEntry.id)
    ).all()
    return [(kind, node_id) for kind, node_id in rows]


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def worker_env(app_config: dict, **extra: Any) -> dict[str, str]:
    """A worker with the test tools and quick sweeps; `extra` settings override."""
    return base_worker_env(app_config, FLOWDESK_EXTRA_TOOL_MODULES=TOOL_MODULE, **{**FAST, **extra})


def run_burst(app_config: dict, **extra: Any) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env=worker_env(app_config, **extra),
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
                env=worker_env(self.app_config, **extra),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.processes.append(process)
            started.append(process)
        return started

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the worker and its scheduler child: no clean-up of any kind."""
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


@pytest.fixture
def workers(app, app_config, tmp_path) -> Iterator[Workers]:
    group = Workers(app_config, tmp_path)
    yield group
    group.stop_all()
