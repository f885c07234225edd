"""Benchmark: the inbox and home page over 100,000 open tasks, through gunicorn on PostgreSQL.

Run as ``DATABASE_URL=postgresql://postgres@127.0.0.1:PORT/postgres .venv/bin/python
benchmarks/inbox_scale.py [runs]`` (a PostgreSQL with fsync on, as in versus_spiff.py). It creates a
scratch database there, bulk-loads with COPY 1,000 users holding 2 of 20 roles each in one of 2
partitions, 100,000 open tasks (30% assigned to a user, 55% offered to a role, 5% open to a whole
partition, 10% offered through extra candidate roles and users) and 50,000 completed ones, then
starts gunicorn (2 workers) and times real HTTP requests, signed in as several users in turn: the
inbox tabs, its filters and sort orders, a later page, the htmx list fragment, the count badge and
the home page. Target: p95 < 100 ms for every page. Prints the machine's load average, since
other work on the machine moves the figures, and per page the cores other work kept busy while
it was measured.

For each page it also prints the CPU that gunicorn and the database spent per request and, with
pg_stat_statements loaded (`shared_preload_libraries=pg_stat_statements`, as the versus_spiff.py
docstring starts the server), the SQL statements per request (besides each request's BEGIN and
ROLLBACK or COMMIT), and the same for completing a task from the inbox on a quiet machine before
the 4 workers start. `--profile DIR` records the gunicorn workers with py-spy (`.venv/bin/pip
install py-spy`; not a dependency) while the pages are measured and prints where they spent their
time; `--pages-only` skips completing tasks.
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import psutil
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._flowdesk import cpu_seconds, machine_busy, start_workers, stop_workers
from tests.helpers.documents import chain, node, sample_document
from tests.helpers.scratch import scratch_database

ROOT = Path(__file__).resolve().parents[1]
USERS, ROLES, PARTITIONS = 1_000, 20, 2
OPEN, DONE = 100_000, 50_000
PASSWORD = "benchmark-password"
SECRET = "benchmark-secret-key-that-is-long-enough-for-checks"
NOW = datetime.now(UTC).replace(microsecond=0)
KEYS = [("invoice", 0), ("leave", 1), ("order", None)]


def _document() -> dict:
    """start -> one user task offered to role r00 -> end."""
    return chain(("work", node("userTask", "Work", assignee={"type": "role", "value": "r00"})))


def _copy(cursor, table: str, columns: str, rows) -> None:
    with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def seed(app) -> None:
    """Roles, partitions and processes through the services; users and the runtime rows by COPY."""
    from werkzeug.security import generate_password_hash

    from webapp.extensions import db
    from webapp.services import accounts, processes

    rng = random.Random(7)
    with app.app_context():
        made = [accounts.ensure_partition(f"p{i}", f"Partition {i}") for i in range(PARTITIONS)]
        made_roles = [accounts.ensure_role(f"r{i:02d}", ["tasks.work"]) for i in range(ROLES)]
        db.session.flush()
        partitions = [partition.id for partition in made]
        roles = [role.id for role in made_roles]
        versions = []
        for key, part in KEYS:
            process = processes.create_process(
                key,
                key.title(),
                partition_id=None if part is None else partitions[part],
                actor=None,
                document=_document(),
            )
            versions.append(processes.publish(process, actor=None).id)
        db.session.commit()
        secret = generate_password_hash(PASSWORD, method="pbkdf2:sha256:1000")
        raw = db.engine.raw_connection()
        try:
            cursor = raw.cursor()
            first = 1_000_000
            users = [first + n for n in range(USERS)]
            _copy(cursor, "users", "id, username, display_name, email, password_hash, active, "
                  "created_at", ((uid, f"u{n:04d}", f"User {n}", "", secret, True, NOW)
                                 for n, uid in enumerate(users)))  # fmt: skip
            held = [(uid, roles[(n + k) % ROLES]) for n, uid in enumerate(users) for k in (0, 7)]
            _copy(cursor, "user_roles", "user_id, role_id", held)
            _copy(cursor, "user_partitions", "user_id, partition_id",
                  ((uid, partitions[n % PARTITIONS]) for n, uid in enumerate(users)))  # fmt: skip
            total = OPEN + DONE
            instances, tokens, tasks, candidates = [], [], [], []
            for n in range(total):
                ident = n + 1
                key, part = KEYS[n % 3]
                partition = None if part is None else partitions[part]
                done = n >= OPEN
                created = NOW - timedelta(minutes=total - n)
                instances.append(
                    (ident, versions[n % 3], key, 1, partition, "completed" if done else "running",
                     "{}", "{}", "{}", f"{key[:3].upper()}-{n:06d}", "api", created, created)
                )  # fmt: skip
                tokens.append(
                    (ident, ident, "work", "done" if done else "waiting", 2, created, created)
                )
                share = rng.random()
                assignee = users[rng.randrange(USERS)] if done or share < 0.30 else None
                role = roles[rng.randrange(ROLES)] if 0.30 <= share < 0.85 else None
                everyone = 0.85 <= share < 0.90
                if share >= 0.90 and not done:
                    candidates.append((ident, roles[rng.randrange(ROLES)], None))
                    candidates.append((ident, None, users[rng.randrange(USERS)]))
                due = rng.choice([None, -30, -3, 2, 30, 100, 24 * 5, 24 * 20])
                spread = rng.random() * 600
                title = f"{rng.choice(['Review', 'Approve', 'Check'])} {key} {n}"
                tasks.append(
                    (ident, ident, ident, "work", title, partition, assignee, role, everyone,
                     "completed" if done else "open",
                     None if due is None else NOW + timedelta(hours=due, minutes=spread),
                     assignee if done else None,
                     NOW - timedelta(minutes=n) if done else None, created)
                )  # fmt: skip
            _copy(cursor, "instances", "id, version_id, process_key, version, partition_id, "
                  "status, input, vars, nodes, business_key, started_via, created_at, updated_at",
                  instances)  # fmt: skip
            _copy(cursor, "tokens", "id, instance_id, node_id, status, step, created_at, "
                  "updated_at", tokens)  # fmt: skip
            _copy(cursor, "tasks", "id, instance_id, token_id, node_id, title, partition_id, "
                  "assignee_id, candidate_role_id, open_to_partition, status, due_at, "
                  "completed_by_id, completed_at, created_at", tasks)  # fmt: skip
            _copy(cursor, "task_candidates", "task_id, role_id, user_id", candidates)
            for table in ("users", "instances", "tokens", "tasks"):
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
            raw.commit()
            cursor.execute("ANALYZE")
            raw.commit()
        finally:
            raw.close()


class Client:
    """One keep-alive HTTP connection with a session cookie."""

    def __init__(self, port: int) -> None:
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: dict | None = None, headers=None):
        sent = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        sent.update(headers or {})
        data = None
        if body is not None:
            data = urlencode(body)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        self.connection.request(method, path, body=data, headers=sent)
        response = self.connection.getresponse()
        text = response.read().decode()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                pair = value.split(";", 1)[0]
                key, _, val = pair.partition("=")
                self.cookies[key] = val
        return response.status, text

    def sign_in(self, username: str) -> None:
        _, page = self.request("GET", "/login")
        token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
        status, _ = self.request(
            "POST", "/login", {"username": username, "password": PASSWORD, "csrf_token": token}
        )
        assert status in (302, 303), f"sign-in of {username} failed: {status}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(url: str, workdir: Path, extra: dict, workers: int = 2) -> tuple[subprocess.Popen, int]:
    """gunicorn serving the app on the scratch database; returns when it answers."""
    port = _free_port()
    settings = {"INSTANCE_PATH": str(workdir), "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000"}
    env = {**os.environ, "DATABASE_URL": url, "SECRET_KEY": SECRET,
           "FLOWDESK_ENV": "development", "LOG_LEVEL": "WARNING", **extra}  # fmt: skip
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "-w", str(workers), "-b", f"127.0.0.1:{port}",
         "--log-level", "warning", f"webapp:create_app({json.dumps(settings)})"],
        cwd=ROOT, env=env,
    )  # fmt: skip
    for _ in range(300):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server, port
        except OSError:
            time.sleep(0.1)
    server.terminate()
    raise SystemExit("gunicorn did not start")


def percentiles(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, round(0.95 * len(times)) - 1)]


PAGES = {
    "inbox: assigned to me": "/inbox/",
    "inbox: open for my roles": "/inbox/?tab=claimable",
    "inbox: open for my roles, page 40": "/inbox/?tab=claimable&page=40",
    "inbox: completed by me": "/inbox/?tab=done",
    "inbox: claimable, overdue": "/inbox/?tab=claimable&due=overdue",
    "inbox: claimable, due this week": "/inbox/?tab=claimable&due=week",
    "inbox: claimable, no due date": "/inbox/?tab=claimable&due=none",
    "inbox: claimable, newest first": "/inbox/?tab=claimable&sort=created",
    "inbox: claimable, process": "/inbox/?tab=claimable&process=order",
    "inbox: claimable, search 'approve'": "/inbox/?tab=claimable&q=approve",
    "inbox: claimable, search business key": "/inbox/?tab=claimable&q=ORD-0999",
    "inbox: htmx list fragment": "/inbox/?tab=claimable&process=invoice",
    "count badge": "/inbox/count",
    "home page counts": "/",
}


def serving_pids(server: subprocess.Popen, url: str) -> list[int]:
    """gunicorn's processes and the database's server processes for its connections."""
    engine = create_engine(url)
    with engine.connect() as conn:
        backends = conn.execute(
            text("SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                 "AND pid <> pg_backend_pid()")
        ).scalars().all()  # fmt: skip
    engine.dispose()
    return [server.pid, *(child.pid for child in psutil.Process(server.pid).children()), *backends]


def cpu_ms(pids: list[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids) * 1000


TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK")


class Statements:
    """SQL statements the scratch database ran, from pg_stat_statements (None without it)."""

    def __init__(self, url: str) -> None:
        self.engine = create_engine(url, isolation_level="AUTOCOMMIT")
        try:
            with self.engine.connect() as conn:
                conn.execute(text("CREATE EXTENSION IF NOT EXISTS pg_stat_statements"))
                conn.execute(text("SELECT pg_stat_statements_reset()"))
            self.available = True
        except Exception as error:  # the library is not preloaded
            print(f"no statement counts: {str(error).splitlines()[0]}")
            self.available = False

    def reset(self) -> None:
        if self.available:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT pg_stat_statements_reset()"))

    def count(self) -> int | None:
        """Statements but transaction control since the last reset, this database only."""
        if not self.available:
            return None
        with self.engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT s.calls, s.query FROM pg_stat_statements s JOIN pg_database d "
                    "ON d.oid = s.dbid WHERE d.datname = current_database()"
                )
            ).all()
        return sum(
            calls
            for calls, query in rows
            if not query.lstrip().upper().startswith(TRANSACTION)
            and "pg_stat_statements" not in query
        )

    def per(self, requests: int) -> str:
        found = self.count()
        return "n/a" if found is None else f"{found / requests:.1f}"


def measure(
    port: int, runs: int, usernames: list[str], pids_of=None, counter: Statements | None = None
) -> None:
    """Median and p95 per page, the CPU the server and database spent per request (which other
    work on the machine does not inflate, unlike the wall-clock times), the SQL statements per
    request, and the cores other work kept busy meanwhile."""
    clients = []
    for name in usernames:
        client = Client(port)
        client.sign_in(name)
        clients.append(client)
    print(f"{'page':42} {'median ms':>10} {'p95 ms':>8} {'cpu ms':>7} {'stmts':>6} {'busy':>5}")
    worst = 0.0
    for label, path in PAGES.items():
        headers = {"HX-Request": "true", "HX-Target": "task-list"} if "htmx" in label else {}
        for client in clients:
            status, _ = client.request("GET", path, headers=headers)
            assert status == 200, (path, status)
        times = []
        pids = pids_of() if pids_of else []
        if counter is not None:
            counter.reset()
        used, machine, began_all = cpu_ms(pids), machine_busy(), time.perf_counter()
        mine = cpu_seconds(os.getpid())
        for run in range(runs):
            client = clients[run % len(clients)]
            began = time.perf_counter()
            status, _ = client.request("GET", path, headers=headers)
            times.append((time.perf_counter() - began) * 1000)
            assert status == 200, (path, status)
        spent = cpu_ms(pids) - used
        others = machine_busy() - machine - spent / 1000 - (cpu_seconds(os.getpid()) - mine)
        busy = max(0.0, others / (time.perf_counter() - began_all))
        stmts = counter.per(runs) if counter is not None else "n/a"
        median, p95 = percentiles(times)
        worst = max(worst, p95)
        print(f"{label:42} {median:10.1f} {p95:8.1f} {spent / runs:7.1f} {stmts:>6} {busy:5.1f}")
    print(f"worst p95 {worst:.1f} ms (target < 100 ms); busy: cores used by other work")


def sample_version(app) -> int:
    """Publish the sample process the busy workers run; its version id."""
    from webapp.extensions import db
    from webapp.services import processes

    with app.app_context():
        process = processes.create_process(
            "sample", "Sample", partition_id=None, actor=None, document=sample_document()
        )
        db.session.flush()
        version_id = processes.publish(process, actor=None).id
        db.session.commit()
    return version_id


def keep_busy(app, version_id: int, rate: float, stop: threading.Event) -> None:
    """Start sample instances (tools, gateway, parallel split) at `rate` per second for the
    workers to run until `stop` is set."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import ProcessVersion
    from webapp.services.jobs import commit

    with app.app_context():
        version = db.session.get(ProcessVersion, version_id)
        db.session.expunge(version)
        began, index = time.monotonic(), 0
        while not stop.is_set():
            pause = began + index / rate - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            commit(steps.start_instance(db.session, version, input={"amount": 500}))
            index += 1


