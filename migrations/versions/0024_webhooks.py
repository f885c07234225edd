"""webhooks out: registered receivers and their deliveries

A webhook names a URL, the event types it wants, optional process and partition filters and its
`whsec_` secret (and the previous one during a rotation). Each event becomes one delivery row per
matching webhook, in the transaction that wrote the history entry; workers send the due ones.

Revision ID: 0024_webhooks
Revises: 0023_api_tokens
Create Date: 2026-12-06 12:00:00

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0024_webhooks"
down_revision = "0023_api_tokens"
branch_labels = None
depends_on = None

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
PENDING = sa.text("status = 'pending'")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("description", sa.String(200), nullable=False),
        sa.Column("events", JSONType, nullable=False),
        sa.Column("process_key", sa.String(100), nullable=True),
        sa.Column("partition_id", sa.Integer(), nullable=True),
        sa.Column("secret", sa.String(200), nullable=False),
        sa.Column("previous_secret", sa.String(200), nullable=True),
        sa.Column("previous_until", WHEN, nullable=True),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("paused_at", WHEN, nullable=True),
        sa.Column("paused_reason", sa.String(500), nullable=True),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("failing_since", WHEN, nullable=True),
        sa.Column("created_by", sa.String(64), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["partition_id"],
            ["partitions.id"],
            name=op.f("fk_webhooks_partition_id_partitions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("webhook_id", sa.Integer(), nullable=False),
        sa.Column("message_id", sa.String(64), nullable=False),
        sa.Column("event_type", sa.String(40), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("response_code", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(500), nullable=True),
        sa.Column("next_attempt_at", WHEN, nullable=True),
        sa.Column("retry_until", WHEN, nullable=False),
        sa.Column("last_attempt_at", WHEN, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_deliveries_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("message_id", name=op.f("uq_webhook_deliveries_message_id")),
    )
    op.create_index(
        "ix_webhook_deliveries_due",
        "webhook_deliveries",
        ["next_attempt_at"],
        postgresql_where=PENDING,
        sqlite_where=PENDING,
    )
    op.create_index(
        "ix_webhook_deliveries_order",
        "webhook_deliveries",
        ["webhook_id", "instance_id", "id"],
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_order", table_name="webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", table_name="webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
