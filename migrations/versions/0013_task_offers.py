"""task offers: tasks open to a whole partition, and tasks offered to several roles and users

`tasks.open_to_partition` marks a user task with no assignee in its model: it goes to everyone
who may work tasks in its partition (as Camunda's Tasklist shows an unassigned task to every
user), told apart from a task whose assignee could not be resolved, which only operators see
until they reassign it. `task_candidates` holds the further roles and users a task is offered
to (a model's candidate groups and users beyond the first).

Revision ID: 0013_task_offers
Revises: 0012_schedules
Create Date: 2026-12-04 09:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0013_task_offers"
down_revision = "0012_schedules"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(
            sa.Column(
                "open_to_partition", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
    op.create_index(
        "ix_tasks_open_to_partition_status", "tasks", ["open_to_partition", "status"]
    )
    op.create_table(
        "task_candidates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("role_id", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["task_id"], ["tasks.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["role_id"], ["roles.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    for column in ("task_id", "role_id", "user_id"):
        op.create_index(f"ix_task_candidates_{column}", "task_candidates", [column])


def downgrade() -> None:
    op.drop_table("task_candidates")
    op.drop_index("ix_tasks_open_to_partition_status", table_name="tasks")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("open_to_partition")