def completion_statements(port: int, usernames: list[str], counter: Statements) -> None:
    """SQL statements per completion from the inbox, counted on a quiet machine (no workers)."""
    work = []
    for name in usernames:
        client = Client(port)
        client.sign_in(name)
        page = client.request("GET", "/inbox/?sort=created")[1]
        token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
        ids = re.findall(r'href="/inbox/tasks/(\d+)"', page)
        work += [(client, token, task_id) for task_id in ids]
    counter.reset()
    for client, token, task_id in work:
        status, _ = client.request("POST", f"/inbox/tasks/{task_id}", {"csrf_token": token})
        assert status == 303, (task_id, status)
    print(f"{'complete a task: statements per completion':42} {counter.per(len(work)):>6}")


def measure_completion(port: int, runs: int, usernames: list[str]) -> None:
    """Complete tasks from the inbox as the users would (POST the task's form), timed."""
    queues = []
    for name in usernames:
        client = Client(port)
        client.sign_in(name)
        page = client.request("GET", "/inbox/?sort=created")[1]
        token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
        ids = re.findall(r'href="/inbox/tasks/(\d+)"', page)
        queues.append([(client, token, task_id) for task_id in ids])
    work = [item for row in zip(*queues, strict=False) for item in row][:runs]
    times = []
    for client, token, task_id in work:
        began = time.perf_counter()
        status, _ = client.request("POST", f"/inbox/tasks/{task_id}", {"csrf_token": token})
        times.append((time.perf_counter() - began) * 1000)
        assert status == 303, (task_id, status)
    median, p95 = percentiles(times)
    label = f"complete a task, 4 workers busy ({len(times)}x)"
    print(f"{label:42} {median:10.1f} {p95:8.1f}")
    print(f"p95 {p95:.1f} ms (target < 150 ms)")


