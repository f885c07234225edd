"""process documents keep their key order: plain JSON instead of JSONB on PostgreSQL

JSONB sorts object keys, which reorders a draft's nodes and flows. SQLite stores JSON text and
needs no change.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 08:00:00

"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

COLUMNS = [
    ("processes", "draft_document"),
    ("processes", "draft_problems"),
    ("process_versions", "document"),
]


def upgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE json USING {column}::json")


def downgrade():
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, column in COLUMNS:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE jsonb USING {column}::jsonb")
