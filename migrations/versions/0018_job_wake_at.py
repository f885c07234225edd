"""jobs wait for their time in the database: `jobs.wake_at` and a partial index over it

A job due later (a timer, a boundary timer, a retry after its backoff) is no longer handed to
RQ's scheduler: it keeps `wake_at` (its due time) until a worker's clock claims it when due and
enqueues it. The partial index holds only those waiting jobs, so each clock tick reads the
earliest one off the index. Pending jobs due later when upgrading get theirs here (their copies
in RQ's scheduled registry are no longer moved by anything).

Revision ID: 0018_job_wake_at
Revises: 0017_inbox_search_trigrams
Create Date: 2026-12-06 07:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0018_job_wake_at"
down_revision = "0017_inbox_search_trigrams"
branch_labels = None
depends_on = None

WAITING = sa.text("wake_at IS NOT NULL")


def upgrade() -> None:
    with op.batch_alter_table("jobs") as batch:
        batch.add_column(sa.Column("wake_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_jobs_wake_at", "jobs", ["wake_at"], postgresql_where=WAITING, sqlite_where=WAITING
    )
    op.execute(
        "UPDATE jobs SET wake_at = due_at WHERE status = 'pending' AND due_at > CURRENT_TIMESTAMP"
    )


def downgrade() -> None:
    op.drop_index("ix_jobs_wake_at", table_name="jobs")
    with op.batch_alter_table("jobs") as batch:
        batch.drop_column("wake_at")
