"""Benchmark: running 20 test scenarios of the Purchase request demo process.

Run as ``.venv/bin/python benchmarks/scenarios.py [--count 20]``. It plays `--count` scenarios
(reviews with every mix of answers, half of them also firing the reminder timer twice) on the
demo draft through the runner in-process, then stores them with the process in a scratch
database and runs ``flask scenarios run --process purchase-request`` as a user would, printing
the total and per-scenario times of each. Every scenario runs on its own in-memory database.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._flowdesk import SECRET, Database, bench_app  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402


def scenarios(count: int) -> list[dict]:
    """`count` different passing scenarios of the Purchase request."""
    out = []
    for index in range(count):
        first, second = ("yes", "no")[index % 2], ("yes", "no")[(index // 2) % 2]
        timers = [{"do": "timer", "node": "reminder"}] * (2 if index % 4 >= 2 else 0)
        out.append(
            {
                "name": f"Scenario {index + 1}",
                "input": {"item": f"Item {index}", "amount": 100 + index,
                          "reviewers": ["alice", "bob"]},
                "actions": [*timers,
                            {"do": "complete", "node": "offer", "data": {"approve": first}},
                            {"do": "complete", "node": "offer", "data": {"approve": second}}],
                "expect": {"status": "completed",
                           "values": {"$vars.reviews": [first, second]}},
            }
        )  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args()
    bodies = scenarios(args.count)
    with tempfile.TemporaryDirectory() as folder:
        workdir = Path(folder)
        with scratch_database(None, workdir, "scenarios") as url:
            app, embedded = bench_app(Database(url), workdir)
            try:
                runner_times = run_in_process(app, bodies)
                cli_seconds = run_cli(url, workdir)
            finally:
                if embedded is not None:
                    embedded.stop()
    total = sum(runner_times)
    print(f"runner: {len(bodies)} scenarios in {total:.2f} s "
          f"(median {statistics.median(runner_times) * 1000:.0f} ms, "
          f"max {max(runner_times) * 1000:.0f} ms per scenario)")  # fmt: skip
    print(f"CLI:    flask scenarios run in {cli_seconds:.2f} s, start-up included "
          f"({cli_seconds / len(bodies) * 1000:.0f} ms per scenario)")  # fmt: skip


def run_in_process(app, bodies: list[dict]) -> list[float]:
    """Store the demo process and its scenarios; time each runner call."""
    from flask_migrate import upgrade

    from webapp.cli.demo_processes import purchase_request
    from webapp.engine.scenario_runner import run
    from webapp.extensions import db
    from webapp.process.scenarios import parse
    from webapp.services import processes
    from webapp.services import scenarios as service

    with app.app_context():
        upgrade()
        doc = purchase_request()
        process = processes.create_process(
            doc["key"], doc["name"], partition_id=None, actor=None, document=doc
        )
        service.replace_all(process, bodies, actor=None)
        times = []
        for body in bodies:
            began = time.perf_counter()
            result = run(doc, parse(body))
            times.append(time.perf_counter() - began)
            if not result.passed:
                raise SystemExit(f"{result.name} failed: {result.failure}")
        db.session.remove()
    return times


def run_cli(url: str, workdir: Path) -> float:
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": SECRET, "LOG_LEVEL": "WARNING",
           "FLOWDESK_ENV": "development", "INSTANCE_PATH": str(workdir)}  # fmt: skip
    began = time.perf_counter()
    done = subprocess.run(
        [str(ROOT / ".venv/bin/flask"), "--app", "webapp", "scenarios", "run",
         "--process", "purchase-request"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"the CLI failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return seconds


if __name__ == "__main__":
    main()
