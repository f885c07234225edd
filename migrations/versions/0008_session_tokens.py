"""sign-ins as rows (user_sessions), throttling by last failure

Each sign-in gets a random token kept (hashed) in user_sessions; deleting a user's rows ends
their sessions and remember-me cookies. login_failures counts from the last failure, so its
`first_at` becomes `last_at`; the rows are throttling state only and are dropped.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-03 15:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "user_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_user_sessions_token_hash")),
    )
    op.create_index(op.f("ix_user_sessions_user_id"), "user_sessions", ["user_id"], unique=False)
    op.execute("DELETE FROM login_failures")
    with op.batch_alter_table("login_failures") as batch_op:
        batch_op.alter_column("first_at", new_column_name="last_at")


def downgrade():
    op.execute("DELETE FROM login_failures")
    with op.batch_alter_table("login_failures") as batch_op:
        batch_op.alter_column("last_at", new_column_name="first_at")
    op.drop_index(op.f("ix_user_sessions_user_id"), table_name="user_sessions")
    op.drop_table("user_sessions")
