"""Benchmark: operations pages over 100,000 instances and 1,000,000 history rows.

Run as ``.venv/bin/python benchmarks/operations_pages.py [runs]``. It builds a throw-away database
(an SQLite file, or a new PostgreSQL database on the server of DATABASE_URL), bulk-loads the rows
(executemany on SQLite, COPY on PostgreSQL), then times pages through the Flask test client,
signed in as the demo operator (partition-scoped like a real operator): the instance list under
each single filter, a second list page, and an instance detail with 10,000 history entries.
Targets: a list page < 150 ms, the detail page < 200 ms.
"""

from __future__ import annotations

import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select, text

from tests.helpers.scratch import scratch_database

INSTANCES = 100_000
HISTORY = 1_000_000
BIG_HISTORY = 10_000
NOW = datetime.now(UTC).replace(microsecond=0)
STATUSES = ["completed"] * 70 + ["running"] * 20 + ["failed"] * 8 + ["cancelled"] * 2
COUNTRIES = ["NL", "DE", "FR", "BE", "PL", "SE"]
KINDS = ["entered", "left", "tool_attempt", "entered", "left", "timer", "message"]


def _document(key: str) -> dict[str, Any]:
    node = {"kind": "userTask", "title": "Review",
            "config": {"assignee": {"type": "user", "value": "alice"}}}  # fmt: skip
    nodes = {
        "start": {"kind": "startEvent", "title": "Start", "config": {}},
        "review": node,
        "end": {"kind": "endEvent", "title": "End", "config": {}},
    }
    for index, spec in enumerate(nodes.values()):
        spec["position"] = {"x": 100 + 160 * index, "y": 100}
    flows = {
        "f1": {"source": "start", "target": "review", "condition": None, "default": False},
        "f2": {"source": "review", "target": "end", "condition": None, "default": False},
    }
    return {"format_version": 1, "key": key, "name": key, "nodes": nodes, "flows": flows}


def _stamp(moment: datetime, sqlite: bool) -> str:
    if sqlite:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return moment.isoformat()


def _rows(versions: list[tuple[int, str, int, int | None]], users: list[int], sqlite: bool):
    """Instances, their live tokens, and the id of the instance that gets 10,000 history rows."""
    rng = random.Random(7)
    instances, tokens = [], []
    for number in range(1, INSTANCES + 1):
        version_id, key, version, partition_id = versions[number % len(versions)]
        status = rng.choice(STATUSES)
        created = NOW - timedelta(seconds=rng.randint(0, 90 * 86400))
        updated = created + timedelta(minutes=rng.randint(0, 600))
        ended = updated if status in ("completed", "cancelled") else None
        error = None
        if status == "failed":
            code = rng.choice(["http_500", "timeout"])
            error = {"node": "review", "code": code, "message": f"{code} from the API",
                     "at": updated.isoformat()}  # fmt: skip
        variables = {"amount": rng.randint(0, 5000), "country": rng.choice(COUNTRIES)}
        instances.append(
            (number, version_id, key, version, partition_id, status, "{}",
             json.dumps(variables), "{}", f"BK-{number:06d}", "api", rng.choice(users),
             json.dumps(error) if error else None, _stamp(created, sqlite),
             _stamp(updated, sqlite), _stamp(ended, sqlite) if ended else None)
        )  # fmt: skip
        if status in ("running", "failed"):
            token_status = "waiting" if status == "running" else "failed"
            tokens.append(
                (number, "review", "f1", token_status, 2, _stamp(updated, sqlite),
                 _stamp(updated, sqlite))
            )  # fmt: skip
    big = next(row[0] for row in instances if row[5] == "running")
    return instances, tokens, big


def _history(big: int, sqlite: bool) -> Iterator[tuple]:
    rng = random.Random(11)
    start = NOW - timedelta(days=30)
    for index in range(HISTORY):
        instance_id = big if index < BIG_HISTORY else rng.randint(1, INSTANCES)
        kind = KINDS[index % len(KINDS)]
        node = ("start", "review", "end")[index % 3]
        details = {"flow": "f1"} if kind == "entered" else {"attempt": 1, "status": "ok"}
        moment = start + timedelta(seconds=index)
        yield (instance_id, None, node, kind, None, json.dumps(details), _stamp(moment, sqlite))


INSTANCE_COLUMNS = ("id, version_id, process_key, version, partition_id, status, input, vars, "
                    "nodes, business_key, started_via, started_by_id, error, created_at, "
                    "updated_at, ended_at")  # fmt: skip
TOKEN_COLUMNS = "instance_id, node_id, arrived_via, status, step, created_at, updated_at"
HISTORY_COLUMNS = "instance_id, token_id, node_id, kind, actor, details, created_at"


