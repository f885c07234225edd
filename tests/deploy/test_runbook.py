"""The procedures of docs/upgrades.md, run for real: upgrading a database that holds work,
restarting workers one at a time, losing Redis, and restoring a PostgreSQL backup."""

from __future__ import annotations

import glob
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from alembic.script import ScriptDirectory
from flask_migrate import upgrade
from redis import Redis
from rq import Queue
from rq.registry import ScheduledJobRegistry
from sqlalchemy import MetaData, func, select, text
from sqlalchemy.engine import Engine, make_url

from tests.engine import tools_for_tests
from tests.helpers.app import login
from tests.helpers.documents import chain, node, parallel_join, sample_document
from tests.helpers.instances import history, load, start
from tests.helpers.processes import publish_document
from tests.helpers.scratch import is_postgres, scratch_database
from tests.helpers.workers import ROOT, Workers, drain, wait_for
from tests.helpers.workers import worker_env as base_worker_env
from webapp import create_app
from webapp.extensions import db
from webapp.infra.redis_server import EmbeddedRedis
from webapp.models import Job, Task

# A column a migration renamed: (table, its name at head) -> its name in older revisions.
# Add the rename here with the migration, so old rows are still compared under their new name.
RENAMED: dict[tuple[str, str], str] = {("login_failures", "last_at"): "first_at"}
# Tables a migration empties on purpose (table -> that revision): sign-in throttling state only.
RESET_BY: dict[str, str] = {"login_failures": "0008"}


def _older_revisions() -> list[str]:
    """Each revision from 0005 (the first with all of today's runtime tables) to head's parent."""
    script = ScriptDirectory(str(ROOT / "migrations"))
    base_first = [revision.revision for revision in script.walk_revisions()][::-1]
    return base_first[base_first.index("0005") : -1]


def _running_installation(session, timer: str = "PT1S") -> dict[str, list[int]]:
    """What a live installation holds: finished instances with their history, and instances
    waiting on a timer, on a queued tool job and on a person's task. Needs the demo users."""
    sample = publish_document(sample_document(), key="sample")
    finished = [start(session, sample, input={"amount": 50 + 100 * n}) for n in range(2)]
    drain(session)
    timed = publish_document(chain(("wait", node("timerCatch", duration=timer))), key="timed")
    call = node("serviceTask", tool="noop", saveTo="out", inputs={"n": "$input.n"})
    tool = publish_document(chain(("call", call)), key="tool")
    approver = {"type": "role", "value": "approver"}
    review = publish_document(chain(("review", node("userTask", "Review", assignee=approver))))
    waiting = [start(session, timed, input={"n": n}) for n in range(3)]
    waiting += [start(session, tool, input={"n": n}) for n in range(3)]
    person = start(session, review, business_key="R-1")
    for instance_id in finished:
        assert load(session, instance_id).status == "completed"
    for instance_id in [*waiting, person]:
        assert load(session, instance_id).status == "running"
    return {"finished": finished, "waiting": waiting, "person": [person]}


def _resumed(session, built: dict[str, list[int]], history_before: dict[int, list]) -> None:
    """Waiting work ran once, finished instances are untouched, the person's task is open."""
    for instance_id in built["waiting"]:
        assert load(session, instance_id).status == "completed"
        taken = history(session, instance_id)
        assert taken.count(("completed", None)) == 1, taken
        assert len(taken) == len(set(taken)), f"a step was applied twice: {taken}"
    for instance_id in built["finished"]:
        assert history(session, instance_id) == history_before[instance_id]
    (person,) = built["person"]
    assert load(session, person).status == "running"
    session.rollback()
    task = session.scalar(select(Task).where(Task.instance_id == person))
    assert task is not None and task.status == "open"


def _all_completed(session, instance_ids: list[int]) -> bool:
    session.rollback()
    return all(load(session, i).status == "completed" for i in instance_ids)


# --- Upgrading -----------------------------------------------------------------------------


