"""Benchmark: what one user task completion and one timer firing cost, counted, not timed alone.

The tasks process of versus_spiff.py (tool -> user task -> timer PT1S -> tool) runs up to its
open tasks through two workers; the workers stop; this process then completes every task through
the task service (`tasks.complete`, as the inbox does) and, once the timers are due, runs every
timer delivery through its RQ entry point (`jobs.fire_timer`, as a worker does; the leased tool
after the timer runs in that delivery). For each of the two it prints, per instance: SQL
statements, transactions committed, Redis commands and CPU ms of this process.

    BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:55441/postgres \\
        .venv/bin/python benchmarks/task_path.py [--count 200]
    .venv/bin/python benchmarks/task_path.py --count 50   # SQLite
    ... --show      # one completion's SQL statements
    ... --profile   # where the CPU of each goes (cProfile, by own time)
    ... --rq        # the timers go through the workers' clocks, RQ and two workers instead:
                    # their Redis commands by command
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FLOWDESK_EXTRA_TOOL_MODULES", "benchmarks.bench_tools")

from sqlalchemy import event, func, select  # noqa: E402

from benchmarks.versus_spiff import bench  # noqa: E402
from tests.helpers.scratch import is_postgres  # noqa: E402


class Counter:
    """SQL statements and commits on the app's engine, by first word, while `on`."""

    def __init__(self, engine: Any) -> None:
        self.statements: collections.Counter[str] = collections.Counter()
        self.commits = 0
        self.on = False
        self.show = False
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)

    def _statement(self, conn, cursor, statement, parameters, context, executemany) -> None:
        if self.on:
            self.statements[" ".join(statement.split()[:1]).upper()] += 1
            if self.show:
                print("   ", " ".join(statement.split())[:160])

    def _commit(self, conn) -> None:
        if self.on:
            self.commits += 1

    def reset(self) -> None:
        self.statements.clear()
        self.commits = 0


def redis_calls(client: Any) -> int:
    stats = client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


def measure(
    name: str, counter: Counter, client: Any, work: Any, count: int, profile: bool = False
) -> None:
    counter.reset()
    calls = redis_calls(client)
    cpu = time.process_time()
    counter.on = True
    profiler = cProfile.Profile() if profile else None
    if profiler is not None:
        profiler.enable()
    work()
    if profiler is not None:
        profiler.disable()
    counter.on = False
    cpu = time.process_time() - cpu
    calls = redis_calls(client) - calls - 1  # the INFO's own connection check
    total = sum(counter.statements.values())
    kinds = ", ".join(f"{k} {v / count:.1f}" for k, v in counter.statements.most_common())
    print(
        f"{name:14s} per instance: {total / count:5.1f} statements ({kinds}); "
        f"{counter.commits / count:.1f} commits; {calls / count:.1f} Redis calls; "
        f"{cpu * 1000 / count:.1f} ms CPU"
    )
    if profiler is not None:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def by_command(client: Any) -> dict[str, int]:
    stats = client.info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def timers_through_rq(b: Any, client: Any, count: int) -> None:
    """The due timers' RQ deliveries (enqueued by the workers' clocks, run by two workers): the
    Redis commands they cost, the workers' start-up included."""
    from webapp.extensions import db
    from webapp.models import Instance

    before = by_command(client)
    b.workers(2)
    deadline = time.monotonic() + 120
    query = select(func.count(Instance.id)).where(Instance.status == "completed")
    while db.session.scalar(query) < count and time.monotonic() < deadline:
        db.session.rollback()
        time.sleep(0.2)
    db.session.rollback()
    after = by_command(client)
    b.stop_workers()
    spent = {k: v - before.get(k, 0) for k, v in after.items() if k != "info"}
    total = sum(spent.values())
    print(
        f"timers through RQ: {total / count:.1f} Redis commands a timer (workers' start included)"
    )
    for name, n in sorted(spent.items(), key=lambda kv: -kv[1])[:15]:
        print(f"  {n / count:6.2f}  {name}")


def run(server: str | None, count: int, show: bool, profile: bool, through_rq: bool) -> None:
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Instance, Job, ProcessVersion, Task, User
    from webapp.models.statuses import TaskStatus
    from webapp.services import jobs, tasks

    with (
        tempfile.TemporaryDirectory(prefix="flowdesk-task-path-") as tmp,
        bench(server, Path(tmp), "flowdesk_task_path") as b,
    ):
        print(f"{b.kind}, {count} instances")
        b.workers(2)
        with b.app.app_context():
            version = db.session.get(ProcessVersion, b.versions["tasks"])
            for _ in range(count):
                jobs.commit(steps.start_instance(db.session, version, input={"amount": 5}))
            deadline = time.monotonic() + 120
            query = select(func.count(Task.id)).where(Task.status == TaskStatus.OPEN)
            while db.session.scalar(query) < count and time.monotonic() < deadline:
                db.session.rollback()
                time.sleep(0.1)
            db.session.rollback()
            b.stop_workers()
            counter = Counter(db.engine)
            client = jobs.engine_queue().connection
            user = db.session.get(User, b.user_id)
            ids = list(db.session.scalars(select(Task.id).order_by(Task.id)))
            db.session.rollback()

            if show:
                counter.show = counter.on = True
                print("one completion:")
                tasks.complete(user, ids.pop(), {})
                counter.show = counter.on = False
                count -= 1

            def complete() -> None:
                for task_id in ids:
                    tasks.complete(user, task_id, {})

            measure("tasks.complete", counter, client, complete, count, profile)
            timers = list(
                db.session.execute(select(Job.id, Job.instance_id).where(Job.kind == "timer"))
            )
            db.session.rollback()
            time.sleep(1.5)
            if through_rq:
                timers_through_rq(b, client, len(timers))
                return

            def fire() -> None:
                for job_id, instance_id in timers:
                    jobs.fire_timer(job_id, instance_id)

            measure("timer + tool", counter, client, fire, len(timers), profile)
            done = db.session.scalar(
                select(func.count(Instance.id)).where(Instance.status == "completed")
            )
            print(f"completed instances: {done} (of {count} and the others' warm-ups)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--show", action="store_true", help="print one completion's statements")
    parser.add_argument(
        "--profile", action="store_true", help="and where their CPU goes (cProfile)"
    )
    parser.add_argument("--rq", action="store_true", help="timers through RQ and two workers")
    args = parser.parse_args()
    server = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")
    run(server if is_postgres(server) else None, args.count, args.show, args.profile, args.rq)


if __name__ == "__main__":
    main()
