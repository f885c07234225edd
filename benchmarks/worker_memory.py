"""Benchmark: one worker's memory (RSS) while it runs many instances; it should stay flat.

    DATABASE_URL=postgresql://... .venv/bin/python benchmarks/worker_memory.py \
        [--instances 100000] [--batch 2000]

Starts one `python worker.py` on a scratch database (PostgreSQL when DATABASE_URL names one, else
SQLite) and the embedded Redis (or REDIS_URL), then starts the sample process (start -> tool ->
gateway -> two parallel tools -> join -> end) in batches, waits for each batch to complete, and
samples the worker's resident memory after each. Prints the samples and the growth from the first
sample after warm-up to the last; the target is within 20%.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import psutil
from sqlalchemy import create_engine, func, select

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._flowdesk import Database, bench_app, start_workers, stop_workers  # noqa: E402
from tests.helpers.documents import sample_document  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402

WARM = 500


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="flowdesk-bench-") as tmp:
        workdir = Path(tmp)
        with scratch_database(os.environ.get("DATABASE_URL"), workdir, "flowdesk_mem") as url:
            run(args, Database(url), workdir)


def run(args: argparse.Namespace, database: Database, workdir: Path) -> None:
    from flask_migrate import upgrade

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Instance, ProcessVersion
    from webapp.services import processes
    from webapp.services.jobs import commit

    app, embedded = bench_app(database, workdir)
    with app.app_context():
        upgrade()
        process = processes.create_process(
            "bench", "Benchmark", partition_id=None, actor=None, document=sample_document()
        )
        db.session.flush()
        version_id = processes.publish(process, actor=None).id
        db.session.commit()
    env = dict(
        os.environ,
        DATABASE_URL=database.url,
        REDIS_URL=app.config["REDIS_URL"],
        SECRET_KEY=app.config["SECRET_KEY"],
        RQ_QUEUE=app.config["RQ_QUEUE"],
        FLOWDESK_ENV="development",
    )
    counter = create_engine(database.url)
    completed = select(func.count(Instance.id)).where(Instance.status == "completed")

    def wait_for(total: int) -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            with counter.connect() as conn:
                if (conn.scalar(completed) or 0) >= total:
                    return
            time.sleep(0.2)
        raise SystemExit(f"the worker did not complete {total} instances in time")

    (worker,) = start_workers(1, env, workdir)
    samples: list[tuple[int, float, float]] = []
    began = time.monotonic()
    try:
        with app.app_context():
            version = db.session.get(ProcessVersion, version_id)
            db.session.expunge(version)
            started = 0
            plan = [WARM] + [args.batch] * -(-args.instances // args.batch)
            for size in plan:
                for _ in range(size):
                    commit(steps.start_instance(db.session, version, input={"amount": 500}))
                started += size
                wait_for(started)
                samples.append((started, time.monotonic() - began, rss_mb(worker.pid)))
                print(
                    f"{started:8,} instances  {samples[-1][1]:7.0f} s  RSS {samples[-1][2]:6.1f} MB"
                )
    finally:
        stop_workers([worker])
        counter.dispose()
        if embedded is not None:
            embedded.stop()
    base, last = samples[1] if len(samples) > 1 else samples[0], samples[-1]
    peak = max(sample[2] for sample in samples[1:] or samples)
    growth = (last[2] - base[2]) / base[2] * 100
    print(
        f"{database.kind}: one worker, {last[0]:,} instances in {last[1]:.0f} s; RSS "
        f"{base[2]:.1f} MB after {base[0]:,}, {last[2]:.1f} MB at the end (peak {peak:.1f}): "
        f"{growth:+.1f}% (target within 20%); load average {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
