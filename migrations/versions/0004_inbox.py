"""task inbox: indexes and saved filters

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 19:10:00

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "saved_filters",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("query", sa.String(length=1000), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_saved_filters_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saved_filters")),
        sa.UniqueConstraint("user_id", "name", name=op.f("uq_saved_filters_user_id")),
    )
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.create_index(
            "ix_tasks_assignee_id_status_due_at", ["assignee_id", "status", "due_at"], unique=False
        )
        batch_op.create_index(
            "ix_tasks_candidate_role_id_status_assignee_id",
            ["candidate_role_id", "status", "assignee_id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_tasks_completed_by_id_completed_at",
            ["completed_by_id", "completed_at"],
            unique=False,
        )
        batch_op.create_index("ix_tasks_status_due_at", ["status", "due_at"], unique=False)


def downgrade():
    with op.batch_alter_table("tasks", schema=None) as batch_op:
        batch_op.drop_index("ix_tasks_status_due_at")
        batch_op.drop_index("ix_tasks_completed_by_id_completed_at")
        batch_op.drop_index("ix_tasks_candidate_role_id_status_assignee_id")
        batch_op.drop_index("ix_tasks_assignee_id_status_due_at")
    op.drop_table("saved_filters")
