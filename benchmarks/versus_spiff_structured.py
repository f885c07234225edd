"""Benchmark: structured processes in Flowdesk against SpiffWorkflow, on the same BPMN and the same
database server, in interleaved rounds (the set-up, CPU metering and Spiff driver of
`versus_spiff.py`); prints per structure the rate, CPU per item, the ratio and, for Flowdesk, the
longest database transaction seen during the run.

Structures (written with Flowdesk's BPMN writer; Flowdesk imports the file, Spiff parses it):
- multi-instance: a parallel multi-instance sub-process whose body is a leased tool
  (`bench.echo`) then a user task, over `--items` (default 10, 100, 1,000 and 10,000); one
  instance each, every user task completed through the task service as it opens;
- sequential: the same body, sequential, over `--sequential` items (default 100);
- boundary: a sub-process (tool, user task) with a non-interrupting boundary timer (P1D: it
  is subscribed and withdrawn, not fired), `--count` instances;
- call: a call activity whose called process is a tool then a user task, `--count` instances.

Rates are items (user tasks completed) per second; "CPU/item" counts every process of the run
(workers, Redis, this process, and the PostgreSQL cluster when its data directory is readable;
run it on a cluster of its own, see `versus_spiff.py`). Spiff stops at `--spiff-budget` seconds a
run: it saves its whole serialized workflow after every engine step, so its cost per item grows
with the items; a run it did not finish is reported with the items it completed, and its rate
then is above what the whole run would average (the ratio is a lower bound).

The longest transaction is sampled every 20 ms from pg_stat_activity (PostgreSQL only): the
longest time any client session of the run's database (autovacuum left out) spent in one open
transaction. On a machine shared with other work it includes the time the session waited for a
CPU, so compare it with how busy the machine was.

    BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:55433/postgres \\
        .venv/bin/python benchmarks/versus_spiff_structured.py [--rounds 1] [--items 10,100,1000]
    ... --only multi-instance,call   # some structures only
    ... --save-bpmn DIR              # write the BPMN files
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FLOWDESK_EXTRA_TOOL_MODULES", "benchmarks.bench_tools")

from sqlalchemy import create_engine, func, select, text  # noqa: E402

from benchmarks._spiff import SpiffProcess, SpiffRunner, Work, _Parser, workflows  # noqa: E402
from benchmarks.versus_spiff import (  # noqa: E402
    LEASED,
    ROLE,
    SPIFF_APP,
    STARTER_APP,
    WORKER_APP,
    Bench,
    Meter,
    Result,
    _line,
    _wait_completed,
    bench,
    bpmn,
    pids_cpu,
)
from tests.differential.scenario import Scenario  # noqa: E402
from tests.differential.spiff_side import prepared  # noqa: E402
from tests.helpers.documents import document, flow, node  # noqa: E402
from tests.helpers.scratch import is_postgres  # noqa: E402

ASSIGNEE = {"type": "role", "value": ROLE}


# --- the processes ------------------------------------------------------------------------------


def _inside(parent: str, prefix: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """start -> leased tool -> user task -> end, inside the sub-process `parent`."""
    nodes = {
        f"{prefix}_start": {**node("startEvent"), "parent": parent},
        f"{prefix}_prep": {
            **node("serviceTask", "Prepare", tool=LEASED, inputs={"side": "'item'"}),
            "parent": parent,
        },
        f"{prefix}_review": {
            **node("userTask", "Review", assignee=ASSIGNEE),
            "parent": parent,
        },
        f"{prefix}_end": {**node("endEvent"), "parent": parent},
    }
    ids = list(nodes)
    flows = {f"{prefix}_f{i}": flow(a, b) for i, (a, b) in enumerate(itertools.pairwise(ids), 1)}
    return nodes, flows


def multi_document(items: int, sequential: bool = False) -> dict[str, Any]:
    """A multi-instance sub-process over `items` (a literal cardinality both engines read)."""
    settings: dict[str, Any] = {"cardinality": str(items)}
    if sequential:
        settings["sequential"] = True
    inner, inner_flows = _inside("body", "b")
    nodes = {
        "start": node("startEvent"),
        "body": node("subProcess", "Body", multiInstance=settings),
        **inner,
        "end": node("endEvent"),
    }
    flows = {"f1": flow("start", "body"), "f2": flow("body", "end"), **inner_flows}
    return document(nodes, flows)


def boundary_document() -> dict[str, Any]:
    """A sub-process with a non-interrupting one-day timer on it, leading to its own end."""
    inner, inner_flows = _inside("work", "w")
    nodes = {
        "start": node("startEvent"),
        "work": node("subProcess", "Work"),
        **inner,
        "remind": node(
            "boundaryEvent",
            "Remind",
            event="timer",
            attachedTo="work",
            interrupting=False,
            duration="P1D",
        ),
        "end": node("endEvent"),
        "reminded": node("endEvent"),
    }
    flows = {
        "f1": flow("start", "work"),
        "f2": flow("work", "end"),
        "f3": flow("remind", "reminded"),
        **inner_flows,
    }
    return document(nodes, flows)


def leaf_document() -> dict[str, Any]:
    """The called process: tool -> user task."""
    nodes = {
        "l_start": node("startEvent"),
        "l_prep": node("serviceTask", "Prepare", tool=LEASED, inputs={"side": "'item'"}),
        "l_review": node("userTask", "Review", assignee=ASSIGNEE),
        "l_end": node("endEvent"),
    }
    ids = list(nodes)
    flows = {f"l_f{i}": flow(a, b) for i, (a, b) in enumerate(itertools.pairwise(ids))}
    return document(nodes, flows)


def call_document() -> dict[str, Any]:
    nodes = {
        "start": node("startEvent"),
        "call": node("callActivity", "Call", process="leaf"),
        "end": node("endEvent"),
    }
    return document(nodes, {"f1": flow("start", "call"), "f2": flow("call", "end")})


def _named(xml: bytes, process_id: str) -> bytes:
    """The writer's file with its process id set (Spiff finds a called process by its id)."""
    return xml.replace(b'"Process_1"', f'"{process_id}"'.encode())