def _snapshot(bind: Engine) -> dict[str, list[dict[str, Any]]]:
    meta = MetaData()
    meta.reflect(bind)
    with bind.connect() as conn:
        return {
            name: [dict(row) for row in conn.execute(select(table)).mappings()]
            for name, table in meta.tables.items()
            if name != "alembic_version"
        }


def _write_rows(bind: Engine, rows: dict[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """Replace the data of the database (at any revision) with `rows` taken at head; returns
    the columns (by their head name) written per table."""
    meta = MetaData()
    meta.reflect(bind)
    tables = [t for t in meta.sorted_tables if t.name != "alembic_version"]
    written: dict[str, list[str]] = {}
    with bind.begin() as conn:
        for table in reversed(tables):
            conn.execute(table.delete())
        for table in tables:
            source = rows.get(table.name) or []
            if not source:
                continue
            names = {}
            for column in source[0]:
                for name in (column, RENAMED.get((table.name, column))):
                    if name is not None and name in table.columns:
                        names[column] = name
                        break
            required = {
                c.name
                for c in table.columns
                if not c.nullable and c.server_default is None and not c.primary_key
            }
            missing = required - set(names.values())
            assert not missing, (
                f"{table.name}.{sorted(missing)} at this revision has no column at head: "
                "if a migration renamed it, add it to RENAMED"
            )
            conn.execute(table.insert(), [{names[c]: row[c] for c in names} for row in source])
            written[table.name] = list(names)
        if bind.dialect.name == "postgresql":
            for table in tables:
                for column in table.primary_key.columns:
                    sequence = conn.scalar(
                        text("SELECT pg_get_serial_sequence(:t, :c)"),
                        {"t": table.name, "c": column.name},
                    )
                    if sequence:
                        conn.execute(
                            text(
                                f'SELECT setval(:s, COALESCE((SELECT MAX("{column.name}")'
                                f' FROM "{table.name}"), 0) + 1, false)'
                            ),
                            {"s": sequence},
                        )
    return written


def _rows_as_text(rows: list[dict[str, Any]], columns: list[str]) -> Counter[str]:
    return Counter(
        json.dumps({c: row[c] for c in columns}, sort_keys=True, default=str) for row in rows
    )


@pytest.mark.parametrize("revision", _older_revisions())
def test_upgrading_a_database_that_holds_work_keeps_it_and_the_work_resumes(
    revision, app_config, engine, demo, client, fresh_database_url
):
    """`flask db upgrade` from an older release: every row survives (documents, instances,
    tokens, jobs, history, tasks, users), users still sign in and waiting instances complete."""
    built = _running_installation(engine)
    assert login(client, "alice", "not her password").status_code != 302
    before = {i: history(engine, i) for i in built["finished"]}
    rows = _snapshot(db.engine)
    assert rows["login_failures"] and rows["jobs"] and rows["history"] and rows["tasks"]

    older = create_app(dict(app_config, SQLALCHEMY_DATABASE_URI=fresh_database_url))
    with older.app_context():
        try:
            upgrade(revision=revision)
            written = _write_rows(db.engine, rows)
            upgrade()
            after = _snapshot(db.engine)
            for table, columns in written.items():
                if table in RESET_BY and revision < RESET_BY[table]:
                    assert after[table] == [], f"{table} is reset by {RESET_BY[table]}"
                    continue
                lost = _rows_as_text(rows[table], columns) - _rows_as_text(after[table], columns)
                assert not lost, f"{table} lost rows upgrading from {revision}: {list(lost)[:3]}"

            signed_in = older.test_client()
            assert login(signed_in, "alice").status_code == 302
            drain(db.session)
            _resumed(db.session, built, before)
        finally:
            db.session.remove()
            db.engine.dispose()


# --- Rolling restarts ----------------------------------------------------------------------


def _tool(name: str, sleep: float = 0.1) -> dict[str, Any]:
    # The short timeout makes a call cut short show up as a second call within seconds.
    inputs = {"name": f"'{name}'", "sleep": str(sleep)}
    return node("serviceTask", tool="test.record", timeout=3, inputs=inputs)


def test_a_rolling_restart_of_workers_finishes_every_instance_exactly_once(
    engine, workers, test_tools, redis_client
):
    """Workers restarted one at a time with SIGTERM, as `systemctl restart` does, while 30
    instances flow (tools, timers, joins): each worker finishes the call in hand before it exits,
    nothing runs twice, nothing is left behind."""
    both = publish_document(parallel_join(_tool("roll"), _tool("roll")), key="two-tools")
    timed = parallel_join(_tool("roll"), node("timerCatch", duration="PT1S"))
    with_timer = publish_document(timed, key="tool-and-timer")
    slow = publish_document(chain(("slow", _tool("slow", sleep=1.0))), key="slow")
    running = {process.pid: process for process in workers.start(2)}
    flowing: list[int] = []
    stopped: list[int] = []

    def start_flowing(count: int) -> None:
        for n in range(count):
            version = with_timer if n % 3 == 0 else both
            flowing.append(start(engine, version, input={"n": len(flowing)}))

    for restart in range(3):
        start_flowing(8)
        stopped.append(start(engine, slow, input={"n": restart}))
        calls = wait_for(
            lambda n=restart: tools_for_tests.seen(redis_client, "slow")[n:],
            timeout=90,  # behind the backlog and a replacement worker's start on a busy machine
            what="the slow call",
        )
        began = time.monotonic()
        busy = running.pop(calls[0]["pid"])
        os.killpg(busy.pid, signal.SIGTERM)  # systemd's default KillMode: the whole group
        assert busy.wait(timeout=20) == 0, workers.logs()
        assert time.monotonic() - began > 0.8, "the worker left before its call was done"
        running.update({p.pid: p for p in workers.start(1)})
    start_flowing(6)

    instances = flowing + stopped
    wait_for(lambda: _all_completed(engine, instances), timeout=60, what="every instance")
    assert len(flowing) == 30
    for instance_id in flowing:
        taken = Counter(history(engine, instance_id))
        assert taken[("left", "split")] == 2 and taken[("entered", "join")] == 2, taken
        assert taken[("left", "join")] == 1, taken
    for instance_id in instances:
        taken = Counter(history(engine, instance_id))
        assert taken[("completed", None)] == 1, taken
        repeated = {
            step: count
            for step, count in taken.items()
            if count > 1 and step not in (("left", "split"), ("entered", "join"))
        }
        assert not repeated, f"instance {instance_id} applied steps twice: {repeated}"
    seen = tools_for_tests.seen(redis_client, "roll") + tools_for_tests.seen(redis_client, "slow")
    calls = Counter(entry["key"] for entry in seen)
    twice = {key: count for key, count in calls.items() if count > 1}
    assert not twice, f"tools called again after a restart: {twice}"
    expected = sum(2 if load(engine, i).version_id == both.id else 1 for i in instances)
    assert sum(calls.values()) == expected


# --- What to back up -----------------------------------------------------------------------

TIMING = {"SWEEP_INTERVAL": 1.0, "SWEEP_GRACE": 1.0}
MARGIN = 4.0  # a worker process starting up, and polling


def test_redis_holds_nothing_the_sweep_cannot_rebuild(app, app_config, demo, tmp_path):
    """Tool jobs in RQ's queue are lost with FLUSHALL (timers wait in the database anyway); a
    worker started afterwards rebuilds them from the database and every instance completes."""
    server = EmbeddedRedis(tmp_path / "redis")
    server.ensure_running()
    config = dict(app_config, REDIS_URL=server.url)
    private = create_app(config)
    group = Workers(config, tmp_path)
    try:
        with private.app_context():
            # The timers are set while the installation is built: due 2 s after it began at the
            # earliest (measured after it, the bound was late by the building's own time).
            timers_due = time.monotonic() + 2
            built = _running_installation(db.session, timer="PT2S")
            before = {i: history(db.session, i) for i in built["finished"]}
            redis = Redis.from_url(server.url)
            queue = Queue(config["RQ_QUEUE"], connection=redis)
            assert len(queue) >= 3 and ScheduledJobRegistry(queue=queue).count == 0
            waiting_timers = select(func.count()).where(Job.wake_at.is_not(None))
            assert db.session.scalar(waiting_timers) >= 3
            redis.flushall()
            assert redis.dbsize() == 0

            flushed = time.monotonic()
            group.start(1, **TIMING)
            budget = TIMING["SWEEP_INTERVAL"] + TIMING["SWEEP_GRACE"] + MARGIN
            wait_for(
                lambda: _all_completed(db.session, built["waiting"]),
                timeout=max(timers_due, flushed) - time.monotonic() + budget,
                what=f"every waiting instance within {budget} s of being due",
            )
            assert time.monotonic() >= timers_due
            _resumed(db.session, built, before)
            db.session.remove()
    finally:
        group.stop_all()
        server.stop()


# --- Restoring a backup --------------------------------------------------------------------


def _postgres_tool(name: str) -> str:
    """The newest of Debian's PostgreSQL client binaries (pg_dump must not be older than the
    server)."""
    found = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[4])
    )
    assert found, f"{name} not found under /usr/lib/postgresql/*/bin: install postgresql-client"
    return found[-1]


