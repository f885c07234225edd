"""import reports: what the last file import of a process mapped, approximated, kept and left out

`processes.import_report` holds that summary (JSON) for the import report page; what still needs
a person is computed from the current draft each time the page is shown.

Revision ID: 0014_import_reports
Revises: 0013_task_offers
Create Date: 2026-12-04 10:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0014_import_reports"
down_revision = "0013_task_offers"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("processes") as batch:
        batch.add_column(sa.Column("import_report", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("processes") as batch:
        batch.drop_column("import_report")
