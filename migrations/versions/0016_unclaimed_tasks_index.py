"""unclaimed tasks index: the inbox's "open for my roles" list and count read one small index

A partial index over the open tasks nobody has claimed, holding every column the "open for my
roles" condition reads (candidate role, partition, open to everyone, id), so the count in the
navigation badge, on the home page and under the tab is an index-only scan instead of a visit to
every open task's row; and a second one in creation order, so "newest first" reads the first
page of that list off the index instead of sorting every task offered to the user.

Revision ID: 0016_unclaimed_tasks_index
Revises: 0015_idempotency_scopes
Create Date: 2026-12-06 05:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0016_unclaimed_tasks_index"
down_revision = "0015_idempotency_scopes"
branch_labels = None
depends_on = None

UNCLAIMED = sa.text("status = 'open' AND assignee_id IS NULL")


def upgrade() -> None:
    op.create_index(
        "ix_tasks_unclaimed",
        "tasks",
        ["candidate_role_id", "partition_id", "open_to_partition", "id"],
        postgresql_where=UNCLAIMED,
        sqlite_where=UNCLAIMED,
    )
    op.create_index(
        "ix_tasks_unclaimed_created_at",
        "tasks",
        ["created_at", "id"],
        postgresql_where=UNCLAIMED,
        sqlite_where=UNCLAIMED,
    )


def downgrade() -> None:
    op.drop_index("ix_tasks_unclaimed_created_at", table_name="tasks")
    op.drop_index("ix_tasks_unclaimed", table_name="tasks")
