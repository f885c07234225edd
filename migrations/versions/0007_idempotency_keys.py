"""idempotency keys: an API start's Idempotency-Key on its instance, message ids per instance

`instances.idempotency_key` is unique per starter (a unique index, so SQLite needs no table
rebuild); `request_hash` digests the request so a key reused for another request is refused.
`message_receipts` records each message id an instance received, once.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 15:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade():
    op.add_column("instances", sa.Column("idempotency_key", sa.String(length=255), nullable=True))
    op.add_column("instances", sa.Column("request_hash", sa.String(length=64), nullable=True))
    op.create_index(
        "uq_instances_started_by_id_idempotency_key",
        "instances",
        ["started_by_id", "idempotency_key"],
        unique=True,
    )
    op.create_table(
        "message_receipts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_message_receipts_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_message_receipts")),
    )
    op.create_index(
        "uq_message_receipts_instance_id_message_id",
        "message_receipts",
        ["instance_id", "message_id"],
        unique=True,
    )
    op.create_index("ix_message_receipts_message_id", "message_receipts", ["message_id"])


def downgrade():
    op.drop_index("ix_message_receipts_message_id", table_name="message_receipts")
    op.drop_index("uq_message_receipts_instance_id_message_id", table_name="message_receipts")
    op.drop_table("message_receipts")
    op.drop_index("uq_instances_started_by_id_idempotency_key", table_name="instances")
    # ALTER TABLE ... DROP COLUMN (SQLite 3.35+): no table rebuild, whose DROP would cascade.
    op.drop_column("instances", "request_hash")
    op.drop_column("instances", "idempotency_key")
