"""suspend and resume: suspension columns on instances and process versions, and held events

An instance keeps its status (running, failed) while suspended; `suspended_at` says it is, with
who and why. Messages, signals and tool outcomes that reach a suspended instance wait in
`held_events`, in arrival order, until it is resumed. A suspended process version starts nothing.

Revision ID: 0021_suspension
Revises: 0020_bulk_operation_params
Create Date: 2026-12-06 11:00:00

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0021_suspension"
down_revision = "0020_bulk_operation_params"
branch_labels = None
depends_on = None

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
SUSPENDED = sa.text("suspended_at IS NOT NULL")


def _suspension_columns(batch, table: str) -> None:
    batch.add_column(sa.Column("suspended_at", sa.DateTime(timezone=True), nullable=True))
    batch.add_column(sa.Column("suspended_by_id", sa.Integer(), nullable=True))
    batch.add_column(sa.Column("suspend_reason", sa.String(500), nullable=True))
    batch.create_foreign_key(
        op.f(f"fk_{table}_suspended_by_id_users"),
        "users",
        ["suspended_by_id"],
        ["id"],
        ondelete="SET NULL",
    )


def upgrade() -> None:
    with op.batch_alter_table("instances") as batch:
        _suspension_columns(batch, "instances")
    op.create_index(
        "ix_instances_suspended_at",
        "instances",
        ["suspended_at"],
        postgresql_where=SUSPENDED,
        sqlite_where=SUSPENDED,
    )
    with op.batch_alter_table("process_versions") as batch:
        _suspension_columns(batch, "process_versions")
    op.create_table(
        "held_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("data", JSONType, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["instance_id"],
            ["instances.id"],
            name=op.f("fk_held_events_instance_id_instances"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_held_events")),
    )
    op.create_index(op.f("ix_held_events_instance_id"), "held_events", ["instance_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_held_events_instance_id"), table_name="held_events")
    op.drop_table("held_events")
    with op.batch_alter_table("process_versions") as batch:
        batch.drop_constraint(op.f("fk_process_versions_suspended_by_id_users"), type_="foreignkey")
        batch.drop_column("suspend_reason")
        batch.drop_column("suspended_by_id")
        batch.drop_column("suspended_at")
    op.drop_index("ix_instances_suspended_at", table_name="instances")
    with op.batch_alter_table("instances") as batch:
        batch.drop_constraint(op.f("fk_instances_suspended_by_id_users"), type_="foreignkey")
        batch.drop_column("suspend_reason")
        batch.drop_column("suspended_by_id")
        batch.drop_column("suspended_at")
