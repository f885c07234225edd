"""open tasks: a user task with no assignee goes to everyone who may work tasks in its partition

`tasks.open_to_partition` marks such a task (as Camunda's Tasklist shows an unassigned task to
every user), so it is told apart from a task whose assignee could not be resolved, which only
operators see until they reassign it.

Revision ID: 0013_open_tasks
Revises: 0012_schedules
Create Date: 2026-12-04 09:40:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0013_open_tasks"
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


def downgrade() -> None:
    op.drop_index("ix_tasks_open_to_partition_status", table_name="tasks")
    with op.batch_alter_table("tasks") as batch:
        batch.drop_column("open_to_partition")
