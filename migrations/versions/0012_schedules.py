"""schedules: timer start events of published processes, and the ticks they started

`schedules` holds one row per process-level timer start of a process's latest published version
(when it runs next, paused or not, its last run); `schedule_ticks` one row per tick that started
an instance, unique per (version, start node, tick) so that a tick starts exactly one instance
however many workers run.

Revision ID: 0012_schedules
Revises: 0011_signals
Create Date: 2026-12-03 20:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0012_schedules"
down_revision = "0011_signals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("process_id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.String(length=255), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("anchor_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("next_run_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("paused", sa.Boolean(), nullable=False),
        sa.Column("last_tick_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_instance_id", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.String(length=500), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["process_id"],
            ["processes.id"],
            name=op.f("fk_schedules_process_id_processes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["process_versions.id"],
            name=op.f("fk_schedules_version_id_process_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedules")),
        sa.UniqueConstraint("process_id", "node_id", name=op.f("uq_schedules_process_id")),
    )
    op.create_index(op.f("ix_schedules_version_id"), "schedules", ["version_id"], unique=False)
    op.create_index(
        "ix_schedules_paused_next_run_at", "schedules", ["paused", "next_run_at"], unique=False
    )
    op.create_table(
        "schedule_ticks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("node_id", sa.String(length=255), nullable=False),
        sa.Column("tick_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("instance_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["process_versions.id"],
            name=op.f("fk_schedule_ticks_version_id_process_versions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_schedule_ticks")),
        sa.UniqueConstraint(
            "version_id", "node_id", "tick_at", name=op.f("uq_schedule_ticks_version_id")
        ),
    )


def downgrade() -> None:
    op.drop_table("schedule_ticks")
    op.drop_index("ix_schedules_paused_next_run_at", table_name="schedules")
    op.drop_index(op.f("ix_schedules_version_id"), table_name="schedules")
    op.drop_table("schedules")