def load(engine, versions, users) -> int:
    sqlite = engine.dialect.name == "sqlite"
    instances, tokens, big = _rows(versions, users, sqlite)
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        if sqlite:
            cursor.execute("BEGIN")
            cursor.executemany(
                f"INSERT INTO instances ({INSTANCE_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                instances,
            )
            cursor.executemany(
                f"INSERT INTO tokens ({TOKEN_COLUMNS}) VALUES (?,?,?,?,?,?,?)", tokens
            )
            cursor.executemany(
                f"INSERT INTO history ({HISTORY_COLUMNS}) VALUES (?,?,?,?,?,?,?)",
                _history(big, True),
            )
            cursor.execute("COMMIT")
            cursor.execute("ANALYZE")
        else:
            for table, columns, rows in (
                ("instances", INSTANCE_COLUMNS, instances),
                ("tokens", TOKEN_COLUMNS, tokens),
                ("history", HISTORY_COLUMNS, _history(big, False)),
            ):
                with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence('instances', 'id'), "
                "(SELECT max(id) FROM instances))"
            )
            raw.commit()
            cursor.execute("ANALYZE")
            raw.commit()
    finally:
        raw.close()
    return big


ROW = re.compile(r'data-kind="|href="/operations/instances/\d+"')


def timed(client, path: str, runs: int) -> tuple[float, float, int]:
    """Median and 95th percentile in ms over `runs` requests (after 3 warm-ups), and the rows."""
    for _ in range(3):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
    return statistics.median(times), p95, len(ROW.findall(response.get_data(as_text=True)))


def main(runs: int = 30) -> None:
    from flask_migrate import upgrade

    from webapp import create_app
    from webapp.cli.demo import seed_demo
    from webapp.extensions import db
    from webapp.models import Partition, User
    from webapp.services import processes

    with (
        tempfile.TemporaryDirectory() as instance_path,
        scratch_database(
            os.environ.get("DATABASE_URL"), Path(instance_path), "flowdesk_bench"
        ) as url,
    ):
        settings = {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": url,
            "INSTANCE_PATH": instance_path,
            "SECRET_KEY": "benchmark-secret-key-that-is-long-enough",
            "WTF_CSRF_ENABLED": False,
        }
        app = create_app(settings)
        with app.app_context():
            upgrade()
            seed_demo()
            partitions = dict(db.session.execute(select(Partition.key, Partition.id)).all())
            users = list(db.session.scalars(select(User.id)))
            versions = []
            for key, partition in (("invoice", "finance"), ("leave", "hr"), ("shared", None)):
                process = processes.create_process(
                    key,
                    key,
                    partition_id=partitions.get(partition),
                    actor=None,
                    document=_document(key),
                )
                db.session.flush()
                for number in (1, 2):
                    if number == 2:
                        doc = _document(key)
                        doc["nodes"]["review"]["title"] = "Review again"
                        processes.save_draft(
                            process, doc, base_revision=process.draft_revision, actor=None
                        )
                    version = processes.publish(process, actor=None)
                    db.session.commit()
                    versions.append((version.id, key, version.number, process.partition_id))
            began = time.perf_counter()
            big = load(db.engine, versions, users)
            loaded = time.perf_counter() - began
            db.session.rollback()
            counts = {
                table: db.session.scalar(text(f"SELECT count(*) FROM {table}"))
                for table in ("instances", "history", "tokens")
            }
            db.session.remove()

        client = app.test_client()
        response = client.post("/login", data={"username": "operator", "password": "flowdesk-demo"})
        assert response.status_code == 302, "sign-in failed"
        first = client.get("/operations/instances").get_data(as_text=True)
        older = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
        day = (NOW - timedelta(days=45)).date().isoformat()
        data = "/operations/instances?data="
        pages = [
            ("list, no filter", "/operations/instances"),
            ("list, page 2 (keyset)", older),
            ("list, process", "/operations/instances?process=invoice"),
            ("list, process + version", "/operations/instances?process=invoice&version=2"),
            ("list, version", "/operations/instances?version=1"),
            ("list, status=failed", "/operations/instances?status=failed"),
            ("list, status=cancelled", "/operations/instances?status=cancelled"),
            ("list, partition", "/operations/instances?partition=hr"),
            ("list, business key", "/operations/instances?business_key=BK-050000"),
            ("list, started by", "/operations/instances?started_by=bob"),
            ("list, one day", f"/operations/instances?since={day}&until={day}"),
            ("list, incident (node+code)", "/operations/instances?error_code=timeout"),
            ("list, data $vars.amount > 4000", data + "%24vars.amount+%3E+4000"),
            ("list, data $vars.country == 'SE'", data + "%24vars.country+%3D%3D+%27SE%27"),
            ("list, data (rare) amount == 4999", data + "%24vars.amount+%3D%3D+4999"),
            ("detail, 10,000 history entries", f"/operations/instances/{big}"),
            ("detail, older history page", f"/operations/instances/{big}?before=500000"),
            ("overview (informational)", "/operations/"),
            ("heat of a process (informational)", "/operations/heat/invoice"),
        ]
        backend = "PostgreSQL" if url.startswith("postgresql") else "SQLite"
        print(
            f"{backend}: loaded {counts['instances']:,} instances, {counts['history']:,} history "
            f"rows, {counts['tokens']:,} tokens in {loaded:.1f} s; {runs} runs per page"
        )
        print(f"{'page':40} {'median ms':>10} {'p95 ms':>8} {'rows':>6}")
        for label, path in pages:
            median, p95, rows = timed(client, path, runs)
            print(f"{label:40} {median:10.1f} {p95:8.1f} {rows:6}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