# --- profile ------------------------------------------------------------------------------------

#: Where a gunicorn worker is, by the innermost frame of each sample that matches.
LAYERS = (
    ("waiting on PostgreSQL", ("Connection.wait", "wait (psycopg")),
    ("waiting for a request", ("select (selectors", "accept", "wait (gunicorn", "sleep (gunicorn")),
    ("psycopg (Python)", ("psycopg",)),
    ("SQLAlchemy", ("sqlalchemy/",)),
    ("Jinja templates", ("jinja2/", "templates/")),
    ("Flask, Werkzeug, WTForms", ("flask", "werkzeug/", "wtforms/")),
    ("Flowdesk", ("webapp/",)),
)


def spy(pids: list[int], folder: Path) -> list[subprocess.Popen]:
    """py-spy recording each gunicorn worker (raw collapsed stacks, idle included)."""
    exe = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if exe is None:
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "py-spy.log", "w")  # noqa: SIM115 - open while py-spy runs
    spies = []
    for pid in pids:
        out = folder / f"worker-{pid}.collapsed"
        command = [exe, "record", "--pid", str(pid), "--idle", "--format", "raw", "--rate", "250"]
        spies.append(subprocess.Popen([*command, "-o", str(out)], stdout=log, stderr=log))
    return spies


def print_profile(folder: Path, top: int = 20) -> None:
    """The workers' samples while serving (waiting for a request left out): by layer, and the
    top functions by own time."""
    own: collections.Counter[str] = collections.Counter()
    layers: collections.Counter[str] = collections.Counter()
    for path in folder.glob("worker-*.collapsed"):
        for line in path.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            if not n.isdigit():
                continue
            frames = stack.split(";")
            layer = next(
                (name for frame in reversed(frames) for name, marks in LAYERS
                 if any(mark in frame for mark in marks)),
                "other Python",
            )  # fmt: skip
            if layer == "waiting for a request":
                continue
            layers[layer] += int(n)
            own[frames[-1].split(" (")[0] + " (" + _where(frames[-1]) + ")"] += int(n)
    total = max(1, sum(layers.values()))
    print(f"gunicorn workers while serving: {total} samples at 250/s ({folder})")
    for name, n in layers.most_common():
        print(f"  {n / total:6.1%}  {name}")
    print("  top by own time:")
    for name, n in own.most_common(top):
        print(f"  {n / total:6.1%}  {name}")


