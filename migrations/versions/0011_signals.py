"""signals: signal subscriptions, broadcasts with batches and receipts; message and signal starts

`message_subscriptions.kind` tells a signal subscription ("signal", empty correlation key) from a
message one. `signal_broadcasts` are processed in `signal_batches` by workers; `signal_receipts`
(unique per broadcast and instance, and per broadcast and started process) make each delivery
once-only. `event_starts` lists the message and signal start events of each process's latest
version (filled here from the published versions); `message_starts` the message ids that started
an instance.

Revision ID: 0011_signals
Revises: 0010
Create Date: 2026-12-03 20:30:00

"""

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision = "0011_signals"
down_revision = "0010"
branch_labels = None
depends_on = None


def _stamp(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.add_column(
        "message_subscriptions",
        sa.Column("kind", sa.String(8), nullable=False, server_default="message"),
    )
    op.create_index(
        "ix_message_subscriptions_kind_name",
        "message_subscriptions",
        ["kind", "name", "instance_id"],
    )
    op.create_table(
        "signal_broadcasts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("payload", JSONType, nullable=True),
        sa.Column("partition_id", sa.Integer(), nullable=True),
        sa.Column("instance_id", sa.Integer(), nullable=True),
        sa.Column("node_id", sa.String(255), nullable=True),
        sa.Column("actor", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("high_water", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("delivered", sa.Integer(), nullable=False),
        sa.Column("started", sa.Integer(), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["partition_id"],
            ["partitions.id"],
            name=op.f("fk_signal_broadcasts_partition_id_partitions"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_signal_broadcasts_instance_id_instances"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signal_broadcasts")),
    )
    op.create_index("ix_signal_broadcasts_status_id", "signal_broadcasts", ["status", "id"])
    op.create_index(
        op.f("ix_signal_broadcasts_partition_id"), "signal_broadcasts", ["partition_id"]
    )
    op.create_index(op.f("ix_signal_broadcasts_created_at"), "signal_broadcasts", ["created_at"])
    op.create_table(
        "signal_batches",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("broadcast_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("after", sa.Integer(), nullable=False),
        sa.Column("upto", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
        sa.ForeignKeyConstraint(
            ["broadcast_id"],
            ["signal_broadcasts.id"],
            name=op.f("fk_signal_batches_broadcast_id_signal_broadcasts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signal_batches")),
    )
    op.create_index("ix_signal_batches_status_id", "signal_batches", ["status", "id"])
    op.create_index(op.f("ix_signal_batches_broadcast_id"), "signal_batches", ["broadcast_id"])
    op.create_table(
        "signal_receipts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("broadcast_id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("process_id", sa.Integer(), nullable=True),
        sa.Column("started", sa.Boolean(), nullable=False),
        _stamp("created_at"),
        sa.ForeignKeyConstraint(
            ["broadcast_id"],
            ["signal_broadcasts.id"],
            name=op.f("fk_signal_receipts_broadcast_id_signal_broadcasts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_signal_receipts_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["process_id"],
            ["processes.id"],
            name=op.f("fk_signal_receipts_process_id_processes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_signal_receipts")),
    )
    op.create_index(
        "uq_signal_receipts_broadcast_id_instance_id",
        "signal_receipts",
        ["broadcast_id", "instance_id"],
        unique=True,
    )
    op.create_index(
        "uq_signal_receipts_broadcast_id_process_id",
        "signal_receipts",
        ["broadcast_id", "process_id"],
        unique=True,
    )
    op.create_index("ix_signal_receipts_instance_id", "signal_receipts", ["instance_id"])
    op.create_table(
        "event_starts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.String(255), nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("message", sa.String(200), nullable=True),
        sa.ForeignKeyConstraint(
            ["process_id"],
            ["processes.id"],
            name=op.f("fk_event_starts_process_id_processes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["process_versions.id"],
            name=op.f("fk_event_starts_version_id_process_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_starts")),
    )
    op.create_index("ix_event_starts_event_name", "event_starts", ["event", "name"])
    op.create_index("uq_event_starts_message", "event_starts", ["message"], unique=True)
    op.create_index(op.f("ix_event_starts_process_id"), "event_starts", ["process_id"])
    op.create_table(
        "message_starts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("request_hash", sa.String(64), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        _stamp("created_at"),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_message_starts_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_starts")),
    )
    op.create_index("uq_message_starts_message_id", "message_starts", ["message_id"], unique=True)
    _fill_event_starts()


def _fill_event_starts() -> None:
    """The message and signal starts of each process's latest published version."""
    conn = op.get_bind()
    rows = conn.execute(
        sa.text(
            "SELECT v.id, v.process_id, v.document FROM process_versions v WHERE v.number = "
            "(SELECT MAX(w.number) FROM process_versions w WHERE w.process_id = v.process_id)"
        )
    ).all()
    taken: set[str] = set()
    found = []
    for version_id, process_id, document in rows:
        doc = json.loads(document) if isinstance(document, str) else document or {}
        for node_id, node in (doc.get("nodes") or {}).items():
            config = node.get("config") or {}
            event = config.get("event")
            name = str(config.get(event) or "") if event in ("message", "signal") else ""
            if node.get("kind") != "startEvent" or node.get("parent") or not name:
                continue
            message = name if event == "message" and name not in taken else None
            if message:
                taken.add(message)
            found.append(
                {
                    "process_id": process_id,
                    "version_id": version_id,
                    "node_id": node_id,
                    "event": event,
                    "name": name[:200],
                    "message": message,
                }
            )
    if found:
        table = sa.table(
            "event_starts",
            *(sa.column(c) for c in ("process_id", "version_id", "node_id", "event", "name")),
            sa.column("message"),
        )
        conn.execute(table.insert(), found)


def downgrade() -> None:
    op.drop_index("uq_message_starts_message_id", table_name="message_starts")
    op.drop_table("message_starts")
    op.drop_index(op.f("ix_event_starts_process_id"), table_name="event_starts")
    op.drop_index("uq_event_starts_message", table_name="event_starts")
    op.drop_index("ix_event_starts_event_name", table_name="event_starts")
    op.drop_table("event_starts")
    op.drop_index("ix_signal_receipts_instance_id", table_name="signal_receipts")
    op.drop_index("uq_signal_receipts_broadcast_id_process_id", table_name="signal_receipts")
    op.drop_index("uq_signal_receipts_broadcast_id_instance_id", table_name="signal_receipts")
    op.drop_table("signal_receipts")
    op.drop_index(op.f("ix_signal_batches_broadcast_id"), table_name="signal_batches")
    op.drop_index("ix_signal_batches_status_id", table_name="signal_batches")
    op.drop_table("signal_batches")
    op.drop_index(op.f("ix_signal_broadcasts_created_at"), table_name="signal_broadcasts")
    op.drop_index(op.f("ix_signal_broadcasts_partition_id"), table_name="signal_broadcasts")
    op.drop_index("ix_signal_broadcasts_status_id", table_name="signal_broadcasts")
    op.drop_table("signal_broadcasts")
    # Signal subscriptions mean nothing to older code: their tokens stay waiting for good.
    op.execute("DELETE FROM message_subscriptions WHERE kind <> 'message'")
    op.drop_index("ix_message_subscriptions_kind_name", table_name="message_subscriptions")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+): no table rebuild, whose DROP would cascade.
    op.drop_column("message_subscriptions", "kind")
