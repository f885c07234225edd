"""CLI commands, the embedded Redis, and a real RQ job run by a real worker process."""

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from tests.helpers.workers import worker_env
from webapp.infra.queue import get_queue
from webapp.infra.redis_server import EmbeddedRedis
from webapp.models import Partition, Role, User

ROOT = Path(__file__).resolve().parents[2]


def _snapshot(db_session):
    users = db_session.execute(
        select(User.username, User.display_name, User.active).order_by(User.username)
    ).all()
    roles = {r.name: sorted(r.permissions) for r in db_session.scalars(select(Role))}
    memberships = {
        u.username: (sorted(r.name for r in u.roles), sorted(p.key for p in u.partitions))
        for u in db_session.scalars(select(User))
    }
    return users, roles, memberships, db_session.scalar(select(func.count()).select_from(Partition))


def test_seed_demo_twice_gives_the_same_data(app, db_session):
    runner = app.test_cli_runner()
    first = runner.invoke(args=["seed-demo"])
    assert first.exit_code == 0, first.output
    assert "every demo password is 'flowdesk-demo'" in first.output
    before = _snapshot(db_session)
    db_session.remove()
    second = runner.invoke(args=["seed-demo"])
    assert second.exit_code == 0
    after = _snapshot(db_session)
    assert before == after
    assert [u[0] for u in after[0]] == ["admin", "alice", "bob", "designer", "operator"]


def test_seed_demo_publishes_processes_with_work_waiting(app, app_config, db_session):
    """A newcomer's first `make run` has processes to open, tasks to work, instances to watch."""
    from tests.helpers.workers import run_burst
    from webapp.models import Instance, Process, Task

    runner = app.test_cli_runner()
    assert runner.invoke(args=["seed-demo"]).exit_code == 0
    again = runner.invoke(args=["seed-demo"])
    assert "0 new demo processes" in again.output, "a second run adds nothing"
    published = db_session.scalars(select(Process).order_by(Process.key)).all()
    assert [p.key for p in published] == [
        "customer-onboarding",
        "expense-approval",
        "purchase-request",
    ]
    for process in published:
        assert [v.number for v in process.versions] == [1]
        assert all(p["severity"] != "error" for p in process.draft_problems), process.key
    run_burst(app_config)
    db_session.remove()
    status = dict(db_session.execute(select(Instance.business_key, Instance.status)).all())
    assert status == {
        "EXP-1001": "running",
        "EXP-1002": "completed",
        "CUST-17": "running",
        "PUR-2001": "running",
    }
    open_tasks = db_session.execute(select(Task.title, Task.status)).all()
    assert sorted(open_tasks) == [
        ("Approve expense", "open"),
        ("Review offer", "open"),
        ("Review offer", "open"),
        ("Welcome call", "open"),
    ]
    quiet = runner.invoke(args=["seed-demo", "--no-processes"])
    assert quiet.exit_code == 0 and "0 new demo processes" in quiet.output


def test_create_user_command(app, demo, db_session):
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=[
            "create-user",
            "Erin",
            "--password",
            "erin-password",
            "--role",
            "clerk",
            "--partition",
            "hr",
        ]
    )
    assert result.exit_code == 0, result.output
    erin = db_session.scalar(select(User).where(User.username == "erin"))
    assert erin.check_password("erin-password")
    assert [p.key for p in erin.partitions] == ["hr"]
    bad = runner.invoke(
        args=["create-user", "zed", "--password", "zed-password", "--role", "wizard"]
    )
    assert bad.exit_code != 0
    assert "unknown role 'wizard'" in bad.output
    weak = runner.invoke(args=["create-user", "yan", "--password", "short"])
    assert "password: Use at least 8 characters." in weak.output


def test_embedded_redis_starts_once_and_stops(tmp_path):
    first = EmbeddedRedis(tmp_path)
    assert first.ensure_running() is True
    second = EmbeddedRedis(tmp_path)
    assert second.ensure_running() is False, "a second process attaches to the running server"
    assert second.is_running()
    first.stop()
    assert not second.is_running()


