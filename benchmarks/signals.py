"""Benchmark: one signal broadcast to many waiting instances, delivered by real worker processes.

Starts `--count` instances (default 10,000) that wait at a signal catch, on a throw-away database
(a SQLite file, or with DATABASE_URL=postgresql://... a database it creates and drops), then
broadcasts the signal and times how long 2 `python worker.py` processes (`--workers`) take to plan
it into batches of `--batch` instances and deliver it to every one, each in its own step. Prints
the time, the instances per second, and checks that each instance completed exactly once.

    .venv/bin/python benchmarks/signals.py [--count 10000] [--workers 2] [--batch 500]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._flowdesk import (  # noqa: E402
    Database,
    bench_app,
    start_workers,
    stop_workers,
)
from tests.helpers.documents import chain, node  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="waiting instances")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=500, help="instances per worker job")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flowdesk-bench-") as tmp:
        workdir = Path(tmp)
        with scratch_database(os.environ.get("DATABASE_URL"), workdir, "flowdesk_bench") as url:
            run(args, Database(url), workdir)


def run(args: argparse.Namespace, database: Database, workdir: Path) -> None:
    from flask_migrate import upgrade
    from sqlalchemy import func, select

    from webapp.engine import dispatch, signals, steps
    from webapp.extensions import db
    from webapp.models import HistoryEntry, Instance, ProcessVersion, SignalBroadcast
    from webapp.models.base import utcnow
    from webapp.services import processes
    from webapp.services.jobs import ENTRY_POINTS, engine_queue

    app, embedded = bench_app(database, workdir)
    queue = app.config["RQ_QUEUE"]
    workers = []
    try:
        with app.app_context():
            upgrade()
            document = chain(("wait", node("signalCatch", "Wait", signal="go")))
            process = processes.create_process(
                "waits", "Waits", partition_id=None, actor=None, document=document
            )
            db.session.flush()
            version_id = processes.publish(process, actor=None).id
            db.session.commit()
            version = db.session.get(ProcessVersion, version_id)
            db.session.expunge(version)
            began = time.monotonic()
            for index in range(args.count):
                steps.start_instance(db.session, version)
                if index % 200 == 199:
                    db.session.commit()
            db.session.commit()
            print(f"started {args.count} waiting instances in {time.monotonic() - began:.1f} s")
        env = dict(
            os.environ,
            DATABASE_URL=database.url,
            REDIS_URL=app.config["REDIS_URL"],
            SECRET_KEY=app.config["SECRET_KEY"],
            RQ_QUEUE=queue,
            SIGNAL_BATCH=str(args.batch),
            FLOWDESK_ENV="development",
        )
        workers = start_workers(args.workers, env, workdir)
        time.sleep(3)  # let the workers import and connect
        with app.app_context():
            ref = signals.record(
                db.session.connection(), name="go", payload={}, partition_id=None, now=utcnow()
            )
            db.session.commit()
            began = time.monotonic()
            dispatch.enqueue(engine_queue(), [ref], ENTRY_POINTS)
            while True:
                db.session.rollback()
                row = db.session.get(SignalBroadcast, ref.id, populate_existing=True)
                if row is not None and row.status == "done":
                    break
                if time.monotonic() - began > 3600:
                    raise SystemExit("the broadcast did not finish within an hour")
                time.sleep(0.1)
            took = time.monotonic() - began
            completed = db.session.scalar(
                select(func.count()).select_from(Instance).where(Instance.status == "completed")
            )
            signalled = db.session.scalar(
                select(func.count(func.distinct(HistoryEntry.instance_id))).where(
                    HistoryEntry.kind == "signal"
                )
            )
            entries = db.session.scalar(
                select(func.count()).select_from(HistoryEntry).where(HistoryEntry.kind == "signal")
            )
        print(f"database: {database.kind}   workers: {args.workers}   batch: {args.batch}")
        print(
            f"broadcast to {row.total} instances: delivered {row.delivered} in {took:.1f} s "
            f"= {row.delivered / took:.0f} instances/s"
        )
        print(f"completed: {completed}; received once: {signalled == entries == args.count}")
    finally:
        stop_workers(workers)
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    main()
