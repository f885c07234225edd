"""operations: retention settings, bulk operations and dashboard indexes

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 19:10:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

# (name, columns) of the instance indexes behind the operations lists, counts and retention.
INSTANCE_INDEXES = [
    ("ix_instances_created_at_id", ["created_at", "id"]),
    ("ix_instances_partition_id_created_at_id", ["partition_id", "created_at", "id"]),
    ("ix_instances_process_key_created_at_id", ["process_key", "created_at", "id"]),
    ("ix_instances_process_key_status_partition_id", ["process_key", "status", "partition_id"]),
    ("ix_instances_started_by_id_created_at_id", ["started_by_id", "created_at", "id"]),
    ("ix_instances_status_created_at_id", ["status", "created_at", "id"]),
    ("ix_instances_status_ended_at", ["status", "ended_at"]),
    ("ix_instances_version_id_created_at_id", ["version_id", "created_at", "id"]),
]


def upgrade():
    op.create_table(
        "bulk_operations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("actor_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["actor_id"],
            ["users.id"],
            name=op.f("fk_bulk_operations_actor_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bulk_operations")),
    )
    op.create_index(
        op.f("ix_bulk_operations_actor_id"), "bulk_operations", ["actor_id"], unique=False
    )
    op.create_table(
        "bulk_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("operation_id", sa.Integer(), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("message", sa.String(length=500), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["operation_id"],
            ["bulk_operations.id"],
            name=op.f("fk_bulk_items_operation_id_bulk_operations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bulk_items")),
        sa.UniqueConstraint("operation_id", "instance_id", name=op.f("uq_bulk_items_operation_id")),
    )
    op.create_index(
        "ix_bulk_items_operation_id_status",
        "bulk_items",
        ["operation_id", "status"],
        unique=False,
    )
    op.create_table(
        "retention_policies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process_id", sa.Integer(), nullable=False),
        sa.Column("days", sa.Integer(), nullable=True),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["process_id"],
            ["processes.id"],
            name=op.f("fk_retention_policies_process_id_processes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["updated_by_id"],
            ["users.id"],
            name=op.f("fk_retention_policies_updated_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_retention_policies")),
        sa.UniqueConstraint("process_id", name=op.f("uq_retention_policies_process_id")),
    )
    for name, columns in INSTANCE_INDEXES:
        op.create_index(name, "instances", columns, unique=False)


def downgrade():
    for name, _columns in reversed(INSTANCE_INDEXES):
        op.drop_index(name, table_name="instances")
    op.drop_table("retention_policies")
    op.drop_index("ix_bulk_items_operation_id_status", table_name="bulk_items")
    op.drop_table("bulk_items")
    op.drop_index(op.f("ix_bulk_operations_actor_id"), table_name="bulk_operations")
    op.drop_table("bulk_operations")
