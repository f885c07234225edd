"""Benchmark: API start requests per second with a bearer token against HTTP Basic.

Run as ``DATABASE_URL=postgresql://postgres@127.0.0.1:PORT/postgres .venv/bin/python
benchmarks/api_tokens.py [--seconds 15] [--clients 4]``. It creates a scratch database there,
publishes a process that waits at a user task after its start, makes a user with a password
(hashed with the production default, scrypt) and a token for it, starts gunicorn (2 workers)
and, from `--clients` threads, sends `POST /api/instances` for `--seconds` with each kind of
credential in turn, printing requests per second, median and p95 latency and the CPU gunicorn
spent per request. Without DATABASE_URL it runs on a SQLite file (figures not comparable).
"""

from __future__ import annotations

import argparse
import base64
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._flowdesk import SECRET, Database, bench_app, cpu_seconds  # noqa: E402
from tests.helpers.documents import chain, node  # noqa: E402
from tests.helpers.scratch import scratch_database  # noqa: E402

PASSWORD = "benchmark-password"


def seed(app) -> str:
    """The process, the user `caller` and its token (returned) with the `start` scope."""
    from flask_migrate import upgrade

    from tests.helpers.app import make_user
    from tests.helpers.processes import publish_document
    from webapp.services import api_tokens

    with app.app_context():
        upgrade()
        wait = ("work", node("userTask", "Work", assignee={"type": "user", "value": "caller"}))
        publish_document(chain(wait), key="bench")
        user = make_user("caller", ["instances.start"], password=PASSWORD)
        _, token = api_tokens.create_token(user, "bench", ["start"], 0, created_by=user)
        return token


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(url: str, redis_url: str, workdir: Path) -> tuple[subprocess.Popen, int]:
    """gunicorn with 2 workers on the scratch database; returns when it answers."""
    port = free_port()
    settings = {"INSTANCE_PATH": str(workdir)}
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": redis_url, "SECRET_KEY": SECRET,
           "FLOWDESK_ENV": "development", "LOG_LEVEL": "WARNING"}  # fmt: skip
    server = subprocess.Popen(
        [str(ROOT / ".venv/bin/gunicorn"), "-w", "2", "-b", f"127.0.0.1:{port}",
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


def hammer(port: int, headers: dict[str, str], seconds: float, clients: int) -> list[float]:
    """POST /api/instances from `clients` threads for `seconds`; the latency of each request."""
    body = json.dumps({"process_key": "bench"})
    times: list[float] = []
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds

    def run() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine = []
        while time.perf_counter() < stop_at:
            began = time.perf_counter()
            conn.request("POST", "/api/instances", body=body,
                         headers={"Content-Type": "application/json", **headers})  # fmt: skip
            response = conn.getresponse()
            response.read()
            if response.status != 201:
                raise SystemExit(f"start answered {response.status}")
            mine.append(time.perf_counter() - began)
        conn.close()
        with lock:
            times.extend(mine)

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return times


def gunicorn_cpu(server: subprocess.Popen) -> float:
    pids = [server.pid, *(child.pid for child in psutil.Process(server.pid).children())]
    return sum(cpu_seconds(pid) for pid in pids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as folder,
        scratch_database(os.environ.get("DATABASE_URL"), Path(folder), "bench_tokens") as url,
    ):
        workdir = Path(folder)
        app, embedded = bench_app(Database(url), workdir)
        token = seed(app)
        redis_url = app.config["REDIS_URL"]
        server, port = serve(url, redis_url, workdir)
        try:
            basic = base64.b64encode(f"caller:{PASSWORD}".encode()).decode()
            kinds = {
                "bearer token": {"Authorization": f"Bearer {token}"},
                "HTTP Basic (scrypt)": {"Authorization": f"Basic {basic}"},
            }
            hammer(port, kinds["bearer token"], 2, args.clients)  # warm both workers up
            print(f"{Database(url).kind}, gunicorn 2 workers, {args.clients} clients, "
                  f"{args.seconds:.0f} s each, load average {os.getloadavg()[0]:.2f}")  # fmt: skip
            print(f"{'credential':22} {'req/s':>8} {'median ms':>10} {'p95 ms':>8} {'cpu ms':>7}")
            for label, headers in kinds.items():
                cpu = gunicorn_cpu(server)
                began = time.perf_counter()
                times = hammer(port, headers, args.seconds, args.clients)
                elapsed = time.perf_counter() - began
                spent = (gunicorn_cpu(server) - cpu) * 1000 / len(times)
                ordered = sorted(times)
                p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)) - 1)]
                print(f"{label:22} {len(times) / elapsed:8.1f} "
                      f"{statistics.median(times) * 1000:10.1f} {p95 * 1000:8.1f} "
                      f"{spent:7.1f}")  # fmt: skip
        finally:
            server.terminate()
            server.wait(timeout=30)
            with app.app_context():
                from webapp.extensions import db

                db.engine.dispose()
            if embedded is not None:
                embedded.stop()


if __name__ == "__main__":
    main()
