"""Migration racing the engine: a timer that falls due while its instance migrates fires once, on
the new version (the migration holds the instance's lock, the worker's step waits for it and then
finds its job and token at their new nodes), and a tool's outcome arriving after the move is
applied on the new version (SQLite, and PostgreSQL with DATABASE_URL)."""

from __future__ import annotations

import time

from sqlalchemy import func, select

from tests.helpers.instances import open_tasks, pending_jobs, start
from tests.helpers.migration import first_version, second_version
from tests.helpers.processes import publish_document
from tests.helpers.workers import wait_for
from webapp.engine import migration, steps
from webapp.engine.calls import Outcome
from webapp.models import HistoryEntry
from webapp.models.base import utcnow
from webapp.services.jobs import commit


def _short(doc: dict) -> dict:
    doc["nodes"]["wait"]["config"]["duration"] = "PT2S"
    return doc


def _timer_entries(engine, instance_id: int) -> int:
    engine.rollback()
    return engine.scalar(
        select(func.count()).where(
            HistoryEntry.instance_id == instance_id, HistoryEntry.kind == "timer"
        )
    )


def test_a_timer_falling_due_during_a_migration_fires_once_on_the_new_version(engine, workers):
    v1 = publish_document(_short(first_version()), key="race")
    v2 = publish_document(_short(second_version()), key="race")
    instance_id = start(engine, v1, input={"path": "timer"})
    job = pending_jobs(engine, instance_id, "timer")[0]
    workers.start(1)

    plan = migration.plan(v1, v2, {})
    result = migration.migrate_instance(
        engine, instance_id, v1.id, v2.id, plan, actor="operator", now=utcnow()
    )
    assert result.applied
    # Hold the lock until well after the timer's time: the worker's clock and step must wait.
    time.sleep(max(0.0, (job.due_at - utcnow()).total_seconds()) + 1.5)
    engine.commit()

    checks = wait_for(lambda: open_tasks(engine, instance_id), timeout=30, what="the check task")
    assert [task.title for task in checks] == ["Check"]
    time.sleep(1.5)
    assert _timer_entries(engine, instance_id) == 1
    assert [task.title for task in open_tasks(engine, instance_id)] == ["Check"]
    kinds = engine.scalars(
        select(HistoryEntry.kind)
        .where(HistoryEntry.instance_id == instance_id)
        .order_by(HistoryEntry.id)
    ).all()
    assert kinds.index("migrated") < kinds.index("timer")


def test_a_tool_outcome_arriving_after_the_migration_is_applied_on_the_new_version(engine):
    v1 = publish_document(first_version(), key="race")
    v2 = publish_document(second_version(), key="race")
    instance_id = start(engine, v1, input={"path": "tool"})
    job = pending_jobs(engine, instance_id, "tool")[0]
    call = steps.claim_tool_job(engine, job.id, lease_grace=10)
    engine.commit()
    assert call is not None, "the tool call is under way when the instance migrates"

    plan = migration.plan(v1, v2, {})
    migration.migrate_instance(
        engine, instance_id, v1.id, v2.id, plan, actor="operator", now=utcnow()
    )
    engine.commit()
    result = steps.apply_tool_outcome(
        engine, job.id, instance_id, Outcome(ok=True, output={"done": True}), attempt=call.attempt
    )
    commit(result)
    assert [task.title for task in open_tasks(engine, instance_id)] == ["Check"]