def _libpq(url: str) -> str:
    """The URL as PostgreSQL's own tools take it (no SQLAlchemy driver name)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _run(command: list[str], **options: Any) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, **options)
    assert done.returncode == 0, f"{command[0]} failed: {done.stderr[-3000:]}"


def test_a_backup_restores_into_a_new_database_where_waiting_work_resumes(
    app, app_config, engine, demo, database_url, tmp_path
):
    """docs/upgrades.md's backup and restore, command for command: pg_dump, pg_restore into a
    new database, an empty Redis, db upgrade, a worker; users sign in and waiting work runs."""
    if not is_postgres(database_url):
        pytest.skip("production backups are of PostgreSQL (pg_dump); SQLite is a file to copy")
    built = _running_installation(engine, timer="PT3S")
    timers_due = time.monotonic() + 3
    before = {i: history(engine, i) for i in built["finished"]}
    backup = tmp_path / "flowdesk.dump"
    _run([_postgres_tool("pg_dump"), "--format=custom", f"--file={backup}", _libpq(database_url)])

    server = EmbeddedRedis(tmp_path / "redis")
    with scratch_database(os.environ["DATABASE_URL"], tmp_path, "flowdesk_restored") as restored:
        _run(
            [
                _postgres_tool("pg_restore"),
                "--exit-on-error",
                "--no-owner",
                f"--dbname={_libpq(restored)}",
                str(backup),
            ]
        )
        server.ensure_running()
        config = dict(app_config, SQLALCHEMY_DATABASE_URI=restored, REDIS_URL=server.url)
        flask = [sys.executable, "-m", "flask", "--app", "webapp", "db", "upgrade"]
        _run(flask, cwd=ROOT, env=base_worker_env(config))
        back = create_app(config)
        group = Workers(config, tmp_path)
        try:
            group.start(1, **TIMING)
            client = back.test_client()
            assert login(client, "alice").status_code == 302
            assert client.get("/readyz").status_code == 200
            with back.app_context():
                budget = TIMING["SWEEP_INTERVAL"] + TIMING["SWEEP_GRACE"] + MARGIN
                wait_for(
                    lambda: _all_completed(db.session, built["waiting"]),
                    timeout=timers_due - time.monotonic() + budget,
                    what="the restored instances",
                )
                _resumed(db.session, built, before)
                db.session.remove()
                db.engine.dispose()
        finally:
            group.stop_all()
            server.stop()
