"""The status and history-kind enums name exactly what the engine stores, and read as that text."""

import json

from sqlalchemy import Table, select
from sqlalchemy.orm import DeclarativeBase

from webapp.cli.demo_processes import seed_demo_processes
from webapp.engine import history
from webapp.extensions import Base, db
from webapp.models import (
    BulkItem,
    BulkOperation,
    HistoryEntry,
    Instance,
    Job,
    SignalBatch,
    SignalBroadcast,
    Task,
    Token,
)
from webapp.models.session import db_session as current_session
from webapp.models.statuses import (
    INSTANCE_STATUSES,
    LIVE_TOKEN,
    OPEN_TOKEN,
    PAUSED_TOKEN,
    UNFINISHED_BROADCAST,
    BatchStatus,
    BroadcastStatus,
    BulkItemStatus,
    BulkStatus,
    HistoryKind,
    InstanceStatus,
    JobStatus,
    TaskStatus,
    TokenStatus,
)
from webapp.services import accounts, instances


def test_history_kinds_are_the_engines():
    assert {str(kind) for kind in HistoryKind} == set(history.KINDS)


def test_members_read_as_the_stored_text():
    assert InstanceStatus.FAILED == "failed"
    assert f"{TokenStatus.WAITING}" == "waiting"
    assert json.dumps({"status": TaskStatus.OPEN}) == '{"status": "open"}'
    assert dict.fromkeys(INSTANCE_STATUSES, 0)["running"] == 0
    assert set(LIVE_TOKEN) == {"active", "waiting"}
    assert set(OPEN_TOKEN) == {"active", "waiting", "failed"}
    assert set(PAUSED_TOKEN) == {"waiting", "failed"}


def test_everything_stored_is_a_member(demo, db_session):
    seed_demo_processes()
    admin = accounts.find_user("admin")
    assert admin is not None
    running = db_session.scalars(select(Instance.id).where(Instance.parent_id.is_(None))).all()
    instances.cancel(admin, running[0], reason="status check")
    db_session.remove()

    assert set(db_session.scalars(select(Instance.status))) <= set(InstanceStatus)
    assert set(db_session.scalars(select(Token.status))) <= set(TokenStatus)
    assert set(db_session.scalars(select(Job.status))) <= set(JobStatus)
    assert set(db_session.scalars(select(Task.status))) <= set(TaskStatus)
    assert set(db_session.scalars(select(HistoryEntry.kind))) <= set(HistoryKind)
    assert InstanceStatus.CANCELLED in set(db_session.scalars(select(Instance.status)))


def test_models_share_the_typed_base_and_one_session(db_session):
    assert issubclass(Instance, db.Model) and issubclass(Instance, DeclarativeBase)
    assert db.metadata is Base.metadata and Instance.metadata is Base.metadata
    assert db.metadata.naming_convention["pk"] == "pk_%(table_name)s"
    assert isinstance(Instance.__table__, Table)
    assert current_session() is db.session()


def test_broadcasts_and_bulk_operations_start_as_their_enums_first_member():
    assert SignalBroadcast.__table__.c.status.default.arg == BroadcastStatus.PENDING
    assert SignalBatch.__table__.c.status.default.arg == BatchStatus.PENDING
    assert BulkOperation.__table__.c.status.default.arg == BulkStatus.QUEUED
    assert BulkItem.__table__.c.status.default.arg == BulkItemStatus.PENDING
    assert set(UNFINISHED_BROADCAST) == {"pending", "running"}
    assert [str(s) for s in BulkItemStatus] == ["pending", "ok", "error"]
