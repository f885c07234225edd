"""Benchmark: Flowdesk against SpiffWorkflow on the same BPMN and the same database server, in
interleaved rounds; prints medians, ratios and a PASS/FAIL line per target.

Processes (exported with Flowdesk's BPMN writer; Flowdesk imports that file, Spiff parses it):
- sample: tool -> exclusive gateway -> parallel split into two tools -> join.
- tasks: tool -> user task (completed through the task service) -> timer PT1S -> tool.

SpiffWorkflow runs in this process and writes its serializer JSON to `spiff_workflows` after
every engine step, one transaction each (see benchmarks/_spiff.py). Flowdesk runs N
`python worker.py` processes (embedded Redis), the pure path (`noop`) and the leased path
(`bench.echo`, a tool with side effects).

CPU per instance is counted two ways (user + system time from /proc, over the drain only):

- **all processes**: every process of the run. SpiffWorkflow: this process (starting the
  instances, completing the tasks, Spiff itself) and the whole database cluster. Flowdesk: the
  workers, Redis, this process (starting the instances and completing the tasks through the
  services, as the web server would, and the thread polling for completions) and the whole
  database cluster. The cluster is the postmaster, its live children (the backends of every
  connection, the checkpointer, WAL writer, background writer, autovacuum) and the children it
  reaped (cutime, cstime), so run it on a cluster of its own. On SQLite the database is
  in-process.
- **engine + its database backends**: SpiffWorkflow's process plus the PostgreSQL backends
  serving its connections (`application_name` `spiff`); Flowdesk's workers, Redis and this
  process plus the backends serving the workers' and the starter's connections
  (`flowdesk-worker`, `flowdesk-starter`). Left out on both sides: the cluster's background
  processes and the backends of the benchmark's own measuring connections (`bench-monitor`:
  completion polling, statistics). A backend that exits during the drain is lost (the pools
  keep theirs open). On SQLite both accountings are the same.

A PostgreSQL with fsync on, of its own (as root):

    mkdir -p /work/benchpg && chown postgres:postgres /work/benchpg
    su postgres -c "/usr/lib/postgresql/15/bin/initdb -D /work/benchpg/data -A trust -U postgres"
    su postgres -c "/usr/lib/postgresql/15/bin/pg_ctl -D /work/benchpg/data -l /work/benchpg/log \
        -o '-p 55433 -h 127.0.0.1 -k /tmp -c max_connections=200 \
        -c shared_preload_libraries=pg_stat_statements' start"

Run (scratch databases are created on that server and dropped after):

    BENCH_DATABASE_URL=postgresql://postgres@127.0.0.1:55433/postgres \
        .venv/bin/python benchmarks/versus_spiff.py [--rounds 3] [--count 600] [--workers 2]
    ... --more-workers 4   # the scaling check's second worker count (0 skips it)
    ... --tasks-count 200  # instances of the user task + timer process (0 skips it)
    ... --spiff-persist bpmn   # Spiff saves after BPMN elements' tasks only (default: every task)
    ... --no-sqlite        # PostgreSQL only (SQLite's comparison runs after it by default)
    ... --big              # 1,000,000 finished instances, 10,000,000 history rows: step cost
    ... --profile DIR      # and profile one leased drain (with --rounds 0: only that)
    ... --save-bpmn DIR    # write the two BPMN files
    .venv/bin/python benchmarks/versus_spiff.py --sqlite-only --rounds 1 --count 8  # smoke

A round runs every variant once (Spiff, Flowdesk pure, leased, leased with more workers, both
engines on the tasks process; then Spiff and Flowdesk leased on SQLite), each round starting at
another variant; then the leased path runs once more at half its median rate for the latency.
The ratios behind the verdicts are medians of the ratios within each round. Per run it prints
instances/s, CPU ms per instance (all processes, by process group, and engine + its database
backends), p95 start-to-complete,
Redis calls, PostgreSQL commits (pg_stat_database.xact_commit: every session of the database,
autovacuum included) and Spiff's transactions per instance, and how busy the machine was
(cores busy, and how much of it other processes: on a shared machine the figures swing, the
interleaving keeps the ratios comparable). "4 workers not slower than 2" allows 5% noise.

Without BENCH_DATABASE_URL (or DATABASE_URL) only the SQLite comparison runs. `--profile`
needs py-spy (`.venv/bin/pip install py-spy`; not a dependency); it records one worker's main
thread in wall time (`py-spy record --threads --idle`) during one leased drain and prints it by
layer (waiting on PostgreSQL or Redis, psycopg, redis-py, SQLAlchemy, RQ, Flowdesk) and by
function, the Redis commands per job and, with pg_stat_statements loaded, the SQL statements
per instance. By hand: `py-spy top --pid <worker pid>` or `py-spy record -o out.svg --pid ...`
while a run goes on (the worker logs are in the run's temporary folder).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("FLOWDESK_EXTRA_TOOL_MODULES", "benchmarks.bench_tools")

from sqlalchemy import bindparam, create_engine, func, select, text  # noqa: E402
from sqlalchemy.engine import Engine, make_url  # noqa: E402

from benchmarks._flowdesk import (  # noqa: E402
    Completions,
    Database,
    bench_app,
    cpu_seconds,
    machine_busy,
    start_workers,
    stop_workers,
)
from benchmarks._spiff import SpiffProcess, SpiffRunner, Work, metadata  # noqa: E402
from tests.helpers.documents import document, flow, node, sample_document  # noqa: E402
from tests.helpers.scratch import is_postgres, scratch_database  # noqa: E402

ROLE = "bench-worker"
USER = "bench-user"
PASSWORD = "bench-password-long-enough-1"
WARM = 20
TIMEOUT = 180.0
LEASED = "bench.echo"


# --- the processes ------------------------------------------------------------------------------


def sample(tool: str) -> dict[str, Any]:
    doc = sample_document()
    for spec in doc["nodes"].values():
        if spec["kind"] == "serviceTask":
            spec["config"]["tool"] = tool
    return doc


def tasks_document() -> dict[str, Any]:
    """tool -> user task -> timer -> tool, the tools leased."""
    nodes = {
        "start": node("startEvent", "Start"),
        "prepare": node(
            "serviceTask", "Prepare", tool=LEASED, inputs={"amount": "$input.amount"}, saveTo="p"
        ),
        "review": node("userTask", "Review", assignee={"type": "role", "value": ROLE}),
        "wait": node("timerCatch", "Wait", duration="PT1S"),
        "finish": node("serviceTask", "Finish", tool=LEASED, inputs={"side": "'done'"}),
        "end": node("endEvent", "Done"),
    }
    flows = {
        "f1": flow("start", "prepare"),
        "f2": flow("prepare", "review"),
        "f3": flow("review", "wait"),
        "f4": flow("wait", "finish"),
        "f5": flow("finish", "end"),
    }
    return document(nodes, flows)


# Python for Spiff where the file holds Flowdesk expressions (conditions, tool inputs).
SAMPLE_CONDITIONS = {"big": "check['amount'] > 100"}
SAMPLE_WORK = {
    "check": Work({"amount": "amount"}, "check"),
    "left": Work({"side": "'left'"}),
    "right": Work({"side": "'right'"}),
}
TASKS_WORK = {"prepare": Work({"amount": "amount"}, "p"), "finish": Work({"side": "'done'"})}


def bpmn(doc: dict[str, Any]) -> bytes:
    from webapp.process.bpmn.writer import export_bpmn

    return export_bpmn(doc).encode()


# --- CPU of every process of a run --------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def cluster_cpu(postmaster: int) -> dict[int, float]:
    """CPU seconds of a PostgreSQL cluster by pid: the postmaster with the children it reaped
    (cutime, cstime), and each live child."""
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None:
            continue
        pid = int(entry.name)
        if pid == postmaster:
            found[pid] = sum(int(v) for v in fields[11:15]) / tick
        elif int(fields[1]) == postmaster:
            found[pid] = (int(fields[11]) + int(fields[12])) / tick
    return found


def postmaster_pid(url: str) -> int | None:
    """The pid of the server's postmaster, when its data directory is readable here."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            directory = conn.execute(text("SHOW data_directory")).scalar_one()
        return int(Path(directory, "postmaster.pid").read_text().split()[0])
    except Exception:  # not a superuser, or another machine
        return None
    finally:
        engine.dispose()


