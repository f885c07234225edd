"""test scenarios: kept per process; a version published over failing ones keeps the reason

Revision ID: 0026_test_scenarios
Revises: 0025_notifications
Create Date: 2026-12-06 13:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0026_test_scenarios"
down_revision = "0025_notifications"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "test_scenarios",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("body", sa.JSON(), nullable=False),
        sa.Column("updated_by_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["process_id"],
            ["processes.id"],
            name=op.f("fk_test_scenarios_process_id_processes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["updated_by_id"],
            ["users.id"],
            name=op.f("fk_test_scenarios_updated_by_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_test_scenarios")),
        sa.UniqueConstraint("process_id", "name", name=op.f("uq_test_scenarios_process_id")),
    )
    op.create_index(
        op.f("ix_test_scenarios_process_id"), "test_scenarios", ["process_id"], unique=False
    )
    with op.batch_alter_table("process_versions") as batch:
        batch.add_column(sa.Column("scenarios_override", sa.String(500), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("process_versions") as batch:
        batch.drop_column("scenarios_override")
    op.drop_index(op.f("ix_test_scenarios_process_id"), table_name="test_scenarios")
    op.drop_table("test_scenarios")