WORK = {
    prefix + "_prep": Work({"side": "'item'"}) for prefix in ("b", "w", "l")
}  # Spiff's stand-in for the leased tool


@dataclass
class SpiffCalling(SpiffProcess):
    """A Spiff process parsed with the files of the processes its call activities start."""

    called: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        parser = _Parser()
        parser.add_bpmn_xml(prepared(self.xml, Scenario()), filename=self.process_id)
        for index, xml in enumerate(self.called):
            parser.add_bpmn_xml(prepared(xml, Scenario()), filename=f"called-{index}")
        self.spec = parser.get_spec(self.process_id)
        self.subprocess_specs = parser.get_subprocess_specs(self.process_id)


@dataclass(frozen=True)
class Structure:
    name: str
    key: str
    instances: int  # instances a run starts
    items: int  # user tasks each instance completes


def structures(args: argparse.Namespace) -> tuple[list[Structure], dict[str, bytes]]:
    """The structures to run and the BPMN file of each process key."""
    files: dict[str, bytes] = {}
    found: list[Structure] = []
    only = set(args.only.split(",")) if args.only else None

    def wanted(name: str) -> bool:
        return only is None or name in only

    if wanted("multi-instance"):
        for items in args.items:
            key = f"mi{items}"
            files[key] = bpmn(multi_document(items))
            found.append(Structure(f"multi-instance x{items:,}", key, 1, items))
    if wanted("sequential"):
        key = f"seq{args.sequential}"
        files[key] = bpmn(multi_document(args.sequential, sequential=True))
        found.append(Structure(f"sequential x{args.sequential:,}", key, 1, args.sequential))
    if wanted("boundary"):
        files["boundary"] = bpmn(boundary_document())
        found.append(Structure("boundary timer", "boundary", args.count, 1))
    if wanted("call"):
        files["leaf"] = _named(bpmn(leaf_document()), "leaf")
        files["call"] = bpmn(call_document())
        found.append(Structure("call activity", "call", args.count, 1))
    return found, files


