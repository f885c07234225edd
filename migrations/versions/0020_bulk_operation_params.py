"""bulk operations keep their action's own settings: `bulk_operations.params`

Cancel and retry need none; actions that do (such as migrating to a version with a mapping) keep
them with the operation, so a worker that resumes it applies the same settings.

Revision ID: 0020_bulk_operation_params
Revises: 0019_instances_modify
Create Date: 2026-12-06 10:25:00

"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0020_bulk_operation_params"
down_revision = "0019_instances_modify"
branch_labels = None
depends_on = None

JSONType = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("bulk_operations") as batch:
        batch.add_column(sa.Column("params", JSONType, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("bulk_operations") as batch:
        batch.drop_column("params")