def test_a_real_worker_process_runs_a_job_in_the_app_context(app, app_config, demo):
    with app.app_context():
        job = get_queue().enqueue("webapp.worker.health.healthcheck")
    done = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env=worker_env(app_config),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    job.refresh()
    assert job.get_status() == "finished", done.stderr
    assert job.return_value() == {"users": 5}


def test_seed_demo_refuses_production_unless_forced(app):
    from webapp.extensions import db

    def users() -> int:
        with app.app_context():
            return db.session.scalar(select(func.count()).select_from(User))

    runner = app.test_cli_runner()
    app.config["FLOWDESK_ENV"] = "production"
    try:
        refused = runner.invoke(args=["seed-demo"])
        assert refused.exit_code != 0
        assert "refusing to seed demo data in production" in refused.output
        assert users() == 0
        forced = runner.invoke(args=["seed-demo", "--force", "--no-processes"])
        assert forced.exit_code == 0, forced.output
    finally:
        app.config["FLOWDESK_ENV"] = "testing"
    assert users() == 5


def test_a_worker_refuses_incomplete_production_settings_naming_them(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    refused = subprocess.run(
        [sys.executable, "worker.py", "--burst"],
        cwd=ROOT,
        env={**env, "FLOWDESK_ENV": "production", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode != 0
    assert refused.stderr.strip() == (
        "worker not started: DATABASE_URL is not set: production needs a PostgreSQL URL"
    )


def test_a_worker_on_the_embedded_redis_says_so(app_config, tmp_path, caplog):
    import logging

    import worker

    config = {k: v for k, v in app_config.items() if k != "REDIS_URL"}
    with caplog.at_level(logging.WARNING, logger="flowdesk.worker"):
        worker.main(["--burst"], {**config, "INSTANCE_PATH": str(tmp_path)})
    warning = next(r.getMessage() for r in caplog.records if r.name == "flowdesk.worker")
    assert warning.startswith(
        f"REDIS_URL is not set: this worker uses the embedded Redis under {tmp_path}"
    )
    assert "In production set FLOWDESK_ENV=production, REDIS_URL" in warning


def test_the_demo_purchase_request_is_reviewed_by_alice_and_bob(app, app_config, db_session):
    """The seeded purchase request waits in a sub-process on one review each for alice and bob,
    with the daily reminder armed; their two approvals finish it and withdraw the reminder."""
    from tests.helpers.app import login
    from tests.helpers.inbox import post
    from tests.helpers.workers import run_burst
    from webapp.models import Instance, Job, Task

    assert app.test_cli_runner().invoke(args=["seed-demo"]).exit_code == 0
    run_burst(app_config)
    db_session.remove()
    instance = db_session.scalar(select(Instance).where(Instance.business_key == "PUR-2001"))
    reminder = db_session.scalar(
        select(Job).where(Job.instance_id == instance.id, Job.kind == "timer")
    )
    assert reminder is not None and reminder.status == "pending"
    for username in ("alice", "bob"):
        client = app.test_client()
        assert login(client, username).status_code == 302
        task = db_session.scalar(
            select(Task).where(
                Task.instance_id == instance.id,
                Task.status == "open",
                Task.assignee.has(User.username == username),
            )
        )
        assert task is not None and task.title == "Review offer", username
        page = client.get(f"/inbox/tasks/{task.id}").get_data(as_text=True)
        assert f"<h1>Review offer — reviewer: {username} (" in page
        assert "Standing desks (4)" in page
        done = post(client, f"/inbox/tasks/{task.id}", {"approve": "yes"})
        assert done.status_code == 303, done.get_data(as_text=True)
    run_burst(app_config)
    db_session.remove()
    instance = db_session.get(Instance, instance.id)
    assert instance.status == "completed"
    assert instance.vars["reviews"] == ["yes", "yes"]
    assert instance.vars["decision"] == {"approved": True}
    assert db_session.get(Job, reminder.id).status == "cancelled"
