"""Benchmark: completed instances per second through real worker processes, and their latency.

Runs the sample process (start -> tool -> exclusive gateway -> parallel split into two tools ->
join -> end) on a throw-away database: a SQLite file, or with DATABASE_URL=postgresql://... a
database it creates and drops on that server. Starts 2 `python worker.py` processes against the
embedded Redis (or REDIS_URL), starts instances at a steady rate from this process, and prints
the completion rate and the start-to-complete latency (p50/p95/p99).

    .venv/bin/python benchmarks/engine_throughput.py [--count 600] [--rate 60] [--workers 2]
    .venv/bin/python benchmarks/engine_throughput.py --rate 0   # start all at once: drain rate
    .venv/bin/python benchmarks/engine_throughput.py --leased   # tools leased as side effects

The sample's tools are `noop`, which is pure: run inside its step, 4 transactions an instance.
`--leased` uses a tool with side effects: each call is leased before it runs; the first in a
transaction of its own, the two parallel ones in the step that made them due (follow-ons), so 5
transactions an instance while deliveries queue up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._flowdesk import (  # noqa: E402
    Completions,
    CpuMeter,
    Database,
    backend_pids,
    bench_app,
    start_workers,
    stop_workers,
)
from tests.helpers.documents import sample_document  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=600, help="instances to start")
    parser.add_argument(
        "--rate",
        type=float,
        default=None,
        help="starts per second (default 70 on PostgreSQL, 35 on SQLite; 0 = all at once)",
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--leased",
        action="store_true",
        help="tools with side effects (leased, 2 transactions a call) instead of pure `noop`",
    )
    args = parser.parse_args()
    if args.leased:
        os.environ["FLOWDESK_EXTRA_TOOL_MODULES"] = "benchmarks.bench_tools"

    server = os.environ.get("DATABASE_URL")
    with tempfile.TemporaryDirectory(prefix="flowdesk-bench-") as tmp:
        workdir = Path(tmp)
        with scratch_database(server, workdir, "flowdesk_bench") as url:
            run(args, Database(url), workdir)


def run(args: argparse.Namespace, database: Database, workdir: Path) -> None:
    from flask_migrate import upgrade

    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import ProcessVersion
    from webapp.services import processes
    from webapp.services.jobs import commit

    app, embedded = bench_app(database, workdir)
    queue = app.config["RQ_QUEUE"]
    with app.app_context():
        upgrade()
        document = sample_document()
        if args.leased:
            for node in document["nodes"].values():
                if node["kind"] == "serviceTask":
                    node["config"]["tool"] = "bench.echo"
        process = processes.create_process(
            "bench", "Benchmark", partition_id=None, actor=None, document=document
        )
        db.session.flush()
        published = processes.publish(process, actor=None)
        db.session.commit()
        version_id = published.id

    env = dict(
        os.environ,
        DATABASE_URL=database.url,
        REDIS_URL=app.config["REDIS_URL"],
        SECRET_KEY=app.config["SECRET_KEY"],
        RQ_QUEUE=queue,
        FLOWDESK_ENV="development",
    )
    workers = start_workers(args.workers, env, workdir)
    rate = args.rate if args.rate is not None else (70.0 if database.kind == "PostgreSQL" else 35.0)
    completions = Completions(database.url)
    completions.start()
    warm = 20
    try:
        with app.app_context():
            version = db.session.get(ProcessVersion, version_id)
            db.session.expunge(version)  # an immutable version: keep it across commits
            for _ in range(warm):  # workers import and connect while these run
                commit(steps.start_instance(db.session, version, input={"amount": 500}))
            deadline = time.monotonic() + 60
            while len(completions.done) < warm and time.monotonic() < deadline:
                time.sleep(0.05)
            groups = {"workers": [w.pid for w in workers], "database": backend_pids(app)}
            if embedded is not None and embedded.process is not None:
                groups["redis"] = [embedded.process.pid]
            meter = CpuMeter(groups)
            began = time.monotonic()
            for index in range(args.count):
                if rate > 0:
                    pause = began + index / rate - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
                commit(steps.start_instance(db.session, version, input={"amount": 500}))
            started = time.monotonic() - began
        deadline = time.monotonic() + 120
        while len(completions.done) < warm + args.count and time.monotonic() < deadline:
            time.sleep(0.02)
        finished = time.monotonic() - began
        cpu = meter.stop()
    finally:
        completions.stop.set()
        stop_workers(workers)
        if embedded is not None:
            embedded.stop()
    report(args, database, rate, completions, warm, started, finished, cpu)


def report(args, database, rate, completions, warm, started, finished, cpu) -> None:
    latencies = sorted(v for k, v in completions.done.items() if k > warm)
    done = len(latencies)
    cut = statistics.quantiles(latencies, n=100) if len(latencies) >= 2 else [0.0] * 99
    cores = os.cpu_count() or 1
    offered = "as fast as possible" if rate <= 0 else f"{rate:g}/s"
    tools = "bench.echo (leased)" if args.leased else "noop (pure)"
    print(f"database: {database.kind}   workers: {args.workers}   cpus: {cores}   tools: {tools}")
    print(
        f"offered: {args.count} instances at {offered} "
        f"(started in {started:.1f} s = {args.count / started:.1f}/s)"
    )
    print(f"completed: {done}/{args.count} in {finished:.1f} s = {done / finished:.1f} instances/s")
    print(
        f"start-to-complete: p50 {cut[49] * 1000:.0f} ms   p95 {cut[94] * 1000:.0f} ms   "
        f"p99 {cut[98] * 1000:.0f} ms   max {latencies[-1] * 1000:.0f} ms"
    )
    machine = cpu.pop("machine")
    ours = sum(cpu.values())
    per_instance = ours / max(done, 1) * 1000
    parts = ", ".join(
        f"{name} {seconds / max(done, 1) * 1000:.1f}" for name, seconds in cpu.items()
    )
    print(
        f"cpu: {per_instance:.1f} ms per instance ({parts}) = at most "
        f"{cores * 1000 / per_instance:.0f} instances/s on {cores} idle cores"
    )
    other = max(0.0, machine - ours) / finished
    print(
        f"machine: {machine / finished:.2f} of {cores} cores busy, "
        f"{other:.2f} of them by other processes"
    )


if __name__ == "__main__":
    main()