def publish(b: Bench, files: dict[str, bytes]) -> None:
    """Publish each file in Flowdesk (the called process first) and parse it for Spiff."""
    from webapp.extensions import db
    from webapp.services import processes

    with b.app.app_context():
        for key in sorted(files, key=lambda k: k != "leaf"):
            process, _ = processes.create_imported(
                key, key, files[key], partition_id=None, actor=None
            )
            b.versions[key] = processes.publish(process, actor=None).id
        db.session.commit()
    for key, xml in files.items():
        if key == "leaf":
            continue
        called = (files["leaf"],) if key == "call" else ()
        b.spiff[key] = SpiffCalling(xml, "Process_1", {}, WORK, called=called)


# --- the longest transaction --------------------------------------------------------------------


class LongestTransaction(threading.Thread):
    """Samples the sessions of the database every 20 ms; keeps the longest open transaction
    and the statement it was running."""

    QUERY = text(
        "SELECT extract(epoch FROM clock_timestamp() - xact_start), left(query, 120) "
        "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
        "AND backend_type = 'client backend' AND xact_start IS NOT NULL AND state <> 'idle' "
        "ORDER BY 1 DESC LIMIT 1"
    )

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.engine = create_engine(url, isolation_level="AUTOCOMMIT")
        self.stop = threading.Event()
        self.longest = 0.0
        self.query = ""

    def run(self) -> None:
        with self.engine.connect() as conn:
            while not self.stop.is_set():
                row = conn.execute(self.QUERY).first()
                if row is not None and float(row[0]) > self.longest:
                    self.longest, self.query = float(row[0]), row[1]
                time.sleep(0.02)
        self.engine.dispose()

    def finish(self) -> float:
        self.stop.set()
        self.join(timeout=5)
        return self.longest


# --- the runs -----------------------------------------------------------------------------------


@dataclass
class Run:
    result: Result
    items: int  # user tasks completed
    finished: bool = True
    longest: float | None = None  # seconds
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def item_rate(self) -> float:
        return self.items / self.result.seconds if self.result.seconds else 0.0

    def cpu_ms_per_item(self) -> float:
        groups = [g for g in self.result.cpu if g not in ("machine", "wall")]
        return sum(self.result.cpu[g] for g in groups) / max(self.items, 1) * 1000


class BudgetSpent(Exception):
    """Spiff's run went past its budget (raised from its save hook, mid-step)."""


class BudgetRunner(SpiffRunner):
    """A Spiff runner that stops at a deadline, also inside one long `do_engine_steps`."""

    deadline = float("inf")

    def _save(self, row_id: int, workflow: Any) -> None:
        super()._save(row_id, workflow)
        if time.monotonic() >= self.deadline:
            raise BudgetSpent


def run_spiff(b: Bench, s: Structure, budget: float) -> Run:
    """Spiff runs the structure in this process: start, then complete every ready user task of
    each instance (read back from the table) until none is left or the budget is spent."""
    b.stop_workers()
    runner = BudgetRunner(b.spiff[s.key], b.spiff_engine)
    meter = Meter({"this process": pids_cpu([os.getpid()]), **b.db_group(SPIFF_APP)})
    began = time.monotonic()
    runner.deadline = began + budget
    with b.spiff_engine.connect() as conn:
        floor = conn.scalar(select(func.max(workflows.c.id))) or 0
    items = 0
    finished = False
    try:
        ids = [runner.start({}) for _ in range(s.instances)]
        for row_id in ids:
            while runner.complete_task(row_id, {}):
                items += 1
        finished = True
    except BudgetSpent:
        pass
    seconds = time.monotonic() - began
    cpu = meter.stop()
    done = runner.completed_between(floor + 1, floor + s.instances)
    finished = finished and done == s.instances
    result = Result(done, seconds, cpu, extra={"transactions": runner.steps / max(items, 1)})
    return Run(result, items, finished)


def _completed(session: Any, Instance: Any, floor: int) -> int:
    """Top-level instances above `floor` that completed (called children not counted)."""
    return int(
        session.scalar(
            select(func.count(Instance.id)).where(
                Instance.id > floor, Instance.status == "completed", Instance.parent_id.is_(None)
            )
        )
        or 0
    )


