"""the operator role may suspend, modify and migrate instances: permission `instances.modify`

Installations whose built-in `operator` role exists get the new permission on it; other roles
(custom ones included) are left as their admins made them. Admins hold every permission anyway.

Revision ID: 0019_instances_modify
Revises: 0018_job_wake_at
Create Date: 2026-12-06 10:10:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0019_instances_modify"
down_revision = "0018_job_wake_at"
branch_labels = None
depends_on = None

PERMISSION = "instances.modify"

roles = sa.table("roles", sa.column("id", sa.Integer), sa.column("name"))
grants = sa.table(
    "role_permissions", sa.column("role_id", sa.Integer), sa.column("permission", sa.String)
)


def upgrade() -> None:
    conn = op.get_bind()
    role_id = conn.execute(sa.select(roles.c.id).where(roles.c.name == "operator")).scalar()
    if role_id is None:
        return
    held = conn.execute(
        sa.select(grants.c.permission).where(
            grants.c.role_id == role_id, grants.c.permission == PERMISSION
        )
    ).first()
    if held is None:
        conn.execute(sa.insert(grants).values(role_id=role_id, permission=PERMISSION))


def downgrade() -> None:
    conn = op.get_bind()
    conn.execute(sa.delete(grants).where(grants.c.permission == PERMISSION))