#: The application_name of each side's connections, by which the backends serving them are found.
SPIFF_APP = "spiff"
WORKER_APP = "flowdesk-worker"
STARTER_APP = "flowdesk-starter"
MONITOR_APP = "bench-monitor"


def tagged(url: str, application: str) -> str:
    """The URL with its PostgreSQL connections named `application` (SQLite URLs unchanged)."""
    if not is_postgres(url):
        return url
    found = make_url(url)
    return found.update_query_dict({"application_name": application}).render_as_string(
        hide_password=False
    )


def backends_cpu(monitor: Engine, applications: tuple[str, ...]) -> Callable[[], dict[int, float]]:
    """CPU seconds by pid of the live backends serving connections named `applications`."""

    def read() -> dict[int, float]:
        if not applications:
            return {}
        with monitor.connect() as conn:
            pids = conn.execute(
                text(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                    "AND application_name IN :names"
                ).bindparams(bindparam("names", expanding=True)),
                {"names": list(applications)},
            ).scalars()
            return {pid: cpu_seconds(pid) for pid in pids}

    return read


class Meter:
    """CPU seconds by group over a run; groups are read again at the end (new pids count from
    zero, as backends a pool opens during the run)."""

    def __init__(self, groups: dict[str, Callable[[], dict[int, float]]]) -> None:
        self.groups = groups
        self.start = {name: read() for name, read in groups.items()}
        self.machine = machine_busy()
        self.wall = time.monotonic()

    def stop(self) -> dict[str, float]:
        used = {}
        for name, read in self.groups.items():
            end, begin = read(), self.start[name]
            used[name] = sum(max(0.0, v - begin.get(pid, 0.0)) for pid, v in end.items())
        used["machine"] = machine_busy() - self.machine
        used["wall"] = time.monotonic() - self.wall
        return used


def pids_cpu(pids: list[int]) -> Callable[[], dict[int, float]]:
    return lambda: {pid: cpu_seconds(pid) for pid in pids}


# --- one database server, set up once -----------------------------------------------------------


