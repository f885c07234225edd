"""Demo data: users, roles and partitions a newcomer can sign in with. Safe to run repeatedly."""

from __future__ import annotations

from webapp.extensions import db
from webapp.permissions import BUILT_IN_ROLES as ROLES
from webapp.services import accounts

DEMO_PASSWORD = "flowdesk-demo"  # noqa: S105 - documented demo password

PARTITIONS = {"finance": "Finance", "hr": "Human resources"}

USERS = {
    "admin": ("Ada Admin", ["admin"], []),
    "designer": ("Dana Designer", ["designer"], ["finance", "hr"]),
    "operator": ("Omar Operator", ["operator"], ["finance", "hr"]),
    "alice": ("Alice Clerk", ["clerk"], ["finance"]),
    "bob": ("Bob Approver", ["approver", "clerk"], ["finance"]),
}


def seed_demo() -> dict[str, int]:
    """Create or reset the demo roles, partitions and users; returns how many of each exist."""
    roles = {name: accounts.ensure_role(name, perms, text) for name, (perms, text) in ROLES.items()}
    partitions = {key: accounts.ensure_partition(key, name) for key, name in PARTITIONS.items()}
    db.session.flush()
    for username, (display, role_names, partition_keys) in USERS.items():
        user = accounts.find_user(username)
        if user is None:
            user = accounts.create_user(
                username, DEMO_PASSWORD, display_name=display, email=f"{username}@example.org"
            )
        user.display_name = display
        user.active = True
        user.set_password(DEMO_PASSWORD)
        user.roles = [roles[name] for name in role_names]
        user.partitions = [partitions[key] for key in partition_keys]
    db.session.commit()
    return {"roles": len(roles), "partitions": len(partitions), "users": len(USERS)}
