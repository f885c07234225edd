"""Running instances in-process: start one (one way for every test), load it, work its tasks,
fire its timers, broadcast signals, cancel it, and read its history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import select, update

from tests.engine.broadcasts import run_broadcasts
from tests.helpers.documents import gate_doc
from tests.helpers.processes import publish_document
from tests.helpers.workers import drain

if TYPE_CHECKING:
    from webapp.models import Instance, Job, Task


def start(session, version, **kwargs) -> int:
    """Start an instance of `version` (in its process's partition unless `partition_id` says
    otherwise) and commit what the first step did; its id."""
    from webapp.engine import steps
    from webapp.services.jobs import commit

    kwargs.setdefault("partition_id", version.process.partition_id)
    result = steps.start_instance(session, version, **kwargs)
    commit(result)
    return result.instance.id


def load(session, instance_id: int) -> Instance:
    """The instance as the database has it now."""
    from webapp.models import Instance

    session.rollback()
    return session.get(Instance, instance_id, populate_existing=True)


def open_tasks(session, instance_id: int) -> list[Task]:
    from webapp.models import Task

    session.rollback()
    return list(
        session.scalars(
            select(Task)
            .where(Task.instance_id == instance_id, Task.status == "open")
            .order_by(Task.id)
        )
    )


def complete(session, task: Task, values: dict | None = None) -> None:
    from webapp.engine import steps
    from webapp.services.jobs import commit

    commit(steps.complete_task(session, task.id, values or {}, actor=None))


def pending_jobs(session, instance_id: int, kind: str) -> list[Job]:
    from webapp.models import Job

    session.rollback()
    return list(
        session.scalars(
            select(Job)
            .where(Job.instance_id == instance_id, Job.kind == kind, Job.status == "pending")
            .order_by(Job.id)
        )
    )


def fire(session, job: Job, instance_id: int) -> None:
    """Fire a timer now, as if its time had come (jobs it makes are due now too)."""
    from webapp.engine import steps
    from webapp.models import Job
    from webapp.models.base import utcnow
    from webapp.services.jobs import commit

    session.execute(update(Job).where(Job.id == job.id).values(due_at=utcnow()))
    session.commit()
    commit(steps.fire_timer(session, job.id, instance_id))


def entered(session, instance_id: int) -> list[str]:
    return [n for k, n in history(session, instance_id) if k == "entered"]


def broadcast(session, name: str, payload: dict | None = None, partition_id=None) -> int:
    from webapp.engine import signals
    from webapp.models.base import utcnow

    ref = signals.record(
        session.connection(),
        name=name,
        payload=payload or {},
        partition_id=partition_id,
        now=utcnow(),
        actor="alice",
    )
    session.commit()
    run_broadcasts(session)
    return ref.id


def details(session, instance_id: int, kind: str, node_id: str) -> list[dict[str, Any]]:
    from webapp.models import HistoryEntry

    session.rollback()
    return list(
        session.scalars(
            select(HistoryEntry.details)
            .where(
                HistoryEntry.instance_id == instance_id,
                HistoryEntry.kind == kind,
                HistoryEntry.node_id == node_id,
            )
            .order_by(HistoryEntry.id)
        )
    )


def start_latest(
    app,
    key: str,
    *,
    input: dict | None = None,
    business_key: str | None = None,
    starter: str | None = None,
) -> int:
    """Start an instance of the latest version of `key` in its process's partition, as `starter`."""
    from webapp.extensions import db
    from webapp.models import Process, ProcessVersion, User

    with app.app_context():
        process = db.session.scalar(select(Process).where(Process.key == key))
        version = db.session.scalar(
            select(ProcessVersion)
            .where(ProcessVersion.process_id == process.id)
            .order_by(ProcessVersion.number.desc())
        )
        actor = None
        if starter:
            actor = db.session.scalar(select(User).where(User.username == starter))
        instance_id = start(
            db.session,
            version,
            input=input or {},
            business_key=business_key,
            via="test",
            actor=actor,
        )
        db.session.remove()
    return instance_id


def cancel(app, instance_id: int, reason: str) -> None:
    """Cancel the instance as the operator would."""
    from webapp.engine import steps
    from webapp.extensions import db
    from webapp.models import User
    from webapp.services.jobs import commit

    with app.app_context():
        operator = db.session.scalar(select(User).where(User.username == "operator"))
        commit(steps.cancel_instance(db.session, instance_id, reason=reason, actor=operator))
        db.session.remove()


def history(session, instance_id: int) -> list[tuple[str, str | None]]:
    from webapp.models import HistoryEntry

    session.rollback()
    rows = session.execute(
        select(HistoryEntry.kind, HistoryEntry.node_id)
        .where(HistoryEntry.instance_id == instance_id)
        .order_by(HistoryEntry.id)
    ).all()
    return [(kind, node_id) for kind, node_id in rows]


def start_failed_gate(session, **kwargs) -> int:
    """An instance of `gate_doc` that failed at its gateway."""
    instance_id = start(session, publish_document(gate_doc(), key="gate", **kwargs))
    drain(session)
    return instance_id


def start_many(session, version, count: int, **kwargs) -> list[int]:
    return [start(session, version, **kwargs) for _ in range(count)]


def set_columns(session, instance_ids: list[int], **values: Any) -> None:
    """Test set-up only: give instances data or timestamps the engine would take days to make."""
    from webapp.models import Instance

    session.execute(update(Instance).where(Instance.id.in_(instance_ids)).values(**values))
    session.commit()
