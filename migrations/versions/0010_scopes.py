"""scopes: tokens form a tree (sub-processes, multi-instance), instances call child instances

`tokens.parent_id` is the token of the enclosing scope and `tokens.locals` a scope's own values
(a multi-instance element and counters). `instances.parent_*` link a called child to the call activity
(token, node and the token's step) that started it. Jobs may belong to an instance without a token (a
hand-over to a child or parent instance).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-03 18:00:00

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.add_column(sa.Column("parent_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("locals", JSONType, nullable=True))
        batch.create_foreign_key(
            "fk_tokens_parent_id_tokens", "tokens", ["parent_id"], ["id"], ondelete="CASCADE"
        )
        batch.create_index("ix_tokens_parent_id", ["parent_id"])
    with op.batch_alter_table("instances") as batch:
        batch.add_column(sa.Column("parent_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("parent_token_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("parent_node_id", sa.String(255), nullable=True))
        batch.add_column(sa.Column("parent_step", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("call_depth", sa.Integer(), nullable=False, server_default="0"))
        batch.create_foreign_key(
            "fk_instances_parent_id_instances",
            "instances",
            ["parent_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.create_index("ix_instances_parent_id", ["parent_id"])
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column("token_id", existing_type=sa.Integer(), nullable=True)


def downgrade() -> None:
    op.execute("DELETE FROM jobs WHERE token_id IS NULL")
    with op.batch_alter_table("jobs") as batch:
        batch.alter_column("token_id", existing_type=sa.Integer(), nullable=False)
    with op.batch_alter_table("instances") as batch:
        batch.drop_index("ix_instances_parent_id")
        batch.drop_constraint("fk_instances_parent_id_instances", type_="foreignkey")
        batch.drop_column("call_depth")
        batch.drop_column("parent_step")
        batch.drop_column("parent_node_id")
        batch.drop_column("parent_token_id")
        batch.drop_column("parent_id")
    with op.batch_alter_table("tokens") as batch:
        batch.drop_index("ix_tokens_parent_id")
        batch.drop_constraint("fk_tokens_parent_id_tokens", type_="foreignkey")
        batch.drop_column("locals")
        batch.drop_column("parent_id")