@dataclass
class Bench:
    """One database (PostgreSQL or SQLite) with the processes published in both engines."""

    database: Database
    workdir: Path
    app: Any
    embedded: Any
    versions: dict[str, int]
    user_id: int
    spiff_engine: Engine
    postmaster: int | None
    monitor: Engine
    spiff: dict[str, SpiffProcess] = field(default_factory=dict)
    pool: list[subprocess.Popen] = field(default_factory=list)

    def workers(self, count: int) -> list[subprocess.Popen]:
        """`count` running worker processes, kept from the last Flowdesk run when it had as
        many (no others: they would take jobs from the same queue)."""
        if len(self.pool) != count or any(p.poll() is not None for p in self.pool):
            self.stop_workers()
            self.pool = start_workers(count, self.env(), self.workdir)
        return self.pool

    def stop_workers(self) -> None:
        stop_workers(self.pool)
        self.pool = []

    @property
    def kind(self) -> str:
        return self.database.kind

    def db_group(self, *applications: str) -> dict[str, Callable[[], dict[int, float]]]:
        """The whole cluster ("database") and, inside it, the backends of the connections
        named `applications` ("db backends")."""
        if self.postmaster is None:
            return {}
        postmaster = self.postmaster
        return {
            "database": lambda: cluster_cpu(postmaster),
            BACKENDS: backends_cpu(self.monitor, applications),
        }

    def redis_group(self) -> dict[str, Callable[[], dict[int, float]]]:
        if self.embedded is None or self.embedded.process is None:
            return {}
        return {"redis": pids_cpu([self.embedded.process.pid])}

    def env(self) -> dict[str, str]:
        return dict(
            os.environ,
            DATABASE_URL=tagged(self.database.url, WORKER_APP),
            REDIS_URL=self.app.config["REDIS_URL"],
            SECRET_KEY=self.app.config["SECRET_KEY"],
            RQ_QUEUE=self.app.config["RQ_QUEUE"],
            FLOWDESK_ENV="development",
        )


@contextmanager
def bench(server: str | None, workdir: Path, name: str) -> Iterator[Bench]:
    """A scratch database on `server` (SQLite without one), migrated, with the processes
    published in Flowdesk, the Spiff table, and the user who works the tasks."""
    from flask_migrate import upgrade

    from webapp.extensions import db
    from webapp.services import accounts, processes

    with scratch_database(server, workdir, name) as url:
        database = Database(url)
        workdir = workdir / name
        workdir.mkdir(parents=True, exist_ok=True)
        app, embedded = bench_app(Database(tagged(url, STARTER_APP)), workdir)
        try:
            with app.app_context():
                upgrade()
                role = accounts.ensure_role(ROLE, ["tasks.work", "instances.start"])
                user = accounts.create_user(USER, PASSWORD, roles=[role], check_strength=False)
                versions = {}
                docs = {
                    "pure": sample("noop"),
                    "leased": sample(LEASED),
                    "tasks": tasks_document(),
                }
                for key, doc in docs.items():
                    process, _ = processes.create_imported(
                        key, key, bpmn(doc), partition_id=None, actor=None
                    )
                    versions[key] = processes.publish(process, actor=None).id
                db.session.commit()
                user_id = user.id
            spiff_engine = create_engine(tagged(url, SPIFF_APP))
            monitor = create_engine(tagged(url, MONITOR_APP))
            metadata.create_all(spiff_engine)
            postmaster = postmaster_pid(url) if is_postgres(url) else None
            found = Bench(database, workdir, app, embedded, versions, user_id, spiff_engine,
                          postmaster, monitor)  # fmt: skip
            found.spiff = {
                "sample": SpiffProcess(
                    bpmn(docs["leased"]), "Process_1", SAMPLE_CONDITIONS, SAMPLE_WORK
                ),
                "tasks": SpiffProcess(bpmn(docs["tasks"]), "Process_1", {}, TASKS_WORK),
            }
            try:
                yield found
            finally:
                found.stop_workers()
            spiff_engine.dispose()
            monitor.dispose()
        finally:
            if embedded is not None:
                embedded.stop()
            with app.app_context():
                db.engine.dispose()


# --- measurements -------------------------------------------------------------------------------


@dataclass
class Result:
    done: int
    seconds: float
    cpu: dict[str, float]
    latencies: list[float] = field(default_factory=list)
    extra: dict[str, float] = field(default_factory=dict)
    commands: dict[str, int] = field(default_factory=dict)  # Redis calls by command (profile)

    @property
    def rate(self) -> float:
        return self.done / self.seconds if self.seconds else 0.0

    def cpu_ms(self, group: str | None = None) -> float:
        """CPU ms per instance of one group, or of all processes (the backends are counted
        once, inside the cluster)."""
        used = self.cpu[group] if group else sum(self.cpu[g] for g in _groups(self.cpu))
        return used / max(self.done, 1) * 1000

    def engine_cpu_ms(self) -> float:
        """CPU ms per instance of the engine's processes and their database backends: every
        group but the whole cluster, with the backends instead (module docstring)."""
        groups = [g for g in _groups(self.cpu) if g != "database"]
        used = sum(self.cpu[g] for g in groups) + self.cpu.get(BACKENDS, 0.0)
        return used / max(self.done, 1) * 1000

    def p95_ms(self) -> float:
        if len(self.latencies) < 2:
            return float("nan")
        return statistics.quantiles(self.latencies, n=100)[94] * 1000


BACKENDS = "db backends"


def _groups(cpu: dict[str, float]) -> list[str]:
    """The process groups of a run that add up to all processes (not the machine, the wall
    time, or the backends, which the cluster includes)."""
    return [g for g in cpu if g not in ("machine", "wall", BACKENDS)]


def run_spiff(b: Bench, process: str, count: int, persist: str) -> Result:
    """Spiff drains `count` instances in this process (tasks: start all, complete every user
    task, then fire the timers as they fall due)."""
    b.stop_workers()  # idle Flowdesk workers would poll meanwhile
    runner = SpiffRunner(b.spiff[process], b.spiff_engine, persist=persist)
    for _ in range(3):  # warm the connection pool and the parser's caches
        runner.start({"amount": 500})
    runner.steps = 0
    meter = Meter({"this process": pids_cpu([os.getpid()]), **b.db_group(SPIFF_APP)})
    began = time.monotonic()
    ids = [runner.start({"amount": 500}) for _ in range(count)]
    if process == "tasks":
        for row_id in ids:
            runner.complete_task(row_id, {})
        deadline = time.monotonic() + TIMEOUT
        while runner.completed_between(ids[0], ids[-1]) < count and time.monotonic() < deadline:
            if not runner.fire_due_timers():
                time.sleep(0.05)
    seconds = time.monotonic() - began
    cpu = meter.stop()
    done = runner.completed_between(ids[0], ids[-1])
    return Result(done, seconds, cpu, extra={"transactions": runner.steps / max(count, 1)})


