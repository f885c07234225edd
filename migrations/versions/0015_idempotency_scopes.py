"""idempotency scopes: a message id that started an instance is unique per partition, and a
signal broadcast may carry its sender's Idempotency-Key

`message_starts.partition_scope` is the started instance's partition (0: none), filled from the
instances; the unique index moves from (message_id) to (message_id, partition_scope), so reusing
an id in another partition is a new message. `signal_broadcasts.idempotency_key` and
`request_hash` make a retried `POST /api/signals` return the first broadcast (unique per actor).
On SQLite `message_subscriptions` is rebuilt with AUTOINCREMENT, so a subscription id is never
reused: a signal broadcast covers the subscriptions up to the largest id when it was made.

Revision ID: 0015_idempotency_scopes
Revises: 0014_import_reports
Create Date: 2026-12-06 02:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0015_idempotency_scopes"
down_revision = "0014_import_reports"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        with op.batch_alter_table(
            "message_subscriptions",
            recreate="always",
            table_kwargs={"sqlite_autoincrement": True},
        ):
            pass
    with op.batch_alter_table("message_starts") as batch:
        batch.add_column(
            sa.Column("partition_scope", sa.Integer(), nullable=False, server_default="0")
        )
        batch.drop_index("uq_message_starts_message_id")
    op.execute(
        "UPDATE message_starts SET partition_scope = COALESCE((SELECT instances.partition_id "
        "FROM instances WHERE instances.id = message_starts.instance_id), 0)"
    )
    op.create_index(
        "uq_message_starts_message_id_partition_scope",
        "message_starts",
        ["message_id", "partition_scope"],
        unique=True,
    )
    with op.batch_alter_table("signal_broadcasts") as batch:
        batch.add_column(sa.Column("idempotency_key", sa.String(255), nullable=True))
        batch.add_column(sa.Column("request_hash", sa.String(64), nullable=True))
    op.create_index(
        "uq_signal_broadcasts_actor_idempotency_key",
        "signal_broadcasts",
        ["actor", "idempotency_key"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_index("uq_signal_broadcasts_actor_idempotency_key", table_name="signal_broadcasts")
    with op.batch_alter_table("signal_broadcasts") as batch:
        batch.drop_column("request_hash")
        batch.drop_column("idempotency_key")
    op.drop_index("uq_message_starts_message_id_partition_scope", table_name="message_starts")
    op.execute(
        "DELETE FROM message_starts WHERE id NOT IN "
        "(SELECT MIN(id) FROM message_starts GROUP BY message_id)"
    )
    with op.batch_alter_table("message_starts") as batch:
        batch.drop_column("partition_scope")
    op.create_index("uq_message_starts_message_id", "message_starts", ["message_id"], unique=True)
