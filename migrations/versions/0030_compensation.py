"""compensation: the completed activities a compensation throw may undo, with their data

Revision ID: 0030_compensation
Revises: 0029_decisions
Create Date: 2026-12-06 13:30:00

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0030_compensation"
down_revision = "0029_decisions"
branch_labels = None
depends_on = None

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "compensations",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column(
            "instance_id",
            sa.Integer(),
            sa.ForeignKey("instances.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("scope_token_id", sa.Integer(), nullable=True),
        sa.Column("scope_step", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("node_id", sa.String(255), nullable=False),
        sa.Column("token_id", sa.Integer(), nullable=True),
        sa.Column("token_step", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("data", JSONType, nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index(
        "ix_compensations_scope",
        "compensations",
        ["instance_id", "scope_token_id", "scope_step", "status"],
    )


def downgrade() -> None:
    op.drop_index("ix_compensations_scope", table_name="compensations")
    op.drop_table("compensations")
