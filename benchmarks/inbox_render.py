"""Benchmark: the inbox page and the navigation count badge with 10,000 open tasks.

Run as ``.venv/bin/python benchmarks/inbox_render.py [runs]``. Builds, in a throw-away SQLite
file (and, when DATABASE_URL names a PostgreSQL server, also in a database created and dropped
there), 100 users with 10 roles, 10,000 open tasks (6,000 assigned to users, 4,000 offered to
roles) plus 10,000 completed ones, then times requests through the Flask test client: the
whole request as the server handles it (routing, sign-in session, queries, templates).
Targets: the inbox page under 100 ms, the count badge under 20 ms.
"""

from __future__ import annotations

import logging
import os
import random
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.designer_save import stats, timed
from tests.helpers.scratch import scratch_database

PASSWORD = "benchmark-password"
USERS, ROLES, OPEN, DONE = 100, 10, 10_000, 10_000
SECRET = "benchmark-secret-key-that-is-long-enough-for-checks"


def make_app(url: str, workdir: Path):
    from flask_migrate import upgrade

    from webapp import create_app

    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": url,
            "SECRET_KEY": SECRET,
            "INSTANCE_PATH": str(workdir),
            "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
        }
    )
    with app.app_context():
        upgrade()
    return app


def _process(key: str, partition_id: int | None):
    from webapp.services import processes

    doc = {
        "format_version": 1,
        "nodes": {
            "start": {"kind": "startEvent", "position": {"x": 0, "y": 0}},
            "work": {
                "kind": "userTask",
                "title": "Work",
                "config": {"assignee": {"type": "role", "value": "r0"}},
                "position": {"x": 150, "y": 0},
            },
            "end": {"kind": "endEvent", "position": {"x": 300, "y": 0}},
        },
        "flows": {
            "f1": {"source": "start", "target": "work"},
            "f2": {"source": "work", "target": "end"},
        },
    }
    process = processes.create_process(
        key, key.title(), partition_id=partition_id, actor=None, document=doc
    )
    return processes.publish(process, actor=None)


def seed(app) -> None:
    """Users, roles, partitions, 4 processes and the tasks, inserted in bulk."""
    from sqlalchemy import insert

    from webapp.extensions import db
    from webapp.models import Instance, Task, Token
    from webapp.models.base import utcnow
    from webapp.services import accounts

    rng = random.Random(7)
    now = utcnow()
    with app.app_context():
        partitions = [accounts.ensure_partition(f"p{i}", f"Partition {i}") for i in range(2)]
        roles = [accounts.ensure_role(f"r{i}", ["tasks.work"]) for i in range(ROLES)]
        db.session.flush()
        users = []
        for i in range(USERS):
            user = accounts.create_user(
                f"u{i:03d}",
                PASSWORD,
                roles=[roles[i % ROLES], roles[(i + 3) % ROLES]],
                partitions=[partitions[i % 2]],
            )
            users.append(user)
        db.session.flush()
        keys = [("invoice", partitions[0].id), ("leave", partitions[1].id), ("order", None)]
        versions = [_process(key, partition) for key, partition in keys]
        db.session.flush()
        total = OPEN + DONE
        db.session.execute(
            insert(Instance),
            [
                {
                    "id": n + 1,
                    "version_id": versions[n % 3].id,
                    "process_key": keys[n % 3][0],
                    "version": 1,
                    "partition_id": keys[n % 3][1],
                    "status": "running" if n < OPEN else "completed",
                    "input": {},
                    "vars": {},
                    "nodes": {},
                    "business_key": f"{keys[n % 3][0][:3].upper()}-{n:05d}",
                    "started_via": "api",
                    "created_at": now - timedelta(minutes=total - n),
                    "updated_at": now,
                }
                for n in range(total)
            ],
        )
        db.session.execute(
            insert(Token),
            [
                {
                    "id": n + 1,
                    "instance_id": n + 1,
                    "node_id": "work",
                    "status": "waiting" if n < OPEN else "done",
                    "step": 2,
                    "created_at": now,
                    "updated_at": now,
                }
                for n in range(total)
            ],
        )
        rows = []
        for n in range(total):
            done = n >= OPEN
            assigned = done or n % 10 < 6
            user = users[rng.randrange(USERS)]
            due = rng.choice([None, -3, -1, 2, 30, 100, 24 * 5, 24 * 20])
            rows.append(
                {
                    "instance_id": n + 1,
                    "token_id": n + 1,
                    "node_id": "work",
                    "title": f"{rng.choice(['Review', 'Approve', 'Check'])} {keys[n % 3][0]} {n}",
                    "partition_id": keys[n % 3][1],
                    "assignee_id": user.id if assigned else None,
                    "candidate_role_id": roles[rng.randrange(ROLES)].id,
                    "status": "completed" if done else "open",
                    "due_at": None if due is None else now + timedelta(hours=due),
                    "completed_by_id": user.id if done else None,
                    "completed_at": now - timedelta(minutes=n) if done else None,
                    "created_at": now - timedelta(minutes=total - n),
                }
            )
        db.session.execute(insert(Task), rows)
        db.session.commit()
        with db.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")


def signed_in(app, username: str):
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*?value="([^"]+)"', page).group(1)
    client.post("/login", data={"username": username, "password": PASSWORD, "csrf_token": token})
    return client


def measure(app, kind: str, runs: int) -> None:
    from webapp.extensions import db
    from webapp.models import Task, User

    with app.app_context():
        user = db.session.scalar(db.select(User).where(User.username == "u007"))
        mine = db.session.scalar(
            db.select(db.func.count(Task.id)).where(
                Task.assignee_id == user.id, Task.status == "open"
            )
        )
    client = signed_in(app, "u007")
    print(f"\n{kind}: {OPEN:,} open + {DONE:,} completed tasks, {USERS} users, {ROLES} roles;")
    print(f"u007 holds 2 roles in 1 partition and has {mine} open tasks assigned")
    pages = {
        "inbox: assigned to me (default)": "/inbox/",
        "inbox: open for my roles": "/inbox/?tab=claimable",
        "inbox: completed by me": "/inbox/?tab=done",
        "inbox: overdue, sorted by creation": "/inbox/?due=overdue&sort=created",
        "inbox: text search 'approve'": "/inbox/?tab=claimable&q=approve",
        "inbox: htmx list fragment, process filter": "/inbox/?process=invoice",
        "count badge": "/inbox/count",
    }
    for label, path in pages.items():
        headers = (
            {"HX-Request": "true", "HX-Target": "section#task-list"} if "htmx" in label else {}
        )
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (path, response.status_code)
        stats(label, timed(lambda p=path, h=headers: client.get(p, headers=h), runs))


def main(runs: int = 50) -> None:
    for name in ("werkzeug", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    print(f"Python {sys.version.split()[0]}; {runs} requests each after one warm-up")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        app = make_app(f"sqlite:///{workdir / 'bench.sqlite3'}", workdir)
        seed(app)
        measure(app, "SQLite", runs)
        if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql")):
            with scratch_database(os.environ["DATABASE_URL"], workdir, "flowdesk_bench") as url:
                app = make_app(url, workdir)
                seed(app)
                measure(app, "PostgreSQL", runs)
                with app.app_context():
                    from webapp.extensions import db

                    db.engine.dispose()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50)