def run_flowdesk(b: Bench, s: Structure, workers: int, warm: int, budget: float) -> Run:
    """Flowdesk runs the structure through `workers` worker processes; this process starts the
    instances and completes each user task through the task service as it opens, until all
    are done or the budget is spent."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Instance, ProcessVersion, Task, User
    from webapp.services import tasks
    from webapp.services.jobs import commit

    procs = b.workers(workers)
    with b.app.app_context():
        warm_version = db.session.get(ProcessVersion, b.versions["leased"])
        floor = db.session.scalar(select(func.max(Instance.id))) or 0
        for _ in range(warm):  # workers import and connect meanwhile
            commit(steps.start_instance(db.session, warm_version, input={"amount": 500}))
        _wait_completed(b, floor, warm)
        version = db.session.get(ProcessVersion, b.versions[s.key])
        db.session.expunge(version)
        user = db.session.get(User, b.user_id)
        floor = db.session.scalar(select(func.max(Instance.id))) or 0
        db.session.rollback()
        longest = LongestTransaction(b.database.url) if is_postgres(b.database.url) else None
        if longest is not None:
            longest.start()
        meter = Meter(
            {
                "workers": pids_cpu([p.pid for p in procs]),
                "this process": pids_cpu([os.getpid()]),
                **b.redis_group(),
                **b.db_group(WORKER_APP, STARTER_APP),
            }
        )
        began = time.monotonic()
        slowest_start = 0.0
        for _ in range(s.instances):
            started = time.monotonic()
            commit(steps.start_instance(db.session, version, input={}))
            slowest_start = max(slowest_start, time.monotonic() - started)
        items = 0
        deadline = began + budget
        while time.monotonic() < deadline:
            open_ids = list(
                db.session.scalars(
                    select(Task.id).where(Task.instance_id > floor, Task.status == "open")
                )
            )
            done = _completed(db.session, Instance, floor)
            db.session.rollback()
            for task_id in open_ids:
                tasks.complete(user, task_id, {})
                items += 1
            if done >= s.instances and not open_ids:
                break
            if not open_ids:
                time.sleep(0.02)
        seconds = time.monotonic() - began
        cpu = meter.stop()
        done = _completed(db.session, Instance, floor)
        db.session.rollback()
    result = Result(done, seconds, cpu)
    run = Run(result, items, done == s.instances)
    run.longest = longest.finish() if longest is not None else None
    run.notes["longest statement"] = longest.query if longest is not None else ""
    run.notes["slowest start"] = slowest_start
    return run


# --- the comparison -----------------------------------------------------------------------------


def _show(name: str, run: Run) -> str:
    longest = ""
    if run.longest:
        statement = run.notes.get("longest statement", "")
        longest = f", longest transaction {run.longest * 1000:.0f} ms (at: {statement!r})"
    unfinished = "" if run.finished else " (NOT FINISHED: budget spent)"
    return (
        f"{_line(name, run.result)}\n      {run.items:,} items, {run.item_rate:.1f} items/s, "
        f"CPU {run.cpu_ms_per_item():.1f} ms/item{longest}{unfinished}"
    )


def _verdict(target: str, ok: bool, figure: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'}  {target}: {figure}")
    return ok


def compare(server: str | None, workdir: Path, args: argparse.Namespace) -> bool:
    found, files = structures(args)
    runs: dict[tuple[str, str], list[Run]] = collections.defaultdict(list)
    with bench(server, workdir, "flowdesk_structured") as b:
        publish(b, files)
        plan: list[tuple[Structure, str, Callable[[], Run]]] = []
        for s in found:
            plan.append((s, "Spiff", lambda s=s: run_spiff(b, s, args.spiff_budget)))
            plan.append(
                (
                    s,
                    "Flowdesk",
                    lambda s=s: run_flowdesk(b, s, args.workers, args.warm, args.flowdesk_budget),
                )
            )
        for round_number in range(args.rounds):
            for s, engine, go in plan:
                pair = [(s, engine, go)]
                run = pair[0][2]()
                runs[(s.name, engine)].append(run)
                name = f"{engine} {s.name} ({b.kind})"
                print(f"  round {round_number + 1}: {_show(name, run)}", flush=True)
            plan = [p for i in range(0, len(plan), 2) for p in reversed(plan[i : i + 2])]
    print(f"\n== medians of {args.rounds} rounds, {args.workers} workers, {b.kind}")
    ok = True
    per_item: dict[int, float] = {}
    for s in found:
        flowdesk, spiff = runs[(s.name, "Flowdesk")], runs[(s.name, "Spiff")]
        ratios = [f.item_rate / max(p.item_rate, 1e-9) for f, p in zip(flowdesk, spiff)]
        cpu = [f.cpu_ms_per_item() / max(p.cpu_ms_per_item(), 1e-9) for f, p in zip(flowdesk,
               spiff)]  # fmt: skip
        longest = max((r.longest or 0.0) for r in flowdesk)
        spiff_done = all(p.finished for p in spiff)
        print(
            f"{s.name:<24} Flowdesk {statistics.median(r.item_rate for r in flowdesk):8.1f} "
            f"items/s {statistics.median(r.cpu_ms_per_item() for r in flowdesk):6.1f} ms CPU/item"
            f" | Spiff {statistics.median(r.item_rate for r in spiff):8.1f} items/s "
            f"{statistics.median(r.cpu_ms_per_item() for r in spiff):6.1f} ms CPU/item"
            f"{'' if spiff_done else ' (budget spent)'} | longest transaction "
            f"{longest * 1000:.0f} ms"
        )
        ratio = statistics.median(ratios)
        bound = "" if spiff_done else " (lower bound: Spiff did not finish)"
        if not all(f.finished for f in flowdesk):
            bound = " (Flowdesk did not finish either: rates of the items each completed)"
        if not any(p.items for p in spiff):
            bound = f" (Spiff completed no item within {args.spiff_budget:g} s)"
        ok &= _verdict(
            f"{s.name}: Flowdesk >= 3x Spiff",
            ratio >= 3.0,
            f"{ratio:.2f}x rate, {statistics.median(cpu):.2f}x CPU per item{bound}"
            if any(p.items for p in spiff)
            else f"Flowdesk {statistics.median(r.item_rate for r in flowdesk):.1f} items/s{bound}",
        )
        if s.key.startswith("mi"):
            per_item[s.items] = statistics.median(r.cpu_ms_per_item() for r in flowdesk)
        if s.items >= 10_000 and is_postgres(b.database.url):
            ok &= _verdict(
                f"{s.name}: no transaction over 1 s", longest <= 1.0, f"{longest * 1000:.0f} ms"
            )
    if len(per_item) >= 2:
        low, high = per_item[min(per_item)], per_item[max(per_item)]
        ok &= _verdict(
            f"CPU per item flat from {min(per_item):,} to {max(per_item):,} items (within 1.5x)",
            high <= 1.5 * low,
            ", ".join(f"{n:,}: {v:.1f} ms" for n, v in sorted(per_item.items()))
            + f" ({high / low:.2f}x)",
        )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", default="10,100,1000,10000", help="multi-instance sizes")
    parser.add_argument("--sequential", type=int, default=100)
    parser.add_argument("--count", type=int, default=100, help="instances of boundary, call")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--warm", type=int, default=10)
    parser.add_argument("--spiff-budget", type=float, default=300.0, help="seconds a Spiff run")
    parser.add_argument(
        "--flowdesk-budget", type=float, default=1800.0, help="seconds a Flowdesk run"
    )
    parser.add_argument("--only", default="", help="comma-separated structure names")
    parser.add_argument("--save-bpmn", metavar="DIR")
    args = parser.parse_args()
    args.items = [int(n) for n in args.items.split(",") if n]
    if args.save_bpmn:
        folder = Path(args.save_bpmn)
        folder.mkdir(parents=True, exist_ok=True)
        for key, xml in structures(args)[1].items():
            (folder / f"{key}.bpmn").write_bytes(xml)
    server = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")
    with open("/proc/loadavg") as load:
        print(f"cpus: {os.cpu_count()}   load average: {load.read().split()[:3]}")
    with tempfile.TemporaryDirectory(prefix="flowdesk-structured-") as tmp:
        ok = compare(server, Path(tmp), args)
    print("all targets met" if ok else "some targets not met")


if __name__ == "__main__":
    main()
