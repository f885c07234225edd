"""Benchmark: migrating 10,000 running instances to a new version of their process.

Starts `--count` instances (default 10,000; half wait at a user task, half at a timer) of v1 on a
throw-away database (a SQLite file, or with DATABASE_URL=postgresql://... a database it creates
and drops), publishes v2 (a user task renamed, so half need the mapping), then times the dry
run (a verdict for every instance) and the migration by `--workers` `python worker.py` processes
(one transaction per instance), and checks that every instance moved exactly once.

    .venv/bin/python benchmarks/migration.py [--count 10000] [--workers 1]
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
from tests.helpers.app import make_user  # noqa: E402
from tests.helpers.migration import first_version, second_version  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="running instances")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flowdesk-bench-") as tmp:
        workdir = Path(tmp)
        with scratch_database(os.environ.get("DATABASE_URL"), workdir, "flowdesk_bench") as url:
            run(args, Database(url), workdir)


def run(args: argparse.Namespace, database: Database, workdir: Path) -> None:
    from flask_migrate import upgrade
    from sqlalchemy import func, select

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import BulkOperation, HistoryEntry, Instance, ProcessVersion
    from webapp.services import processes
    from webapp.services.operations import migration

    app, embedded = bench_app(database, workdir)
    workers = []
    try:
        with app.app_context():
            upgrade()
            user = make_user("bench-admin", ["admin"])
            process = processes.create_process(
                "mig", "Migrating", partition_id=None, actor=None, document=first_version()
            )
            db.session.flush()
            version_id = processes.publish(process, actor=None).id
            db.session.commit()
            version = db.session.get(ProcessVersion, version_id)
            db.session.expunge(version)
            began = time.monotonic()
            for index in range(args.count):
                path = "task" if index % 2 else "timer"
                steps.start_instance(db.session, version, input={"path": path})
                if index % 200 == 199:
                    db.session.commit()
            db.session.commit()
            print(f"started {args.count} waiting instances in {time.monotonic() - began:.1f} s")
            processes.save_draft(
                process, second_version(review="approve"), base_revision=process.draft_revision,
                actor=None,
            )  # fmt: skip
            processes.publish(process, actor=None)
            db.session.commit()

            setup = migration.setup(user, "mig", 1, 2, {"review": "approve"})
            began = time.monotonic()
            ids = migration.selection(user, setup)
            report = migration.dry_run(setup, ids)
            dry = time.monotonic() - began
            print(f"dry run of {len(ids)} instances: {dry:.2f} s   {report.counts()}")
            operation = migration.start(user, setup, ids)
            operation_id, total = operation.id, operation.total
            db.session.commit()
        env = dict(
            os.environ,
            DATABASE_URL=database.url,
            REDIS_URL=app.config["REDIS_URL"],
            SECRET_KEY=app.config["SECRET_KEY"],
            RQ_QUEUE=app.config["RQ_QUEUE"],
            FLOWDESK_ENV="development",
        )
        began = time.monotonic()
        workers = start_workers(args.workers, env, workdir)
        with app.app_context():
            while True:
                db.session.rollback()
                row = db.session.get(BulkOperation, operation_id, populate_existing=True)
                if row is not None and row.status == "done":
                    break
                if time.monotonic() - began > 3600:
                    raise SystemExit("the migration did not finish within an hour")
                time.sleep(0.2)
            took = time.monotonic() - began
            moved = db.session.scalar(
                select(func.count()).select_from(Instance).where(Instance.version == 2)
            )
            entries = db.session.scalar(select(func.count()).where(HistoryEntry.kind == "migrated"))
        print(f"database: {database.kind}   workers: {args.workers}")
        print(
            f"applied to {total} instances in {took:.1f} s (workers starting included) "
            f"= {total / took:.0f} instances/s"
        )
        print(f"on v2: {moved}; migrated once: {moved == entries == args.count}")
    finally:
        stop_workers(workers)
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    main()