def _last_instance_id(b: Bench) -> int:
    from webapp.extensions import db
    from webapp.models import Instance

    with b.app.app_context():
        return db.session.scalar(select(func.max(Instance.id))) or 0


def _commits(b: Bench) -> int | None:
    if not is_postgres(b.database.url):
        return None
    with b.spiff_engine.connect() as conn:
        query = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        return int(conn.execute(text(query)).scalar_one())


def _redis_calls(b: Bench) -> int:
    from webapp.infra.queue import redis_connection

    with b.app.app_context():
        stats = redis_connection(b.app).info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


def run_flowdesk(
    b: Bench,
    process: str,
    count: int,
    workers: int,
    rate: float = 0.0,
    profile: Path | None = None,
) -> Result:
    """Flowdesk drains `count` instances of `process` ("pure", "leased" or "tasks") through
    `workers` worker processes; this process starts them (at `rate` a second, 0 = all at once)
    and completes the user tasks through the task service."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import Job, ProcessVersion, Task, User
    from webapp.services import tasks
    from webapp.services.jobs import commit

    procs = b.workers(workers)
    spy = None
    try:
        with b.app.app_context():
            warm = db.session.get(ProcessVersion, b.versions["leased"])
            for _ in range(WARM):  # workers import and connect meanwhile
                commit(steps.start_instance(db.session, warm, input={"amount": 500}))
            floor = _last_instance_id(b)
            _wait_completed(b, floor - WARM, WARM)
            version = db.session.get(ProcessVersion, b.versions[process])
            db.session.expunge(version)  # immutable: keep it across commits
            user = db.session.get(User, b.user_id)
            floor = _last_instance_id(b)
            completions = Completions(tagged(b.database.url, MONITOR_APP), floor=floor, pause=0.1)
            completions.start()
            if profile is not None:
                spy = _py_spy(procs[0].pid, profile)
            commits, calls = _commits(b), _redis_calls(b)
            commands = redis_commands(b) if profile is not None else {}
            if profile is not None:
                reset_statements(b)
            meter = Meter(
                {
                    "workers": pids_cpu([p.pid for p in procs]),
                    "this process": pids_cpu([os.getpid()]),
                    **b.redis_group(),
                    **b.db_group(WORKER_APP, STARTER_APP),
                }
            )
            began = time.monotonic()
            for index in range(count):
                if rate > 0:
                    pause = began + index / rate - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
                commit(steps.start_instance(db.session, version, input={"amount": 500}))
            if process == "tasks":
                _work_tasks(user, floor, count, tasks, Task, db)
            deadline = time.monotonic() + TIMEOUT
            while len(completions.done) < count and time.monotonic() < deadline:
                time.sleep(0.02)
            seconds = time.monotonic() - began
            cpu = meter.stop()
            completions.stop.set()
            if profile is not None:
                after_commands = redis_commands(b)
                commands = {k: v - commands.get(k, 0) for k, v in after_commands.items()}
            extra: dict[str, float] = {"redis calls": _redis_calls(b) - calls}
            after = _commits(b)
            if commits is not None and after is not None:
                extra["commits"] = after - commits
            extra["jobs"] = db.session.scalar(
                select(func.count(Job.id)).where(Job.instance_id > floor)
            )
            db.session.rollback()
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT, not on SIGTERM
            spy.wait(timeout=60)
    done = len(completions.done)
    extra = {k: v / max(done, 1) for k, v in extra.items()}
    return Result(done, seconds, cpu, sorted(completions.done.values()), extra, commands)


def _wait_completed(b: Bench, floor: int, count: int) -> None:
    from webapp.extensions import db
    from webapp.models import Instance

    deadline = time.monotonic() + 90
    with b.app.app_context():
        while time.monotonic() < deadline:
            done = db.session.scalar(
                select(func.count(Instance.id)).where(
                    Instance.id > floor, Instance.status == "completed"
                )
            )
            db.session.rollback()
            if done >= count:
                return
            time.sleep(0.1)
    raise SystemExit("warm-up instances did not complete: are the workers running? (logs in "
                     f"{b.workdir})")  # fmt: skip


def _work_tasks(user: Any, floor: int, count: int, tasks: Any, Task: Any, db: Any) -> None:
    """Complete each instance's user task as it opens, as a person in the inbox would."""
    from webapp.models import Instance

    completed = 0
    deadline = time.monotonic() + TIMEOUT
    while completed < count and time.monotonic() < deadline:
        open_ids = list(
            db.session.scalars(
                select(Task.id)
                .join(Instance, Instance.id == Task.instance_id)
                .where(Task.instance_id > floor, Task.status == "open")
                .order_by(Task.id)
            )
        )
        db.session.rollback()
        for task_id in open_ids:
            tasks.complete(user, task_id, {})
            completed += 1
        if not open_ids:
            time.sleep(0.05)


# --- profile ------------------------------------------------------------------------------------


