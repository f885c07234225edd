"""scenario coverage: the nodes and flows the scenarios last walked, kept with the draft

Revision ID: 0028_scenario_coverage
Revises: 0026_test_scenarios
Create Date: 2026-12-06 11:30:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0028_scenario_coverage"
down_revision = "0026_test_scenarios"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("processes") as batch:
        batch.add_column(sa.Column("scenario_coverage", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("processes") as batch:
        batch.drop_column("scenario_coverage")
