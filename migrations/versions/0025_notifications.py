"""notifications: rows to mail per (user, event), daily digests, preferences and defaults

Revision ID: 0025_notifications
Revises: 0024_webhooks
Create Date: 2026-12-06 12:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0025_notifications"
down_revision = "0024_webhooks"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str, ondelete: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    op.create_table(
        "notification_digests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("claim", sa.String(32), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        _fk("notification_digests", "user_id", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notification_digests")),
        sa.UniqueConstraint("user_id", "day", name=op.f("uq_notification_digests_user_id")),
    )
    op.create_table(
        "notifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=True),
        sa.Column("instance_id", sa.Integer(), nullable=True),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.String(200), nullable=True),
        sa.Column("digest_id", sa.Integer(), nullable=True),
        sa.Column("claim", sa.String(32), nullable=True),
        sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        _fk("notifications", "user_id", "users", "CASCADE"),
        _fk("notifications", "task_id", "tasks", "CASCADE"),
        _fk("notifications", "instance_id", "instances", "CASCADE"),
        _fk("notifications", "digest_id", "notification_digests", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
        sa.UniqueConstraint("key", name=op.f("uq_notifications_key")),
    )
    for column in ("user_id", "task_id", "instance_id", "digest_id"):
        op.create_index(op.f(f"ix_notifications_{column}"), "notifications", [column])
    op.create_index("ix_notifications_status_id", "notifications", ["status", "id"])
    op.create_table(
        "notification_preferences",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        _fk("notification_preferences", "user_id", "users", "CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "kind", name=op.f("pk_notification_preferences")),
    )
    op.create_table(
        "notification_defaults",
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("mode", sa.String(16), nullable=False),
        sa.PrimaryKeyConstraint("kind", name=op.f("pk_notification_defaults")),
    )


def downgrade() -> None:
    op.drop_table("notification_defaults")
    op.drop_table("notification_preferences")
    op.drop_index("ix_notifications_status_id", table_name="notifications")
    for column in ("digest_id", "instance_id", "task_id", "user_id"):
        op.drop_index(op.f(f"ix_notifications_{column}"), table_name="notifications")
    op.drop_table("notifications")
    op.drop_table("notification_digests")