def _py_spy(pid: int, folder: Path) -> subprocess.Popen:
    exe = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if exe is None:
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / "worker.collapsed"
    log = open(folder / "py-spy.log", "w")  # noqa: SIM115 - open while py-spy runs
    return subprocess.Popen(
        [
            exe,
            "record",
            "--pid",
            str(pid),
            "--threads",
            "--idle",
            "--format",
            "raw",
            "--rate",
            "200",
            "-o",
            str(out),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )


#: Where the worker's main thread is, by the innermost library frame of each sample.
_LAYERS = (
    ("waiting on Redis", ("_read_from_socket", "can_read")),
    ("waiting on PostgreSQL", ("Connection.wait",)),
    ("redis-py (Python)", ("redis/",)),
    ("psycopg (Python)", ("psycopg",)),
    ("SQLAlchemy", ("sqlalchemy/",)),
    ("RQ", ("rq/",)),
    ("Flowdesk", ("webapp/",)),
)


def print_profile(folder: Path, top: int = 25) -> None:
    """The worker's main thread from py-spy's collapsed stacks (wall time, idle included): by
    layer, and the top functions by own and by total samples."""
    path = folder / "worker.collapsed"
    if not path.exists():
        print(f"no profile in {path} (see {folder / 'py-spy.log'})")
        return
    own: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    layers: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if not n.isdigit() or "MainThread" not in frames[0]:
            continue
        count = int(n)
        frames = [_frame(f) for f in frames[1:]]
        samples += count
        own[frames[-1]] += count
        for name in set(frames):
            total[name] += count
        layers[_layer(frames)] += count
    samples = max(samples, 1)
    print(f"worker main thread: {samples} samples at 200/s, wall time ({path})")
    print("  by layer (innermost frame):")
    for name, n in layers.most_common():
        print(f"    {n / samples:6.1%}  {name}")
    print("  top by own time:")
    for name, n in own.most_common(top):
        print(f"    {n / samples:6.1%}  {name}")
    print("  top by total time (incl. callees), Flowdesk, RQ, redis, SQLAlchemy, psycopg:")
    wanted = ("webapp", "rq/", "redis/", "sqlalchemy", "psycopg")
    shown = 0
    for name, n in total.most_common():
        if any(w in name for w in wanted) and n / samples < 0.99:
            print(f"    {n / samples:6.1%}  {name}")
            shown += 1
            if shown >= top:
                break


def _layer(frames: list[str]) -> str:
    for frame in reversed(frames):
        for name, marks in _LAYERS:
            if any(mark in frame for mark in marks):
                return name
    return "other Python"


def _frame(frame: str) -> str:
    """'function (path/to/file.py:12)' shortened to the function and the file below
    site-packages or the repository."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for cut in ("site-packages/", str(ROOT) + "/"):
        if cut in where:
            where = where.split(cut, 1)[1]
    return f"{name} ({where})"


def print_statements(b: Bench, count: int, top: int = 25) -> None:
    """The SQL statements of the database by calls per instance (pg_stat_statements)."""
    try:
        with b.spiff_engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT calls, total_exec_time, query FROM pg_stat_statements s "
                    "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() "
                    "ORDER BY calls DESC"
                )
            ).all()
    except Exception as error:  # the extension is not loaded
        print(f"no pg_stat_statements ({str(error).splitlines()[0]})")
        return
    calls = sum(r.calls for r in rows)
    print(f"SQL: {calls / count:.1f} statements per instance ({len(rows)} distinct); top:")
    for row in rows[:top]:
        query = " ".join(row.query.split())[:150]
        print(
            f"  {row.calls / count:5.2f}/inst  {row.total_exec_time / row.calls:6.3f} ms  {query}"
        )


def sql_ms(b: Bench) -> float:
    """Milliseconds the database spent executing this database's statements since the reset."""
    with b.spiff_engine.connect() as conn:
        return float(
            conn.execute(
                text(
                    "SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements s JOIN "
                    "pg_database d ON d.oid = s.dbid WHERE d.datname = current_database()"
                )
            ).scalar_one()
        )


def reset_statements(b: Bench) -> None:
    """Start counting statements afresh (the extension must be in shared_preload_libraries)."""
    with suppress(Exception), b.spiff_engine.begin() as conn:  # without the library: no-op
        conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
    with suppress(Exception), b.spiff_engine.begin() as conn:
        conn.execute(text("SELECT pg_stat_statements_reset()"))


def redis_commands(b: Bench) -> dict[str, int]:
    from webapp.infra.queue import redis_connection

    with b.app.app_context():
        stats = redis_connection(b.app).info("commandstats")
    return {k.removeprefix("cmdstat_"): int(v["calls"]) for k, v in stats.items()}


def run_profile(b: Bench, args: argparse.Namespace) -> None:
    """One leased drain with a worker under py-spy, Redis commands and SQL statements counted."""
    folder = Path(args.profile)
    result = run_flowdesk(b, "leased", args.count, args.workers, profile=folder)
    print(f"\n== profile: leased path, {args.workers} workers, {b.kind}")
    print(_line("Flowdesk leased (profiled)", result))
    jobs = result.extra.get("jobs", 0) * result.done
    print(f"jobs rows: {jobs:.0f} = {jobs / max(result.done, 1):.1f} per instance")
    total = sum(v for k, v in result.commands.items() if k != "info")
    print(
        f"Redis commands during the drain (all processes): {total / max(jobs, 1):.1f} per job, "
        f"{total / max(result.done, 1):.1f} per instance; by command, per job:"
    )
    for name, n in sorted(result.commands.items(), key=lambda kv: -kv[1])[:20]:
        if n and name != "info":
            print(f"  {n / max(jobs, 1):6.2f}  {name}")
    if is_postgres(b.database.url):
        print_statements(b, result.done)
    print_profile(folder)


# --- big tables ---------------------------------------------------------------------------------


def fill_big(b: Bench, instances: int, history: int) -> float:
    """Copy one real finished leased instance (its row, tokens, jobs and history) `instances`
    times with set-based SQL, history rows cycled to `history` in all; seconds taken."""
    from webapp.extensions import db
    from webapp.models import HistoryEntry, Instance, Job, Token

    result = run_flowdesk(b, "leased", 5, 1)
    assert result.done == 5, "the template instance did not complete"
    began = time.monotonic()
    with b.app.app_context():
        template = db.session.scalar(
            select(func.max(Instance.id)).where(Instance.status == "completed")
        )
        conn = db.session.connection()
        conn.execute(text("SET LOCAL synchronous_commit = off"))
        top = conn.execute(text("SELECT max(id) FROM instances")).scalar_one()
        offset = top + 1_000  # ids of the copies: offset + g
        cols = _columns(Instance, skip=("id",))
        conn.execute(
            text(
                f"INSERT INTO instances (id, {cols}) SELECT :offset + g, {_spread(cols)} "
                "FROM instances, generate_series(1, :n) g WHERE instances.id = :t"
            ),
            {"offset": offset, "n": instances, "t": template},
        )
        conn.execute(
            text(
                "SELECT setval(pg_get_serial_sequence('instances', 'id'), "
                "(SELECT max(id) FROM instances))"
            )
        )
        for model in (Token, Job):
            table = model.__tablename__
            cols = _columns(model, skip=("id", "instance_id", "key", "parent_id", "token_id"))
            extra_cols = [c for c in ("key", "token_id") if c in model.__table__.c]
            extra_sel = {"key": "t.key || '-big-' || g", "token_id": "NULL"}
            names = ", ".join(["instance_id", cols, *extra_cols])
            values = ", ".join([":offset + g", _prefixed(cols, "t"), *(extra_sel[c] for c in
                                extra_cols)])  # fmt: skip
            conn.execute(
                text(
                    f"INSERT INTO {table} ({names}) SELECT {values} FROM {table} t, "
                    "generate_series(1, :n) g WHERE t.instance_id = :t"
                ),
                {"offset": offset, "n": instances, "t": template},
            )
        cols = _columns(HistoryEntry, skip=("id", "instance_id"))
        rows = conn.execute(
            text("SELECT count(*) FROM history WHERE instance_id = :t"), {"t": template}
        ).scalar_one()
        per = max(history // instances, 1)
        conn.execute(
            text(
                f"WITH t AS (SELECT row_number() OVER (ORDER BY id) - 1 AS k, {cols} "
                "FROM history WHERE instance_id = :t) "
                f"INSERT INTO history (instance_id, {cols}) "
                f"SELECT :offset + 1 + (g - 1) / :per, {_prefixed(cols, 't')} "
                "FROM generate_series(1, :h) g JOIN t ON t.k = (g - 1) % :per % :rows"
            ),
            {"offset": offset, "t": template, "per": per, "h": history, "rows": rows},
        )
        db.session.commit()
    with create_engine(b.database.url, isolation_level="AUTOCOMMIT").connect() as conn:
        conn.execute(text("VACUUM ANALYZE"))
    return time.monotonic() - began


def _spread(cols: str) -> str:
    """The columns with the copies' times a minute apart, going back from the template's."""
    times = ("created_at", "updated_at", "ended_at")
    return ", ".join(
        f"{c} - g * interval '1 minute'" if c in times else c for c in cols.split(", ")
    )


def _columns(model: Any, skip: tuple[str, ...]) -> str:
    return ", ".join(c.name for c in model.__table__.columns if c.name not in skip)


def _prefixed(cols: str, alias: str) -> str:
    return ", ".join(f"{alias}.{c}" for c in cols.split(", "))


def table_sizes(b: Bench) -> str:
    with b.spiff_engine.connect() as conn:
        rows = conn.execute(
            text(
                "SELECT relname, n_live_tup, pg_total_relation_size(relid) FROM "
                "pg_stat_user_tables WHERE relname IN ('instances','tokens','jobs','history') "
                "ORDER BY relname"
            )
        ).all()
    return ", ".join(f"{r[0]} {r[1]:,} rows {r[2] / 2**20:,.0f} MiB" for r in rows)


def run_big(server: str, workdir: Path, args: argparse.Namespace) -> None:
    if not is_postgres(server):
        raise SystemExit("--big needs a PostgreSQL server (BENCH_DATABASE_URL)")
    with ExitStack() as stack:
        empty = stack.enter_context(bench(server, workdir, "flowdesk_empty"))
        big = stack.enter_context(bench(server, workdir, "flowdesk_big"))
        seconds = fill_big(big, args.big_instances, args.big_history)
        print(f"filled in {seconds:.0f} s: {table_sizes(big)}")
        results: dict[str, list[Result]] = collections.defaultdict(list)
        for round_number in range(args.rounds):
            order = [("empty", empty), ("big", big)]
            if round_number % 2:
                order.reverse()
            for name, b in order:
                reset_statements(b)
                result = run_flowdesk(b, "leased", args.count, args.workers)
                result.extra["SQL ms"] = sql_ms(b) / (result.done + WARM)
                b.stop_workers()
                results[name].append(result)
                print(f"  round {round_number + 1} {name}: {_line(name, result)}", flush=True)
        print(f"\n== big tables (PostgreSQL, leased, {args.workers} workers, medians)")
        for name in ("empty", "big"):
            print(_median_line(f"Flowdesk leased, {name} database", results[name]))
        rate = _median(results["big"], "rate") / _median(results["empty"], "rate")
        cpu = _median(results["big"], "cpu") / _median(results["empty"], "cpu")
        sql = _median(results["big"], "SQL ms") / _median(results["empty"], "SQL ms")
        print(f"big / empty: instances/s {rate:.2f}x, CPU per instance {cpu:.2f}x, "
              f"SQL execution time per instance {sql:.2f}x")  # fmt: skip
        _verdict("step cost with 1M instances / 10M history rows = empty (CPU within 10%)",
                 cpu <= 1.10, f"{cpu:.2f}x")  # fmt: skip


# --- the comparison -----------------------------------------------------------------------------


def _median(results: list[Result], what: str) -> float:
    if what == "rate":
        return statistics.median(r.rate for r in results)
    if what == "cpu":
        return statistics.median(r.cpu_ms() for r in results)
    if what == "engine cpu":
        return statistics.median(r.engine_cpu_ms() for r in results)
    return statistics.median(r.extra.get(what, float("nan")) for r in results)


def _line(name: str, r: Result) -> str:
    groups = [g for g in r.cpu if g not in ("machine", "wall")]
    parts = ", ".join(f"{g} {r.cpu_ms(g):.1f}" for g in groups)
    busy = r.cpu["machine"] / max(r.cpu["wall"], 1e-9)
    ours = sum(r.cpu[g] for g in _groups(r.cpu))
    others = max(0.0, r.cpu["machine"] - ours) / max(r.cpu["wall"], 1e-9)
    extra = "".join(f", {k} {v:.1f}/inst" for k, v in r.extra.items())
    latency = f", p95 {r.p95_ms():.0f} ms" if r.latencies else ""
    return (
        f"{name}: {r.done} in {r.seconds:.1f} s = {r.rate:.1f}/s, CPU all processes "
        f"{r.cpu_ms():.1f} ms/inst ({parts}), engine + db backends {r.engine_cpu_ms():.1f}"
        f"{latency}{extra}; machine {busy:.2f} cores busy, {others:.2f} by others"
    )


def _median_line(name: str, results: list[Result]) -> str:
    rates = ", ".join(f"{r.rate:.1f}" for r in results)
    extras = sorted({k for r in results for k in r.extra})
    extra = "".join(f"  {k} {_median(results, k):.1f}/inst" for k in extras)
    groups = [g for g in results[0].cpu if g not in ("machine", "wall")]
    parts = ", ".join(f"{g} {statistics.median(r.cpu_ms(g) for r in results):.1f}" for g in groups)
    return (
        f"{name:<38} {_median(results, 'rate'):7.1f}/s  all {_median(results, 'cpu'):6.1f} ms/inst "
        f"({parts}), engine + db backends {_median(results, 'engine cpu'):.1f}{extra}"
        f"   [rounds: {rates}]"
    )


def _verdict(target: str, ok: bool, figure: str) -> bool:
    print(f"{'PASS' if ok else 'FAIL'}  {target}: {figure}")
    return ok


@dataclass(frozen=True)
class Variant:
    name: str
    run: Callable[[], Result]
    bench: Bench


def variants(b: Bench, args: argparse.Namespace, sqlite: bool) -> list[Variant]:
    tag = f" ({b.kind})"
    n = args.count
    found = [
        Variant("Spiff sample" + tag, lambda: run_spiff(b, "sample", n, args.spiff_persist), b),
        Variant(
            f"Flowdesk leased, {args.workers} workers" + tag,
            lambda: run_flowdesk(b, "leased", n, args.workers),
            b,
        ),
    ]
    if sqlite:
        return found
    found.append(
        Variant(
            f"Flowdesk pure, {args.workers} workers" + tag,
            lambda: run_flowdesk(b, "pure", n, args.workers),
            b,
        )
    )
    if args.more_workers:
        found.append(
            Variant(
                f"Flowdesk leased, {args.more_workers} workers" + tag,
                lambda: run_flowdesk(b, "leased", n, args.more_workers),
                b,
            )
        )
    if args.tasks_count:
        t = args.tasks_count
        found += [
            Variant("Spiff tasks" + tag, lambda: run_spiff(b, "tasks", t, args.spiff_persist), b),
            Variant(
                f"Flowdesk tasks, {args.workers} workers" + tag,
                lambda: run_flowdesk(b, "tasks", t, args.workers),
                b,
            ),
        ]
    return found


def compare(server: str | None, workdir: Path, args: argparse.Namespace) -> bool | None:
    """The interleaved rounds on PostgreSQL (when given) and SQLite; the verdicts."""
    results: dict[str, list[Result]] = collections.defaultdict(list)
    ok, checked = True, False
    with ExitStack() as stack:
        benches: list[tuple[Bench, bool]] = []
        if is_postgres(server) and not args.sqlite_only:
            pg = stack.enter_context(bench(server, workdir, "flowdesk_vs_spiff"))
            if pg.postmaster is None:
                print("note: the database server's processes are not readable here; "
                      "CPU per instance leaves the database out")  # fmt: skip
            benches.append((pg, False))
        if not args.no_sqlite:
            sqlite = stack.enter_context(bench(None, workdir, "flowdesk_sqlite"))
            benches.append((sqlite, not args.sqlite_only))  # alone: every variant on SQLite
        plan = [v for b, sqlite in benches for v in variants(b, args, sqlite)]
        for round_number in range(args.rounds):
            shift = round_number % len(plan)
            for variant in plan[shift:] + plan[:shift]:  # each round starts elsewhere
                for other, _ in benches:
                    if other is not variant.bench:
                        other.stop_workers()
                result = variant.run()
                results[variant.name].append(result)
                print(f"  round {round_number + 1}: {_line(variant.name, result)}", flush=True)
        latency: Result | None = None
        first = benches[0][0] if benches and not benches[0][1] else None
        leased = f"Flowdesk leased, {args.workers} workers ({first.kind if first else ''})"
        if first is not None and leased in results:
            half = _median(results[leased], "rate") / 2
            latency = run_flowdesk(first, "leased", args.count, args.workers, rate=half)
            print(f"  latency: {_line(f'Flowdesk leased at {half:.1f}/s', latency)}")
        if first is not None and args.profile:  # with --rounds 0, the profile alone
            run_profile(first, args)
    print(f"\n== medians of {args.rounds} interleaved rounds (CPU ms per instance: all processes, "
          "and engine + db backends; see the docstring)")  # fmt: skip
    for name, found in results.items():
        print(_median_line(name, found))
    if latency is not None:
        print(
            f"latency at half the max rate ({latency.rate:.1f}/s offered): p50 "
            f"{statistics.median(latency.latencies) * 1000:.0f} ms, p95 {latency.p95_ms():.0f} ms"
        )
    print()

    def rounds(a: str, b: str, what: str = "rate") -> list[float]:
        """a/b in each round: the two ran minutes apart at most, so a machine that slowed down
        for a while (another tenant, a throttled CPU) shifts both, not the ratio."""
        if a not in results or b not in results:
            return []
        pairs = zip(results[a], results[b], strict=False)
        return [_median([x], what) / _median([y], what) for x, y in pairs]

    def ratio(a: str, b: str, what: str = "rate") -> float | None:
        found = rounds(a, b, what)
        return statistics.median(found) if found else None

    w = args.workers
    pg_spiff = "Spiff sample (PostgreSQL)"
    pg_leased = f"Flowdesk leased, {w} workers (PostgreSQL)"
    checks = [
        ("leased >= 3x Spiff (PostgreSQL)", pg_leased, pg_spiff, "rate", lambda x: x >= 3.0),
        ("leased CPU/instance <= 0.7x Spiff, all processes (PostgreSQL)", pg_leased, pg_spiff,
         "cpu", lambda x: x <= 0.7),
        ("leased CPU/instance <= 0.7x Spiff, engine + db backends (PostgreSQL)", pg_leased,
         pg_spiff, "engine cpu", lambda x: x <= 0.7),
        ("pure >= 4x Spiff (PostgreSQL)", f"Flowdesk pure, {w} workers (PostgreSQL)", pg_spiff,
         "rate", lambda x: x >= 4.0),
        ("SQLite leased >= 1.5x Spiff-on-SQLite", f"Flowdesk leased, {w} workers (SQLite)",
         "Spiff sample (SQLite)", "rate", lambda x: x >= 1.5),
        (f"{args.more_workers} workers not slower than {w} (leased, within 5% noise)",
         f"Flowdesk leased, {args.more_workers} workers (PostgreSQL)",
         f"Flowdesk leased, {w} workers (PostgreSQL)", "rate", lambda x: x >= 0.95),
    ]  # fmt: skip
    for target, a, b, what, passes in checks:
        value = ratio(a, b, what)
        if value is not None:
            each = ", ".join(f"{x:.2f}" for x in rounds(a, b, what))
            ok &= _verdict(target, passes(value), f"{value:.2f}x   [rounds: {each}]")
            checked = True
    tasks = ratio(f"Flowdesk tasks, {w} workers (PostgreSQL)", "Spiff tasks (PostgreSQL)")
    if tasks is not None:
        pair = (f"Flowdesk tasks, {w} workers (PostgreSQL)", "Spiff tasks (PostgreSQL)")
        cpu, engine = ratio(*pair, "cpu"), ratio(*pair, "engine cpu")
        print(f"info  user task + timer process vs Spiff: {tasks:.2f}x rate, {cpu:.2f}x CPU "
              f"(all processes), {engine:.2f}x (engine + db backends)")  # fmt: skip
    if latency is not None:
        ok &= _verdict("p95 start-to-complete < 250 ms at half the max rate (leased)",
                       latency.p95_ms() < 250, f"{latency.p95_ms():.0f} ms")  # fmt: skip
        checked = True
    return ok if checked else None


def main() -> None:
    global WARM
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=600, help="instances of the sample a run")
    parser.add_argument(
        "--tasks-count", type=int, default=200, help="of the tasks process (0: skip)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--warm", type=int, default=WARM, help="warm-up instances a run")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--more-workers", type=int, default=4, help="scaling check (0: skip)")
    parser.add_argument(
        "--spiff-persist",
        choices=("task", "bpmn"),
        default="task",
        help="save after every Spiff task, or only after BPMN elements' tasks",
    )
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--profile", metavar="DIR", help="also profile one leased drain")
    parser.add_argument("--save-bpmn", metavar="DIR", help="write the BPMN files both engines run")
    parser.add_argument("--big", action="store_true", help="big-table check instead")
    parser.add_argument("--big-instances", type=int, default=1_000_000)
    parser.add_argument("--big-history", type=int, default=10_000_000)
    args = parser.parse_args()
    WARM = args.warm
    if args.save_bpmn:
        folder = Path(args.save_bpmn)
        folder.mkdir(parents=True, exist_ok=True)
        for name, doc in (("sample", sample(LEASED)), ("tasks", tasks_document())):
            (folder / f"{name}.bpmn").write_bytes(bpmn(doc))
    server = os.environ.get("BENCH_DATABASE_URL") or os.environ.get("DATABASE_URL")
    cores = os.cpu_count() or 1
    shown = make_url(server).render_as_string() if is_postgres(server) else "none"
    with open("/proc/loadavg") as load:
        print(f"cpus: {cores}   load average: {load.read().split()[:3]}   server: {shown}")
    with tempfile.TemporaryDirectory(prefix="flowdesk-vs-spiff-") as tmp:
        if args.big:
            run_big(str(server), Path(tmp), args)
            return
        ok = compare(server, Path(tmp), args)
    if ok is not None:
        print("all targets met" if ok else "some targets not met")


if __name__ == "__main__":
    main()