def _where(frame: str) -> str:
    where = frame.partition(" (")[2].rstrip(")").rsplit(":", 1)[0]
    for cut in ("site-packages/", str(ROOT) + "/"):
        if cut in where:
            where = where.split(cut, 1)[1]
    return where


def main(runs: int = 60, profile: Path | None = None, pages_only: bool = False) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql")):
        print("skipped: set DATABASE_URL to a PostgreSQL server (see the docstring)")
        return
    from flask_migrate import upgrade

    from webapp import create_app

    with (
        tempfile.TemporaryDirectory() as tmp,
        scratch_database(url, Path(tmp), "flowdesk_inbox_scale") as scratch,
    ):
        workdir = Path(tmp)
        app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": scratch,
                          "SECRET_KEY": SECRET, "INSTANCE_PATH": str(workdir)})  # fmt: skip
        with app.app_context():
            upgrade()
        began = time.perf_counter()
        seed(app)
        with app.app_context():
            from webapp.extensions import db

            db.engine.dispose()
        print(
            f"PostgreSQL: {OPEN:,} open + {DONE:,} completed tasks, {USERS:,} users, "
            f"{ROLES} roles, loaded in {time.perf_counter() - began:.1f} s; "
            f"{runs} requests per page over 4 users, load average {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} cores"
        )
        from webapp.infra.redis_server import EmbeddedRedis

        redis = EmbeddedRedis(workdir / "redis")
        redis.ensure_running()
        extra = {"REDIS_URL": redis.url, "RQ_QUEUE": "flowdesk-inbox-scale"}
        server, port = serve(scratch, workdir, extra)
        stop = threading.Event()
        workers: list[subprocess.Popen] = []
        spies: list[subprocess.Popen] = []
        counter = Statements(scratch)
        try:
            if profile is not None:
                time.sleep(1)  # gunicorn's workers are up
                spies = spy([c.pid for c in psutil.Process(server.pid).children()], profile)
            measure(
                port,
                runs,
                ["u0001", "u0002", "u0503", "u0777"],
                lambda: serving_pids(server, scratch),
                counter,
            )
            for one in spies:
                one.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                one.wait(timeout=60)
            if profile is not None:
                print_profile(profile)
            if pages_only:
                return
            if counter.available:
                completion_statements(port, ["u0100", "u0101", "u0102"], counter)
            env = {**os.environ, "DATABASE_URL": scratch, "SECRET_KEY": SECRET,
                   "FLOWDESK_ENV": "development", **extra}  # fmt: skip
            workers = start_workers(4, env, workdir)
            busy = create_app({"SQLALCHEMY_DATABASE_URI": scratch, "SECRET_KEY": SECRET,
                               "INSTANCE_PATH": str(workdir), **extra})  # fmt: skip
            feeder = threading.Thread(
                target=keep_busy, args=(busy, sample_version(busy), 20.0, stop), daemon=True
            )
            feeder.start()
            time.sleep(5)
            measure_completion(port, min(runs, 40), ["u0001", "u0002", "u0503", "u0777"])
        finally:
            stop.set()
            stop_workers(workers)
            server.terminate()
            server.wait(timeout=30)
            redis.stop()
        print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("runs", nargs="?", type=int, default=60, help="requests per page")
    parser.add_argument("--profile", metavar="DIR", help="record the gunicorn workers (py-spy)")
    parser.add_argument("--pages-only", action="store_true", help="skip completing tasks")
    args = parser.parse_args()
    main(args.runs, Path(args.profile) if args.profile else None, args.pages_only)
