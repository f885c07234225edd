"""Benchmark: the fixed costs of a leased instance, counted in one process with one worker.

Starts the sample process with a tool with side effects (`bench.echo`: tool -> exclusive
gateway -> parallel split into two tools -> join), then lets one in-process RQ worker drain the
queue (`--burst`), and prints per instance: SQL statements sent (each execution, BEGIN
included; an executemany counts once), commits, Redis commands and this process's CPU (the
start, the worker's steps and RQ's bookkeeping; no database server, no Redis server), then the
statements by kind. Counts do not depend on how busy the machine is; CPU does, so compare
interleaved runs.

    .venv/bin/python benchmarks/step_costs.py [--count 150]
    BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:55433/postgres \\
        .venv/bin/python benchmarks/step_costs.py
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FLOWDESK_EXTRA_TOOL_MODULES", "benchmarks.bench_tools")

from sqlalchemy import event  # noqa: E402

from benchmarks._flowdesk import Database, bench_app  # noqa: E402
from benchmarks.versus_spiff import LEASED, bpmn, sample  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402

WARM = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=150, help="instances to drain")
    args = parser.parse_args()
    server = os.environ.get("BENCH_DATABASE_URL")
    with (
        tempfile.TemporaryDirectory(prefix="flowdesk-step-costs-") as tmp,
        scratch_database(server, Path(tmp), "step_costs") as url,
    ):
        run(Database(url), Path(tmp), args.count)


def run(database: Database, workdir: Path, count: int) -> None:
    from flask_migrate import upgrade

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.infra.queue import redis_connection
    from webapp.models import ProcessVersion
    from webapp.services import processes
    from webapp.services.jobs import commit
    from webapp.worker.runner import build_worker

    app, embedded = bench_app(database, workdir)
    try:
        with app.app_context():
            upgrade()
            process, _ = processes.create_imported(
                "leased", "leased", bpmn(sample(LEASED)), partition_id=None, actor=None
            )
            version_id = processes.publish(process, actor=None).id
            db.session.commit()
            version = db.session.get(ProcessVersion, version_id)
            assert version is not None
            _ = version.process.key
            db.session.expunge(version.process)  # immutable: kept across commits, as a web
            db.session.expunge(version)  # request would hold it

            def drain(n: int) -> None:
                for _ in range(n):
                    commit(steps.start_instance(db.session, version, input={"amount": 500}))
                build_worker(app).work(burst=True, with_scheduler=False)

            drain(WARM)
            statements: collections.Counter[str] = collections.Counter()
            commits = [0]

            def executed(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
                statements[" ".join(statement.split()[:3])] += 1

            def committed(_c: Any) -> None:
                commits[0] += 1

            event.listen(db.engine, "before_cursor_execute", executed)
            event.listen(db.engine, "commit", committed)
            redis = redis_connection(app)
            redis.config_resetstat()
            cpu = time.process_time()
            drain(count)
            cpu = time.process_time() - cpu
            event.remove(db.engine, "before_cursor_execute", executed)
            event.remove(db.engine, "commit", committed)
            stats = redis.info("commandstats")
            calls = sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")
    finally:
        if embedded is not None:
            embedded.stop()
    print(
        f"{database.kind}, {count} leased instances, one in-process worker: "
        f"{sum(statements.values()) / count:.1f} statements, {commits[0] / count:.1f} commits, "
        f"{calls / count:.1f} Redis commands, CPU {cpu / count * 1000:.1f} ms per instance"
    )
    for statement, n in statements.most_common():
        print(f"  {n / count:5.2f}  {statement}")


if __name__ == "__main__":
    main()
