"""conditions: a conditional event's subscription keeps whether its condition last held

Revision ID: 0031_conditions
Revises: 0030_compensation
Create Date: 2026-12-06 13:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0031_conditions"
down_revision = "0030_compensation"
branch_labels = None
depends_on = None


#: SQLite recreates the table: its ids must keep growing (AUTOINCREMENT), see 0015.
KEEP_IDS = {"sqlite_autoincrement": True}


def upgrade() -> None:
    with op.batch_alter_table("message_subscriptions", table_kwargs=KEEP_IDS) as batch:
        batch.alter_column(
            "kind", existing_type=sa.String(8), type_=sa.String(12), existing_nullable=False
        )
        batch.add_column(sa.Column("satisfied", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.execute("DELETE FROM message_subscriptions WHERE kind = 'condition'")
    with op.batch_alter_table("message_subscriptions", table_kwargs=KEEP_IDS) as batch:
        batch.drop_column("satisfied")
        batch.alter_column(
            "kind", existing_type=sa.String(12), type_=sa.String(8), existing_nullable=False
        )
