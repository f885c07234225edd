"""the built-in roles exist after `db upgrade`, so the first admin can be created at once

Roles an installation already has keep their permissions; missing ones are added. The list is
frozen here as it was when this migration was written (webapp.permissions.BUILT_IN_ROLES).

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 15:00:00

"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

ROLES = {
    "admin": (["admin"], "Administers Flowdesk."),
    "designer": (
        ["processes.edit", "processes.publish", "instances.start", "instances.read"],
        "Models and publishes processes.",
    ),
    "operator": (
        ["instances.read", "instances.manage", "instances.start"],
        "Watches running instances and fixes incidents.",
    ),
    "clerk": (["tasks.work", "instances.start"], "Works tasks and starts requests."),
    "approver": (["tasks.work"], "Approves or rejects requests."),
}

roles = sa.table("roles", sa.column("id", sa.Integer), sa.column("name"), sa.column("description"))
grants = sa.table(
    "role_permissions", sa.column("role_id", sa.Integer), sa.column("permission", sa.String)
)


def upgrade():
    conn = op.get_bind()
    existing = set(conn.execute(sa.select(roles.c.name)).scalars())
    for name, (permissions, description) in ROLES.items():
        if name in existing:
            continue
        conn.execute(sa.insert(roles).values(name=name, description=description))
        role_id = conn.execute(sa.select(roles.c.id).where(roles.c.name == name)).scalar_one()
        conn.execute(
            sa.insert(grants), [{"role_id": role_id, "permission": p} for p in permissions]
        )


def downgrade():
    """Built-in roles stay: users may hold them, and removing them would take away access."""
